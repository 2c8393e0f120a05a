package io.tiffin.core.util;

import java.util.concurrent.TimeUnit;

/**
 * {@link Ticker#SYSTEM}: the wall clock's milliseconds when this class loaded, advanced from then by the
 * monotonic clock ({@link System#nanoTime()}). Its stamps start near the wall clock, as the master's
 * version and replica-id seeds need (they must exceed what a previous run handed out), and never jump when
 * the wall clock is set: leases and the windows of clients' cached locations are measured as intervals, and
 * a forward step of the wall clock would otherwise end them early.
 *
 * <p>Thread-safe (immutable).
 */
final class MonotonicWallClock implements Ticker {
    private final long wallAtStart = System.currentTimeMillis();
    private final long nanoAtStart = System.nanoTime();

    @Override
    public long millis() {
        return wallAtStart + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoAtStart);
    }
}
