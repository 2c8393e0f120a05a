package io.tiffin.core.metrics;

/**
 * Writes JSON text for the admin endpoints: objects, arrays, strings (escaped), numbers and booleans,
 * with commas placed by the writer. Enough for machine-made documents; it does not check that calls
 * nest properly.
 *
 * <p>Not thread-safe: one document per instance.
 */
public final class JsonText {
    private final StringBuilder sb = new StringBuilder(4096);
    /** Whether the next value in the current container needs a comma before it. */
    private boolean comma;

    public JsonText beginObject() {
        separate();
        sb.append('{');
        comma = false;
        return this;
    }

    public JsonText endObject() {
        sb.append('}');
        comma = true;
        return this;
    }

    public JsonText beginArray() {
        separate();
        sb.append('[');
        comma = false;
        return this;
    }

    public JsonText endArray() {
        sb.append(']');
        comma = true;
        return this;
    }

    /** Writes {@code "name":}; the next call writes its value. */
    public JsonText name(String name) {
        separate();
        string(name);
        sb.append(':');
        comma = false;
        return this;
    }

    public JsonText value(String s) {
        separate();
        if (s == null) {
            sb.append("null");
        } else {
            string(s);
        }
        comma = true;
        return this;
    }

    public JsonText value(long n) {
        separate();
        sb.append(n);
        comma = true;
        return this;
    }

    /** A number; NaN and infinities (not JSON) become null. */
    public JsonText value(double d) {
        separate();
        sb.append(Double.isFinite(d) ? Double.toString(d) : "null");
        comma = true;
        return this;
    }

    public JsonText value(boolean b) {
        separate();
        sb.append(b);
        comma = true;
        return this;
    }

    public JsonText nullValue() {
        separate();
        sb.append("null");
        comma = true;
        return this;
    }

    public JsonText field(String name, String v) {
        return name(name).value(v);
    }

    public JsonText field(String name, long v) {
        return name(name).value(v);
    }

    public JsonText field(String name, double v) {
        return name(name).value(v);
    }

    public JsonText field(String name, boolean v) {
        return name(name).value(v);
    }

    private void separate() {
        if (comma) {
            sb.append(',');
            comma = false;
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
