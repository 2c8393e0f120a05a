package io.tiffin.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * The block reads of a Mooncake-format trace (JSON lines, one request per line, see
 * {@code shared/traces/README.md}): the {@code hash_ids} of every request, concatenated in file order.
 * Other fields are checked to be well-formed JSON and skipped; blank lines are ignored.
 *
 * <p>The parser is a small recursive-descent JSON reader that builds no objects for the fields it
 * skips, so a 100 MB trace parses without a JSON library. A malformed line fails with
 * {@link TraceFormatException} naming the source, the line and the column.
 *
 * <p>Immutable and thread-safe once read.
 */
public final class MooncakeTrace {
    private final long[] blocks;
    private final int requests;
    private final int distinctBlocks;

    private MooncakeTrace(long[] blocks, int requests) {
        this.blocks = blocks;
        this.requests = requests;
        Set<Long> distinct = new HashSet<>();
        for (long block : blocks) {
            distinct.add(block);
        }
        this.distinctBlocks = distinct.size();
    }

    /** Reads the trace in {@code file}. */
    public static MooncakeTrace read(Path file) {
        try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return read(reader, file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + file + ": " + e.getMessage(), e);
        }
    }

    /** Reads a trace from {@code reader}; {@code source} names it in error messages. */
    public static MooncakeTrace read(Reader reader, String source) {
        BufferedReader lines = reader instanceof BufferedReader b ? b : new BufferedReader(reader);
        long[] blocks = new long[1024];
        int size = 0;
        int requests = 0;
        int lineNumber = 0;
        try {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                long[] ids = new LineParser(line, source, lineNumber).hashIds();
                if (size + ids.length > blocks.length) {
                    blocks = Arrays.copyOf(blocks, Math.max(blocks.length * 2, size + ids.length));
                }
                System.arraycopy(ids, 0, blocks, size, ids.length);
                size += ids.length;
                requests++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read trace " + source + " at line " + (lineNumber + 1) + ": "
                    + e.getMessage(), e);
        }
        return new MooncakeTrace(Arrays.copyOf(blocks, size), requests);
    }

    /** The block ids in read order (a copy). */
    public long[] blocks() {
        return blocks.clone();
    }

    /** The number of block reads. */
    public int length() {
        return blocks.length;
    }

    /** The number of requests (non-blank lines). */
    public int requests() {
        return requests;
    }

    /** The number of distinct block ids. */
    public int distinctBlocks() {
        return distinctBlocks;
    }

    /** A malformed trace line; the message names the source, the line and the column. */
    public static final class TraceFormatException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final int line;

        TraceFormatException(String source, int line, int column, String message) {
            super(source + ":" + line + ":" + column + ": " + message);
            this.line = line;
        }

        /** The 1-based line number of the malformed line. */
        public int line() {
            return line;
        }
    }

    /** Parses one line: a JSON object whose {@code hash_ids} member is an array of integers. */
    private static final class LineParser {
        private final String text;
        private final String source;
        private final int line;
        private int pos;

        LineParser(String text, String source, int line) {
            this.text = text;
            this.source = source;
            this.line = line;
        }

        long[] hashIds() {
            long[] ids = null;
            skipSpace();
            expect('{');
            skipSpace();
            if (peek() != '}') {
                while (true) {
                    skipSpace();
                    String key = string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                    if (key.equals("hash_ids")) {
                        if (ids != null) {
                            throw error("duplicate \"hash_ids\"");
                        }
                        ids = integerArray();
                    } else {
                        skipValue();
                    }
                    skipSpace();
                    if (peek() == ',') {
                        pos++;
                        continue;
                    }
                    break;
                }
            }
            expect('}');
            skipSpace();
            if (pos < text.length()) {
                throw error("unexpected '" + text.charAt(pos) + "' after the object");
            }
            if (ids == null) {
                throw error("no \"hash_ids\" array (expected: a Mooncake trace line such as "
                        + "{\"timestamp\": 0, \"input_length\": 512, \"output_length\": 1, \"hash_ids\": [0]})");
            }
            return ids;
        }

        private long[] integerArray() {
            expect('[');
            long[] values = new long[16];
            int size = 0;
            skipSpace();
            if (peek() == ']') {
                pos++;
                return new long[0];
            }
            while (true) {
                skipSpace();
                int start = pos;
                if (peek() == '-') {
                    pos++;
                }
                while (pos < text.length() && Character.isDigit(text.charAt(pos))) {
                    pos++;
                }
                if (pos == start || (pos == start + 1 && text.charAt(start) == '-')) {
                    throw error("expected an integer block id in \"hash_ids\"" + found());
                }
                if (pos < text.length() && (text.charAt(pos) == '.' || text.charAt(pos) == 'e'
                        || text.charAt(pos) == 'E')) {
                    throw error("block id " + text.substring(start, pos) + "... is not an integer");
                }
                if (size == values.length) {
                    values = Arrays.copyOf(values, size * 2);
                }
                try {
                    values[size++] = Long.parseLong(text, start, pos, 10);
                } catch (NumberFormatException e) {
                    pos = start;
                    throw error("block id " + text.substring(start, Math.min(text.length(), start + 24))
                            + " does not fit in a long");
                }
                skipSpace();
                char next = peek();
                if (next == ',') {
                    pos++;
                } else if (next == ']') {
                    pos++;
                    return Arrays.copyOf(values, size);
                } else {
                    throw error("expected ',' or ']' in \"hash_ids\"" + found());
                }
            }
        }

        private void skipValue() {
            char c = peek();
            switch (c) {
                case '"' -> string();
                case '{' -> skipContainer('{', '}');
                case '[' -> skipContainer('[', ']');
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> number();
            }
        }

        private void skipContainer(char open, char close) {
            expect(open);
            skipSpace();
            if (peek() == close) {
                pos++;
                return;
            }
            while (true) {
                skipSpace();
                if (open == '{') {
                    string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                }
                skipValue();
                skipSpace();
                if (peek() == ',') {
                    pos++;
                } else {
                    expect(close);
                    return;
                }
            }
        }

        private void number() {
            int start = pos;
            while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
                pos++;
            }
            if (pos == start) {
                throw error("expected a JSON value" + found());
            }
            try {
                Double.parseDouble(text.substring(start, pos));
            } catch (NumberFormatException e) {
                pos = start;
                throw error("malformed number " + text.substring(start, Math.min(text.length(), start + 24)));
            }
        }

        private void literal(String word) {
            if (!text.startsWith(word, pos)) {
                throw error("expected a JSON value" + found());
            }
            pos += word.length();
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (pos < text.length()) {
                char c = text.charAt(pos++);
                if (c == '"') {
                    return out.toString();
                }
                if (c == '\\') {
                    if (pos >= text.length()) {
                        break;
                    }
                    char escaped = text.charAt(pos++);
                    if (escaped == 'u') {
                        if (pos + 4 > text.length()) {
                            break;
                        }
                        out.append((char) Integer.parseInt(text, pos, pos + 4, 16));
                        pos += 4;
                    } else {
                        out.append(escaped);
                    }
                } else {
                    out.append(c);
                }
            }
            throw error("unterminated string");
        }

        private void expect(char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'" + found());
            }
            pos++;
        }

        private char peek() {
            return pos < text.length() ? text.charAt(pos) : '\0';
        }

        private String found() {
            return pos < text.length() ? ", found '" + text.charAt(pos) + "'" : ", found the end of the line";
        }

        private void skipSpace() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        private TraceFormatException error(String message) {
            return new TraceFormatException(source, line, pos + 1, message);
        }
    }
}
