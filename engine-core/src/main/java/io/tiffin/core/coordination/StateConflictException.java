package io.tiffin.core.coordination;

/**
 * A {@link StateStore} write lost its compare-and-set: another master wrote the cluster facts since this one read
 * them, so this one is no longer the leader.
 *
 * <p>Thread-safe (immutable).
 */
public final class StateConflictException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StateConflictException(String message) {
        super(message);
    }
}
