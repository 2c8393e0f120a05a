package io.tiffin.core.cli;

/**
 * A command that a jar on the class path adds to {@code tiffin}, found with {@link java.util.ServiceLoader}
 * (a {@code META-INF/services/io.tiffin.core.cli.CliExtension} entry). The engine ships the server and client
 * commands itself; {@code tiffin bench} comes from the {@code engine-bench} jar this way, so a deployment
 * without that jar simply has no {@code bench} command and the engine does not depend on the benchmarks.
 *
 * <p>Implementations must have a public no-argument constructor and be thread-safe; {@link #command()} is
 * called once per command line and must return a fresh picocli {@code @Command} object each time.
 */
public interface CliExtension {
    /**
     * A new instance of a picocli {@code @Command}-annotated class; its name must not clash with a built-in
     * command.
     */
    Object command();
}
