package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.util.concurrent.TimeUnit;

/**
 * The client's one clock ({@link Ticker#nanos()}, injected through {@link TiffinClient.Options#ticker()}) and
 * the read-lease rule measured on it: a read that began at some moment (before its lookup was sent, so
 * before the master started the lease) must end within the lease the lookup granted.
 *
 * <p>The client's connection pools run on the same ticker, so a moment of this clock is a transport deadline
 * as it is.
 *
 * <p>Thread-safe (immutable; the ticker is thread-safe).
 */
final class LeaseClock {
    private final Ticker ticker;

    LeaseClock(Ticker ticker) {
        this.ticker = ticker;
    }

    Ticker ticker() {
        return ticker;
    }

    /** Now, in nanoseconds of the injected ticker. */
    long now() {
        return ticker.nanos();
    }

    /** Whether a read of {@code loc} that began at {@code startNanos} (before its lookup) is still within the lease. */
    boolean withinLease(ObjectLocation loc, long startNanos) {
        return now() - startNanos < TimeUnit.MILLISECONDS.toNanos(loc.leaseTtlMillis());
    }

    /**
     * Fails a read of {@code loc} begun at {@code startNanos} that outlived its lease.
     *
     * @throws TiffinException {@code LEASE_EXPIRED}, saying how long the read took
     */
    void checkLease(ObjectLocation loc, long startNanos) {
        long elapsedMs = TimeUnit.NANOSECONDS.toMillis(now() - startNanos);
        if (elapsedMs >= loc.leaseTtlMillis()) {
            throw new TiffinException(ErrorCode.LEASE_EXPIRED, loc.key() + ": the read took " + elapsedMs
                    + " ms but the lease lasted " + loc.leaseTtlMillis() + " ms; the bytes may have been evicted, retry");
        }
    }
}
