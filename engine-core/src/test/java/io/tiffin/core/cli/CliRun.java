package io.tiffin.core.cli;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Runs one {@code tiffin} command line in this JVM (no input, no environment) and keeps its exit code and output.
 *
 * <p>Thread-safe (stateless).
 */
final class CliRun {
    /** The outcome of one command line. */
    record Result(int exit, String out, String err) {
    }

    private CliRun() {
    }

    static Result tiffin(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TiffinCli.run(InputStream.nullInputStream(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
