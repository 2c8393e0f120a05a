package io.tiffin.core.config;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Parses and formats sizes in bytes.
 *
 * <p>Accepted forms: a plain number of bytes ({@code 1024}) or a number followed by a unit, with an
 * optional space between them ({@code 16MiB}, {@code 16 MB}, {@code 1.5GiB}). Units are
 * case-insensitive and <b>all 1024-based</b>, as in Mooncake Store's configuration parser, so that
 * values written for Mooncake mean the same here: {@code b}; {@code k}, {@code kb}, {@code kib};
 * {@code m}, {@code mb}, {@code mib}; {@code g}, {@code gb}, {@code gib}; {@code t}, {@code tb},
 * {@code tib}. There are no 1000-based units. Decimals are allowed; the result is rounded to the
 * nearest byte. Negative sizes and sizes above {@link Long#MAX_VALUE} are rejected.
 *
 * <p>Thread-safe (stateless).
 */
public final class Sizes {
    public static final long KIB = 1L << 10;
    public static final long MIB = 1L << 20;
    public static final long GIB = 1L << 30;
    public static final long TIB = 1L << 40;

    private Sizes() {
    }

    /**
     * Parses {@code text} as a size in bytes.
     *
     * @throws IllegalArgumentException if the text is not a size or is negative or too large; the
     *     message says what was expected
     */
    public static long parse(String text) {
        NumberWithUnit parts = NumberWithUnit.split(text);
        String number = parts.number();
        String unit = parts.unit();
        if (parts.lacksNumber()) {
            throw new IllegalArgumentException(
                    "\"" + text + "\" is not a size (expected: a number of bytes with an optional unit, e.g. 16MiB)");
        }
        long multiplier = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kb", "kib" -> KIB;
            case "m", "mb", "mib" -> MIB;
            case "g", "gb", "gib" -> GIB;
            case "t", "tb", "tib" -> TIB;
            default -> throw new IllegalArgumentException("\"" + text + "\" has an unknown size unit \"" + unit
                    + "\" (expected: B, KiB, MiB, GiB or TiB; KB, MB, GB, TB and k, m, g, t are 1024-based too)");
        };
        BigDecimal value;
        try {
            value = new BigDecimal(number);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("\"" + text + "\" is not a size (expected: a number, e.g. 1.5GiB)", e);
        }
        BigDecimal bytes = value.multiply(BigDecimal.valueOf(multiplier)).setScale(0, RoundingMode.HALF_UP);
        if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("\"" + text + "\" is too large (expected: at most 8388607TiB)");
        }
        return bytes.longValueExact();
    }

    /**
     * Formats {@code bytes} with the largest binary unit that divides it exactly, e.g. {@code 16MiB},
     * {@code 1536KiB} or {@code 1000} (plain bytes).
     */
    public static String format(long bytes) {
        if (bytes != 0) {
            if (bytes % TIB == 0) {
                return bytes / TIB + "TiB";
            }
            if (bytes % GIB == 0) {
                return bytes / GIB + "GiB";
            }
            if (bytes % MIB == 0) {
                return bytes / MIB + "MiB";
            }
            if (bytes % KIB == 0) {
                return bytes / KIB + "KiB";
            }
        }
        return Long.toString(bytes);
    }
}
