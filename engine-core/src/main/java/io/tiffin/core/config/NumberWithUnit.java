package io.tiffin.core.config;

import java.util.Locale;

/**
 * A config value split into its leading number and its unit, as {@link Sizes} and {@link Durations} read
 * them: {@code "16 MiB"} → ("16", "mib"). Immutable, thread-safe.
 *
 * @param number the digits (and decimal point) at the start; empty when there are none
 * @param unit the rest, stripped and lower-cased; empty when there is none
 */
record NumberWithUnit(String number, String unit) {

    static NumberWithUnit split(String text) {
        String s = text.strip();
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        return new NumberWithUnit(s.substring(0, i), s.substring(i).strip().toLowerCase(Locale.ROOT));
    }

    /** Whether there is no number to read. */
    boolean lacksNumber() {
        return number.isEmpty() || number.equals(".");
    }
}
