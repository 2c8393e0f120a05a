package io.tiffin.core.plugin;

import java.util.Objects;

/**
 * One loaded plugin, for listings and messages.
 *
 * <p>Thread-safe (immutable).
 *
 * @param name the plugin's {@link io.tiffin.api.spi.TiffinPlugin#name()}
 * @param className the provider class
 * @param source where it was loaded from: {@code class path (<location>)} or {@code folder <path>}
 */
public record PluginInfo(String name, String className, String source) {
    public PluginInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(className, "className");
        Objects.requireNonNull(source, "source");
    }

    @Override
    public String toString() {
        return name + " (" + className + ", " + source + ")";
    }
}
