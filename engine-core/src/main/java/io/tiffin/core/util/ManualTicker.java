package io.tiffin.core.util;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when told; for tests and simulations. Its {@link #nanos()} are its
 * milliseconds in nanoseconds, so deadlines measured in nanoseconds pass when the test advances it.
 *
 * <p>Thread-safe.
 */
public final class ManualTicker implements Ticker {
    private final AtomicLong now;

    public ManualTicker(long startMillis) {
        this.now = new AtomicLong(startMillis);
    }

    public ManualTicker() {
        this(1_000_000L);
    }

    @Override
    public long millis() {
        return now.get();
    }

    @Override
    public long nanos() {
        return TimeUnit.MILLISECONDS.toNanos(now.get());
    }

    public void advance(Duration d) {
        now.addAndGet(d.toMillis());
    }

    public void advanceMillis(long ms) {
        now.addAndGet(ms);
    }
}
