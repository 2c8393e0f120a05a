package io.tiffin.core.gateway;

/**
 * Integers in command arguments, read as Redis reads them ({@code string2ll}: an optional '-', digits, no
 * leading zero, no blanks, no overflow), with Redis's error when they are not.
 *
 * <p>Thread-safe (stateless).
 */
final class Numbers {
    private Numbers() {
    }

    /** The integer, or {@code ERR value is not an integer or out of range}. */
    static long parseLong(String s) {
        return parseLongOr(s, "value is not an integer or out of range");
    }

    /** The integer, or {@code ERR <message>}. */
    static long parseLongOr(String s, String message) {
        Long v = tryParse(s);
        if (v == null) {
            throw RespError.err(message);
        }
        return v;
    }

    /** The integer, or null. */
    static Long tryParse(String s) {
        int n = s.length();
        if (n == 0 || n > 20) {
            return null;
        }
        int i = 0;
        boolean negative = s.charAt(0) == '-';
        if (negative && ++i == n) {
            return null;
        }
        if (s.charAt(i) == '0' && (n - i > 1 || negative)) {
            return n == 1 ? 0L : null;
        }
        long v = 0;
        for (; i < n; i++) {
            int d = s.charAt(i) - '0';
            if (d < 0 || d > 9) {
                return null;
            }
            if (v > (Long.MAX_VALUE - d) / 10) {
                // Long.MIN_VALUE is a valid integer, one more than the largest positive one
                if (negative && i == n - 1 && v == Long.MAX_VALUE / 10 && d == 8) {
                    return Long.MIN_VALUE;
                }
                return null;
            }
            v = v * 10 + d;
        }
        return negative ? -v : v;
    }
}
