package io.tiffin.core.client;

/**
 * When {@link TiffinClient#expire(String, long, ExpireCondition)} sets a deadline (Redis's EXPIRE options), checked
 * by the master with the key locked, so no other change of the key's deadline comes between the check and the set.
 *
 * <p>Thread-safe (an enum).
 */
public enum ExpireCondition {
    /** Always. */
    ALWAYS(0),
    /** Only if the object has no deadline (NX). */
    IF_NONE(1),
    /** Only if it has one (XX). */
    IF_SET(2),
    /** Only if the new deadline is later than the current one; an object without one is never set (GT). */
    IF_LATER(3),
    /** Only if the new deadline is earlier than the current one, or it has none (LT). */
    IF_SOONER(4),
    /** Only if it has one and the new deadline is earlier (XX LT). */
    IF_SET_AND_SOONER(5);

    /** The number the EXPIRE request carries ({@code ExpireRequest.condition}). */
    final int wire;

    ExpireCondition(int wire) {
        this.wire = wire;
    }
}
