package io.tiffin.core.util;

/**
 * Text of a request as error messages show it: a key (or any argument) of more than {@value #LIMIT} chars is cut to
 * its first {@value #KEPT} and its length, so that a refused 100 KB key gives a message of a line, not of 100 KB.
 *
 * <p>Thread-safe (stateless).
 */
public final class Shown {
    private static final int LIMIT = 160;
    private static final int KEPT = 128;

    private Shown() {
    }

    /** {@code text} as a message shows it; null as "null". */
    public static String key(String text) {
        if (text == null) {
            return "null";
        }
        return text.length() <= LIMIT ? text : text.substring(0, KEPT) + "... (" + text.length() + " chars)";
    }
}
