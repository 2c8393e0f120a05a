package io.tiffin.core.master;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Collects, over one removal call, the latest instant (master ms) until which a client may still read
 * a force-removed object through a location it cached ({@link ObjectMetadata#cachedUntilMillis}). The
 * caller reports the removal only after it ({@link MasterService#millisUntil}), so a get that starts after
 * the removal returned finds nothing, cached or not; until then puts of the key are refused with
 * OBJECT_HAS_LEASE.
 *
 * <p>Thread-safe.
 */
public final class CacheHold {
    private final AtomicLong untilMillis = new AtomicLong();
    private final long owner;

    /** For a removal by an unknown client: every cache's locations are waited for. */
    public CacheHold() {
        this(0);
    }

    /**
     * For a removal by the client whose location cache is {@code owner} (> 0; 0 = unknown): objects only
     * that cache holds are not waited for, since the client drops its own entries around the removal.
     */
    public CacheHold(long owner) {
        this.owner = owner;
    }

    /** The remover's location cache (> 0), or 0 when unknown. */
    long owner() {
        return owner;
    }

    /** The removal may be reported no earlier than {@code until} (master ms). */
    void cover(long until) {
        untilMillis.accumulateAndGet(until, Math::max);
    }

    /** The instant (master ms) to wait for; 0 = none. */
    public long untilMillis() {
        return untilMillis.get();
    }
}
