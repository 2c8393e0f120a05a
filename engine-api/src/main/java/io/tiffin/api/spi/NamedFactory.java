package io.tiffin.api.spi;

/**
 * A factory that configuration selects by name.
 *
 * <p>Implementations must be thread-safe: the host may create instances from any thread.
 */
public interface NamedFactory {
    /**
     * The name configuration uses to select this factory, for example {@code random}. Lower case,
     * words separated by '-'. Unique per extension point across all installed plugins.
     */
    String name();
}
