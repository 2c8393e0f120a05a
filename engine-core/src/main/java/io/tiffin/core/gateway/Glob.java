package io.tiffin.core.gateway;

/**
 * A Redis glob pattern (KEYS, SCAN MATCH, CONFIG GET): {@code *}, {@code ?}, {@code [abc]}, {@code [^a-z]}
 * and {@code \x}, matched as Redis's {@code stringmatchlen} does (on the key's characters), plus the
 * literal prefix every match starts with, which lets a listing use the master's prefix index.
 *
 * <p>Thread-safe (immutable).
 */
final class Glob {
    private static final Glob ALL = new Glob("*");

    private final String pattern;
    private final boolean nocase;
    private final String prefix;

    private Glob(String pattern) {
        this(pattern, false);
    }

    private Glob(String pattern, boolean nocase) {
        this.pattern = pattern;
        this.nocase = nocase;
        this.prefix = nocase ? "" : literalPrefix(pattern);
    }

    static Glob of(String pattern) {
        return pattern.equals("*") ? ALL : new Glob(pattern);
    }

    /** A pattern that ignores ASCII case (CONFIG GET). */
    static Glob ignoringCase(String pattern) {
        return new Glob(pattern, true);
    }

    static Glob all() {
        return ALL;
    }

    /** The characters every matching string starts with (empty when the pattern starts with a wildcard). */
    String prefix() {
        return prefix;
    }

    boolean matchesEverything() {
        return pattern.equals("*");
    }

    boolean matches(String s) {
        if (matchesEverything()) {
            return true;
        }
        return match(0, 0, s, new boolean[1], 0);
    }

    private static String literalPrefix(String p) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '*' || c == '?' || c == '[') {
                break;
            }
            if (c == '\\' && i + 1 < p.length()) {
                c = p.charAt(++i);
            }
            sb.append(c);
        }
        return sb.toString();
    }

    /** Port of Redis's {@code stringmatchlen_impl}. */
    private boolean match(int pi, int si, String s, boolean[] skipLonger, int nesting) {
        if (nesting > 1000) {
            return false;
        }
        int plen = pattern.length();
        int slen = s.length();
        while (pi < plen && si < slen) {
            char pc = pattern.charAt(pi);
            switch (pc) {
                case '*' -> {
                    while (pi + 1 < plen && pattern.charAt(pi + 1) == '*') {
                        pi++;
                    }
                    if (pi + 1 == plen) {
                        return true;
                    }
                    while (si < slen) {
                        if (match(pi + 1, si, s, skipLonger, nesting + 1)) {
                            return true;
                        }
                        if (skipLonger[0]) {
                            return false;
                        }
                        si++;
                    }
                    skipLonger[0] = true;
                    return false;
                }
                case '?' -> si++;
                case '[' -> {
                    pi++;
                    boolean not = pi < plen && pattern.charAt(pi) == '^';
                    if (not) {
                        pi++;
                    }
                    boolean matched = false;
                    char c = s.charAt(si);
                    while (true) {
                        if (pi < plen && pattern.charAt(pi) == '\\' && plen - pi >= 2) {
                            pi++;
                            if (eq(pattern.charAt(pi), c)) {
                                matched = true;
                            }
                        } else if (pi < plen && pattern.charAt(pi) == ']') {
                            break;
                        } else if (pi >= plen) {
                            pi--;
                            break;
                        } else if (plen - pi >= 3 && pattern.charAt(pi + 1) == '-') {
                            char start = pattern.charAt(pi);
                            char end = pattern.charAt(pi + 2);
                            if (start > end) {
                                char t = start;
                                start = end;
                                end = t;
                            }
                            char k = c;
                            if (nocase) {
                                start = Character.toLowerCase(start);
                                end = Character.toLowerCase(end);
                                k = Character.toLowerCase(k);
                            }
                            pi += 2;
                            if (k >= start && k <= end) {
                                matched = true;
                            }
                        } else if (eq(pattern.charAt(pi), c)) {
                            matched = true;
                        }
                        pi++;
                    }
                    if (not) {
                        matched = !matched;
                    }
                    if (!matched) {
                        return false;
                    }
                    si++;
                }
                default -> {
                    if (pc == '\\' && plen - pi >= 2) {
                        pi++;
                    }
                    if (!eq(pattern.charAt(pi), s.charAt(si))) {
                        return false;
                    }
                    si++;
                }
            }
            pi++;
            if (si == slen) {
                while (pi < plen && pattern.charAt(pi) == '*') {
                    pi++;
                }
                break;
            }
        }
        return pi == plen && si == slen;
    }

    private boolean eq(char a, char b) {
        return a == b || (nocase && Character.toLowerCase(a) == Character.toLowerCase(b));
    }

    @Override
    public String toString() {
        return pattern;
    }
}
