package io.tiffin.core.util;

/**
 * A source of milliseconds (near the wall clock, never stepping back) and of nanoseconds for measuring
 * intervals, injected wherever time matters so that tests move a manual clock instead of sleeping.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface Ticker {
    /** The wall clock at start, advanced by the monotonic clock ({@link MonotonicWallClock}). */
    Ticker SYSTEM = new MonotonicWallClock();

    long millis();

    /**
     * Nanoseconds for measuring intervals (as {@link System#nanoTime()}: only differences mean anything);
     * by default {@link System#nanoTime()}.
     */
    default long nanos() {
        return System.nanoTime();
    }
}
