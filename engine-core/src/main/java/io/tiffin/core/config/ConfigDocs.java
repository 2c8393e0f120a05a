package io.tiffin.core.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * Generates the reference table of {@code docs/CONFIGURATION.md} from {@link TiffinConfigKeys}: one
 * row per key with its default, type and unit, environment variables and description. The table sits
 * between {@link #BEGIN} and {@link #END}; everything outside the markers is hand-written.
 *
 * <p>Regenerate the file with
 * {@code java -cp <engine-core classes and engine-api> io.tiffin.core.config.ConfigDocs docs/CONFIGURATION.md}.
 *
 * <p>Thread-safe (stateless).
 */
public final class ConfigDocs {
    public static final String BEGIN = "<!-- BEGIN GENERATED -->";
    public static final String END = "<!-- END GENERATED -->";

    private ConfigDocs() {
    }

    /** The generated Markdown table (without the markers), ending with a newline. */
    public static String table() {
        StringBuilder sb = new StringBuilder();
        sb.append("| Key | Default | Type | Environment variable | Description |\n");
        sb.append("|-----|---------|------|----------------------|-------------|\n");
        for (ConfigKey<?> k : TiffinConfigKeys.all()) {
            String def = k.defaultText().isEmpty() ? "(empty)" : code(k.defaultText());
            String env = TiffinConfigKeys.envNames(k).stream().map(ConfigDocs::code).collect(Collectors.joining("<br>"));
            sb.append("| ").append(code(k.name()))
                    .append(" | ").append(def)
                    .append(" | ").append(escape(typeText(k)))
                    .append(" | ").append(env)
                    .append(" | ").append(escape(k.description()))
                    .append(" |\n");
        }
        sb.append("\nKeys under ");
        sb.append(TiffinConfigKeys.OPEN_PREFIXES.stream().map(p -> code(p + "*")).collect(Collectors.joining(", ")));
        sb.append(" are passed to plugins: ").append(code("storage.<backend>.*")).append(" to the storage backend")
                .append(" (").append(code("path")).append(" comes from ").append(code("node.storage-path"))
                .append("), ").append(code("hotcache.policy.<policy>.*")).append(" to the hot-cache policy, ")
                .append(code("plugin.*")).append(" to the allocation strategy (its own keys are ")
                .append(code("plugin.<strategy>.*")).append("). A plugin that declares its keys has the rest")
                .append(" under its prefix refused at start-up, as unknown keys are; the built-in ones do.")
                .append(" The built-in plugins' keys are listed in docs/PLUGINS.md.\n");
        return sb.toString();
    }

    private static String typeText(ConfigKey<?> k) {
        String text = k.type();
        if (k.type().equals("duration")) {
            text += " (plain number = " + k.unit() + ")";
        } else if (!k.unit().isEmpty()) {
            text += " (" + k.unit() + ")";
        }
        if (!k.constraint().isEmpty()) {
            text += ", " + k.constraint();
        }
        return text;
    }

    private static String code(String s) {
        return "`" + s + "`";
    }

    private static String escape(String s) {
        return s.replace("|", "\\|");
    }

    /**
     * {@code document} with the part between the markers replaced by the current table.
     *
     * @throws IllegalArgumentException if the markers are missing or out of order
     */
    public static String render(String document) {
        int begin = document.indexOf(BEGIN);
        int end = document.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("document has no " + BEGIN + " ... " + END
                    + " section (expected: both markers, in this order)");
        }
        return document.substring(0, begin + BEGIN.length()) + "\n" + table() + document.substring(end);
    }

    /** The part of {@code document} between the markers, in the form {@link #render} writes it. */
    public static String generatedPart(String document) {
        int begin = document.indexOf(BEGIN);
        int end = document.indexOf(END);
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("document has no " + BEGIN + " ... " + END
                    + " section (expected: both markers, in this order)");
        }
        return document.substring(begin + BEGIN.length(), end);
    }

    /** Rewrites the generated part of the file given as the only argument. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ConfigDocs <path of docs/CONFIGURATION.md>");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        String doc = Files.readString(file, StandardCharsets.UTF_8);
        String updated = render(doc);
        if (!updated.equals(doc)) {
            Files.writeString(file, updated, StandardCharsets.UTF_8);
            System.out.println("updated " + file);
        } else {
            System.out.println(file + " is up to date");
        }
    }
}
