package io.tiffin.core.gateway;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits an inline command (one line of text, as typed into telnet) into arguments the way Redis does
 * ({@code sdssplitargs}): blanks separate arguments; {@code "double quotes"} allow blanks and the escapes
 * {@code \n \r \t \b \a \xHH} and {@code \<any>}; {@code 'single quotes'} allow blanks and {@code \'}; a
 * closing quote must be followed by a blank or the end of the line; a NUL byte ends the line.
 *
 * <p>Thread-safe (stateless).
 */
final class InlineSplitter {
    private InlineSplitter() {
    }

    /** The arguments of {@code line}, or null when its quotes are unbalanced. */
    static List<byte[]> split(byte[] line) {
        List<byte[]> out = new ArrayList<>();
        int p = 0;
        int n = line.length;
        while (true) {
            while (p < n && line[p] != 0 && isSpace(line[p])) {
                p++;
            }
            if (p >= n || line[p] == 0) {
                return out;
            }
            ByteArrayOutputStream current = new ByteArrayOutputStream();
            boolean inq = false;
            boolean insq = false;
            boolean done = false;
            while (!done) {
                int c = at(line, p);
                if (inq) {
                    if (c == '\\' && at(line, p + 1) == 'x' && isHex(at(line, p + 2)) && isHex(at(line, p + 3))) {
                        current.write(hex(at(line, p + 2)) * 16 + hex(at(line, p + 3)));
                        p += 3;
                    } else if (c == '\\' && at(line, p + 1) != 0) {
                        p++;
                        current.write(switch (at(line, p)) {
                            case 'n' -> '\n';
                            case 'r' -> '\r';
                            case 't' -> '\t';
                            case 'b' -> '\b';
                            case 'a' -> 7;
                            default -> at(line, p);
                        });
                    } else if (c == '"') {
                        if (at(line, p + 1) != 0 && !isSpace(at(line, p + 1))) {
                            return null;
                        }
                        done = true;
                    } else if (c == 0) {
                        return null;
                    } else {
                        current.write(c);
                    }
                } else if (insq) {
                    if (c == '\\' && at(line, p + 1) == '\'') {
                        p++;
                        current.write('\'');
                    } else if (c == '\'') {
                        if (at(line, p + 1) != 0 && !isSpace(at(line, p + 1))) {
                            return null;
                        }
                        done = true;
                    } else if (c == 0) {
                        return null;
                    } else {
                        current.write(c);
                    }
                } else {
                    switch (c) {
                        case ' ', '\n', '\r', '\t', 0 -> done = true;
                        case '"' -> inq = true;
                        case '\'' -> insq = true;
                        default -> current.write(c);
                    }
                }
                if (at(line, p) != 0) {
                    p++;
                }
            }
            out.add(current.toByteArray());
        }
    }

    /** The byte at {@code i} (unsigned), or 0 past the end, as C's NUL terminator. */
    private static int at(byte[] line, int i) {
        return i < line.length ? line[i] & 0xff : 0;
    }

    private static boolean isSpace(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == 0x0b || c == '\f' || c == '\r';
    }

    private static boolean isHex(int c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static int hex(int c) {
        return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    }
}
