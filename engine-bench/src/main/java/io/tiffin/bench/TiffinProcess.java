package io.tiffin.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One {@code tiffin} server process (master, node) started by a bench: from the distribution's {@code
 * bin/tiffin} when this JVM runs from one ({@code tiffin.home}), else as {@code java -cp <this class path>
 * io.tiffin.core.cli.TiffinCli} (tests), its output in a file. Killed and paused with real signals: {@code kill -9}
 * ({@link #kill9}), {@code SIGSTOP} / {@code SIGCONT}.
 *
 * <p>Thread-safe: the process handle is the JDK's; {@link #close()} kills the process if it still runs.
 */
final class TiffinProcess implements AutoCloseable {
    private final String name;
    private final Path log;
    private final Process process;
    /** Where this run's output starts in {@link #log} (a restart appends to the previous run's). */
    private final long from;

    private TiffinProcess(String name, Path log, Process process, long from) {
        this.name = name;
        this.log = log;
        this.process = process;
        this.from = from;
    }

    /**
     * Starts {@code tiffin <args>} writing its output to {@code <dir>/<name>.log} (appended: a restart keeps the
     * previous run's lines); {@code jvmOptions} go to the JVM (ignored with the launcher, which uses its defaults).
     */
    static TiffinProcess start(String name, Path dir, List<String> args, List<String> jvmOptions) {
        List<String> command = new ArrayList<>();
        String home = System.getProperty("tiffin.home");
        Path launcher = home == null ? null : Path.of(home, "bin", "tiffin");
        if (launcher != null && Files.isExecutable(launcher)) {
            command.add(launcher.toString());
        } else {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-Dguice_bytecode_gen_option=DISABLED",
                    "--sun-misc-unsafe-memory-access=allow"));
            command.addAll(jvmOptions);
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.tiffin.core.cli.TiffinCli"));
        }
        command.addAll(args);
        Path log = dir.resolve(name + ".log");
        try {
            Files.createDirectories(dir);
            long from = Files.exists(log) ? Files.size(log) : 0;
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            pb.environment().put("TIFFIN_LOG_DIR", dir.resolve("logs-" + name).toString());
            return new TiffinProcess(name, log, pb.start(), from);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process.isAlive();
    }

    /** The exit code, or -1 while it runs. */
    int exitCode() {
        return process.isAlive() ? -1 : process.exitValue();
    }

    /**
     * Waits until a line of its output starts with {@code prefix} (or contains it) and returns it.
     *
     * @throws IllegalStateException when the process ends first or the time is up, with its last output
     */
    String awaitLine(String prefix, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (String line : lines()) {
                if (line.startsWith(prefix) || line.contains(prefix)) {
                    return line;
                }
            }
            if (!process.isAlive() || System.nanoTime() - end > 0) {
                throw new IllegalStateException(name + (process.isAlive() ? " did not print \"" + prefix + "\" within "
                        + timeout : " ended (exit " + process.exitValue() + ")") + "; its output ends with:\n" + tail());
            }
            pause(50);
        }
    }

    /** This run's output lines. */
    private List<String> lines() {
        try {
            if (!Files.exists(log)) {
                return List.of();
            }
            byte[] all = Files.readAllBytes(log);
            int start = (int) Math.min(from, all.length);
            return new String(all, start, all.length - start, StandardCharsets.UTF_8).lines().toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The last lines of its output. */
    String tail() {
        List<String> all = lines();
        return String.join("\n", all.subList(Math.max(0, all.size() - 30), all.size()));
    }

    /** {@code kill -9}: the process dies at once, nothing closes. */
    void kill9() {
        process.destroyForcibly();
        try {
            process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * {@code SIGTERM}: asks the process to stop (a server command closes what it started); killed with {@code
     * SIGKILL} if it still runs after {@code grace}. Does nothing once it has ended.
     */
    void stop(Duration grace) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                kill9();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill9();
        }
    }

    /** {@code SIGSTOP}: the process freezes (its sockets stay open). */
    void pause() {
        signal("-STOP");
    }

    /** {@code SIGCONT}: a paused process runs on. */
    void resume() {
        signal("-CONT");
    }

    private void signal(String sig) {
        try {
            Process kill = new ProcessBuilder("kill", sig, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill " + sig + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // polls the process's output file
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill9();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}
