package io.tiffin.core.util;

/**
 * A source of wall-clock milliseconds, injected wherever time matters so that tests move a manual
 * clock instead of sleeping.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface Ticker {
    /** The system clock. */
    Ticker SYSTEM = System::currentTimeMillis;

    long millis();
}
