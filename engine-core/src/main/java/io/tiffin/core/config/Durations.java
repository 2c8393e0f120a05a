package io.tiffin.core.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * Parses and formats durations.
 *
 * <p>Accepted forms: a number followed by a unit, with an optional space ({@code 250ms}, {@code 10s},
 * {@code 5m}, {@code 1h}, {@code 2d}, {@code 1.5s}), or a plain number, which is read in the unit the
 * key states (for example milliseconds for {@code master.lease-ttl}, as in Mooncake). Units
 * ({@code us}, {@code ms}, {@code s}, {@code m}, {@code h}, {@code d}) are case-insensitive.
 * Decimals are allowed down to a whole nanosecond; negative durations are rejected.
 *
 * <p>Thread-safe (stateless).
 */
public final class Durations {
    private Durations() {
    }

    /**
     * Parses {@code text}; a plain number is read in {@code plainUnit}.
     *
     * @throws IllegalArgumentException if the text is not a non-negative duration
     */
    public static Duration parse(String text, ChronoUnit plainUnit) {
        NumberWithUnit parts = NumberWithUnit.split(text);
        String number = parts.number();
        String unit = parts.unit();
        if (parts.lacksNumber()) {
            throw new IllegalArgumentException(
                    "\"" + text + "\" is not a duration (expected: a number with a unit, e.g. 10s)");
        }
        long nanosPerUnit = switch (unit) {
            case "" -> plainUnit.getDuration().toNanos();
            case "ns" -> 1L;
            case "us" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m", "min" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            case "d" -> 86_400_000_000_000L;
            default -> throw new IllegalArgumentException("\"" + text + "\" has an unknown duration unit \"" + unit
                    + "\" (expected: ms, s, m, h or d, e.g. 250ms)");
        };
        BigDecimal nanos;
        try {
            nanos = new BigDecimal(number).multiply(BigDecimal.valueOf(nanosPerUnit));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + text + "\" is not a duration (expected: e.g. 10s)", e);
        }
        BigDecimal whole = nanos.setScale(0, RoundingMode.DOWN);
        if (whole.compareTo(nanos) != 0) {
            throw new IllegalArgumentException("\"" + text + "\" is finer than a nanosecond");
        }
        // Whatever uses a duration may take it in nanoseconds (Duration.toNanos, System.nanoTime deadlines)
        if (whole.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("\"" + text + "\" is too long (expected: at most 106751d,"
                    + " about 292 years)");
        }
        BigDecimal seconds = whole.divide(BigDecimal.valueOf(1_000_000_000L), 0, RoundingMode.DOWN);
        long secs = seconds.longValueExact();
        long rest = whole.subtract(seconds.multiply(BigDecimal.valueOf(1_000_000_000L))).longValueExact();
        return Duration.ofSeconds(secs, rest);
    }

    /**
     * Formats {@code duration} with the largest unit that divides it exactly, e.g. {@code 10s},
     * {@code 250ms}, {@code 30m}, {@code 2d}.
     */
    public static String format(Duration duration) {
        long nanos;
        try {
            nanos = duration.toNanos();
        } catch (ArithmeticException e) {
            return duration.toSeconds() + "s";
        }
        if (nanos == 0) {
            return "0ms";
        }
        long[] sizes = {86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
        String[] names = {"d", "h", "m", "s", "ms", "us"};
        for (int i = 0; i < sizes.length; i++) {
            if (nanos % sizes[i] == 0) {
                return nanos / sizes[i] + names[i];
            }
        }
        return nanos + "ns";
    }

    /** The suffix for a plain-number unit, e.g. {@code ms} for {@link ChronoUnit#MILLIS}. */
    static String suffix(ChronoUnit unit) {
        return switch (unit) {
            case NANOS -> "ns";
            case MICROS -> "us";
            case MILLIS -> "ms";
            case SECONDS -> "s";
            case MINUTES -> "m";
            case HOURS -> "h";
            case DAYS -> "d";
            default -> throw new IllegalArgumentException("unsupported plain unit " + unit);
        };
    }
}
