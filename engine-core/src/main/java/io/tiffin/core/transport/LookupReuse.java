package io.tiffin.core.transport;

/**
 * The protocol's bound on reusing a lookup's answer, which clients and the master both apply: a client
 * reuses a location it looked up for at most {@link #MAX_MILLIS} (and at most half the read lease), and the
 * master, which holds a forced removal of a cached object until that reuse has ended, assumes no longer.
 * It must stay well inside a client's RPC timeout, since a held removal answers only after the window.
 *
 * <p>Thread-safe (constants).
 */
public final class LookupReuse {
    /** The longest any lookup's answer is reused, whatever the TTL and lease. */
    public static final long MAX_MILLIS = 20_000;

    private LookupReuse() {
    }
}
