package io.tiffin.core.cli;

import java.util.Locale;

/**
 * Formats numbers for people: sizes with one decimal and a binary unit ({@code 1.0 GiB},
 * {@code 512 B}) and percentages. {@link io.tiffin.core.config.Sizes#format} is exact (for
 * configuration values); this is rounded, for reading at a glance.
 *
 * <p>Thread-safe (stateless).
 */
final class Human {
    private static final String[] UNITS = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private Human() {
    }

    /** {@code bytes} as e.g. {@code 0 B}, {@code 1023 B}, {@code 1.5 KiB}, {@code 64.0 MiB}. */
    static String bytes(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        double v = bytes;
        int unit = -1;
        while (v >= 1024 && unit < UNITS.length - 1) {
            v /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, UNITS[unit]);
    }

    /** {@code part / whole} as e.g. {@code 12.5%}; {@code 0.0%} when {@code whole} is 0. */
    static String percent(long part, long whole) {
        return String.format(Locale.ROOT, "%.1f%%", whole == 0 ? 0.0 : 100.0 * part / whole);
    }
}
