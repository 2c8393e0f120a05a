package io.tiffin.api.spi;

import java.util.Optional;
import java.util.Set;

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

    /**
     * The configuration keys this factory reads, each without its prefix: {@code storage.<name>.} for a
     * storage backend, {@code hotcache.policy.<name>.} for a hot-cache policy, {@code plugin.<name>.} for
     * an allocation strategy. Empty (the default) when the factory does not declare them.
     *
     * <p>When they are declared the host checks the configuration before it creates an instance: a key
     * under the prefix that is not declared stops start-up with an error naming the key, the nearest
     * declared one and the plugin, as Tiffin's own unknown keys do. The factory still checks the values.
     * Undeclared, every key under the prefix reaches the factory, which should reject those it does not
     * know. Keys the host supplies itself (a storage backend's {@code path}) are not configuration keys
     * and are not listed.
     *
     * @return the keys, lower case, words separated by '-'; or empty
     */
    default Optional<Set<String>> configKeys() {
        return Optional.empty();
    }
}
