package io.tiffin.core.keys;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;

/**
 * A compiled key query: a user's RE2 pattern, plus the shape the master can answer without running the
 * regex engine over every key.
 *
 * <ul>
 *   <li>{@link Kind#PREFIX}: {@code ^literal}, optionally followed by {@code .*} and/or {@code $} after
 *       the {@code .*} — answered from the ordered key index in O(log n + matches).</li>
 *   <li>{@link Kind#EXACT}: {@code ^literal$} — one hash lookup.</li>
 *   <li>{@link Kind#CONTAINS}: a plain literal without anchors — a substring test on every key,
 *       without the regex engine (still a scan: a substring cannot be found from an ordered index).</li>
 *   <li>{@link Kind#REGEX}: anything else — RE2/J {@code find()} on every key (linear time per key).</li>
 * </ul>
 * Literals may contain RE2 escapes of punctuation ({@code \.}, {@code \/}, …). The pattern is always
 * compiled with RE2/J first, so an invalid pattern is rejected the same way on every path.
 *
 * <p>Thread-safe (immutable).
 */
public final class KeyQuery {
    /** Longest pattern accepted. */
    public static final int MAX_LENGTH = 4096;

    /** How the query is answered. */
    public enum Kind { PREFIX, EXACT, CONTAINS, REGEX }

    private final String regex;
    private final Pattern pattern;
    private final Kind kind;
    private final String literal;
    /** For {@code ^lit.*$}: '.' does not match a newline, so the rest of the key must have none. */
    private final boolean restWithoutNewline;

    private KeyQuery(String regex, Pattern pattern, Kind kind, String literal) {
        this(regex, pattern, kind, literal, false);
    }

    private KeyQuery(String regex, Pattern pattern, Kind kind, String literal, boolean restWithoutNewline) {
        this.regex = regex;
        this.pattern = pattern;
        this.kind = kind;
        this.literal = literal;
        this.restWithoutNewline = restWithoutNewline;
    }

    /** Compiles a pattern; throws {@link TiffinException} INVALID_PARAMS for an empty, huge or invalid one. */
    public static KeyQuery compile(String regex) {
        if (regex == null || regex.isEmpty()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "regex is empty (expected: an RE2 pattern, e.g. ^tenant_1/)");
        }
        if (regex.length() > MAX_LENGTH) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "regex is " + regex.length() + " characters (expected: at most " + MAX_LENGTH + ")");
        }
        Pattern p;
        try {
            p = Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "invalid regex " + regex + ": " + e.getDescription() + " (expected: RE2 syntax)", e);
        }
        return classify(regex, p);
    }

    private static KeyQuery classify(String regex, Pattern p) {
        boolean anchored = regex.startsWith("^");
        int i = anchored ? 1 : 0;
        StringBuilder lit = new StringBuilder();
        int n = regex.length();
        while (i < n) {
            char c = regex.charAt(i);
            if (c == '\\') {
                if (i + 1 >= n) {
                    return new KeyQuery(regex, p, Kind.REGEX, null);
                }
                char e = regex.charAt(i + 1);
                if (isEscapableLiteral(e)) {
                    lit.append(e);
                    i += 2;
                    continue;
                }
                return new KeyQuery(regex, p, Kind.REGEX, null);
            }
            if (isMeta(c)) {
                break;
            }
            lit.append(c);
            i++;
        }
        String rest = regex.substring(i);
        String literal = lit.toString();
        if (anchored) {
            if (rest.isEmpty() || rest.equals(".*")) {
                return new KeyQuery(regex, p, Kind.PREFIX, literal);
            }
            if (rest.equals(".*$")) {
                return new KeyQuery(regex, p, Kind.PREFIX, literal, true);
            }
            if (rest.equals("$")) {
                return new KeyQuery(regex, p, Kind.EXACT, literal);
            }
        } else if (rest.isEmpty() && !literal.isEmpty()) {
            return new KeyQuery(regex, p, Kind.CONTAINS, literal);
        }
        return new KeyQuery(regex, p, Kind.REGEX, null);
    }

    private static boolean isMeta(char c) {
        return switch (c) {
            case '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '^', '$', '\\' -> true;
            default -> false;
        };
    }

    /** Characters that RE2 reads literally after a backslash: punctuation only (not \d, \w, \b, …). */
    private static boolean isEscapableLiteral(char c) {
        return c < 128 && !Character.isLetterOrDigit(c) && c != '_' && c > ' ';
    }

    public Kind kind() {
        return kind;
    }

    /** The literal of a PREFIX, EXACT or CONTAINS query; null for REGEX. */
    public String literal() {
        return literal;
    }

    public String regex() {
        return regex;
    }

    /** Whether {@code key} matches, with the semantics of RE2 {@code find()} on the original pattern. */
    public boolean matches(String key) {
        return switch (kind) {
            case PREFIX -> key.startsWith(literal)
                    && (!restWithoutNewline || key.indexOf('\n', literal.length()) < 0);
            case EXACT -> key.equals(literal);
            case CONTAINS -> key.contains(literal);
            case REGEX -> pattern.matcher(key).find();
        };
    }

    /** Always the regex engine: the reference the fast paths are checked against. */
    public boolean matchesWithRegexEngine(String key) {
        return pattern.matcher(key).find();
    }
}
