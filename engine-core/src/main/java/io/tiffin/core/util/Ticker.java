package io.tiffin.core.util;

/**
 * A source of milliseconds (near the wall clock, never stepping back), injected wherever time matters so that tests move a manual
 * clock instead of sleeping.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface Ticker {
    /** The wall clock at start, advanced by the monotonic clock ({@link MonotonicWallClock}). */
    Ticker SYSTEM = new MonotonicWallClock();

    long millis();

    /**
     * A monotonic nanosecond count for measuring intervals and deadlines (only differences mean
     * anything, as with {@link System#nanoTime()}); {@link ManualTicker} moves it with its milliseconds.
     */
    default long nanos() {
        return System.nanoTime();
    }
}
