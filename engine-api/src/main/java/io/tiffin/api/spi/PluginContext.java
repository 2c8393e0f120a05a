package io.tiffin.api.spi;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * What the host passes to a factory when it creates a plugin instance: configuration keys with their
 * prefix removed, and a few helpers. Which keys: a storage backend gets {@code storage.<its name>.*}
 * (plus {@code path} = {@code node.storage-path}); an allocation strategy gets all of {@code plugin.*}
 * (by convention its own keys are {@code plugin.<its name>.*}); a hot-cache policy gets none. Keys are
 * not validated by the host: a plugin should reject keys it does not know.
 *
 * <p>Thread-safe (immutable).
 *
 * @param properties the plugin's configuration, prefix removed; unknown keys are the plugin's to
 *     reject
 * @param nodeId id of the process creating the instance
 */
public record PluginContext(Map<String, String> properties, String nodeId) {
    public PluginContext {
        properties = Map.copyOf(properties);
    }

    public static PluginContext empty() {
        return new PluginContext(Map.of(), "local");
    }

    public Optional<String> get(String key) {
        return Optional.ofNullable(properties.get(key));
    }

    public long getLong(String key, long defaultValue) {
        String v = properties.get(key);
        if (v == null) {
            return defaultValue;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: an integer)", e);
        }
    }

    public double getDouble(String key, double defaultValue) {
        String v = properties.get(key);
        if (v == null) {
            return defaultValue;
        }
        try {
            return Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a number)", e);
        }
    }

    public Duration getDuration(String key, Duration defaultValue) {
        String v = properties.get(key);
        return v == null ? defaultValue : Duration.ofMillis(getLong(key, 0));
    }
}
