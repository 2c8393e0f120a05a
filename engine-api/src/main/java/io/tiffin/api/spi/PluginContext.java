package io.tiffin.api.spi;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * What the host passes to a factory when it creates a plugin instance: configuration keys with their
 * prefix removed, and a few helpers. Which keys: a storage backend gets {@code storage.<its name>.*}
 * (plus {@code path} = {@code node.storage-path}); an allocation strategy gets all of {@code plugin.*}
 * (by convention its own keys are {@code plugin.<its name>.*}); a hot-cache policy gets
 * {@code hotcache.policy.<its name>.*}. A factory that declares its keys
 * ({@link NamedFactory#configKeys()}) gets only declared ones under its own prefix: the host refuses to
 * start on any other. A factory that declares none gets them unchecked and should reject keys it does not
 * know.
 *
 * <p>Thread-safe (immutable).
 *
 * @param properties the plugin's configuration, prefix removed
 * @param nodeId id of the process creating the instance
 */
public record PluginContext(Map<String, String> properties, String nodeId) {
    public PluginContext {
        properties = Map.copyOf(properties);
    }

    public static PluginContext empty() {
        return new PluginContext(Map.of(), "local");
    }

    /** The raw value of {@code key} (prefix removed), if set. */
    public Optional<String> get(String key) {
        return Optional.ofNullable(properties.get(key));
    }

    /**
     * {@code key} as an integer, or {@code defaultValue} when unset.
     *
     * @throws IllegalArgumentException naming the key and value when it is not an integer
     */
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

    /**
     * {@code key} as a decimal number, or {@code defaultValue} when unset.
     *
     * @throws IllegalArgumentException naming the key and value when it is not a number
     */
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

    /**
     * {@code key} as a duration, or {@code defaultValue} when unset: a number with a unit ({@code ns},
     * {@code us}, {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}; decimals allowed, e.g.
     * {@code 1.5s}) as in Tiffin's own configuration, or a plain number of milliseconds.
     *
     * @throws IllegalArgumentException naming the key and value when it is not a duration &gt;= 0
     */
    public Duration getDuration(String key, Duration defaultValue) {
        String v = properties.get(key);
        if (v == null) {
            return defaultValue;
        }
        java.util.regex.Matcher m = DURATION.matcher(v.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a duration such as 500ms, 10s or 5m;"
                    + " a plain number is milliseconds)");
        }
        long nanosPerUnit = switch (m.group(2).toLowerCase(java.util.Locale.ROOT)) {
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "", "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m", "min" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> 86_400_000_000_000L; // d
        };
        try {
            return Duration.ofNanos(new java.math.BigDecimal(m.group(1)).multiply(java.math.BigDecimal.valueOf(nanosPerUnit))
                    .setScale(0, java.math.RoundingMode.HALF_UP).longValueExact());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a duration of at most 106751d)", e);
        }
    }

    private static final java.util.regex.Pattern DURATION = java.util.regex.Pattern.compile(
            "(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|min|h|d|)", java.util.regex.Pattern.CASE_INSENSITIVE);
}
