package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The real Redis clients the gateway tests drive: redis-cli, redis-benchmark (Debian's redis-tools) and
 * Debian's python3 with redis-py (python3-redis). A missing one fails the test with what to install; it
 * never skips it silently.
 *
 * <p>Thread-safe (stateless).
 */
final class RedisTools {
    static final Path REDIS_CLI = Path.of("/usr/bin/redis-cli");
    static final Path REDIS_BENCHMARK = Path.of("/usr/bin/redis-benchmark");
    /** Debian's own python3: the one that sees python3-redis (a python3 first on PATH may not). */
    static final Path PYTHON = Path.of("/usr/bin/python3");

    private RedisTools() {
    }

    /**
     * The output of one run.
     *
     * <p>Thread-safe (immutable).
     */
    record Result(int exitCode, String out, String err) {
    }

    static Path require(Path tool, String debianPackage) {
        assertThat(Files.isExecutable(tool))
                .as("%s is missing: install the Debian package %s (apt-get install -y %s; .ci/run does)", tool,
                        debianPackage, debianPackage)
                .isTrue();
        return tool;
    }

    /** redis-cli against the gateway on {@code port}: {@code redis-cli -p PORT ARGS...}. */
    static Result cli(int port, String... args) {
        List<String> cmd = new ArrayList<>(List.of(require(REDIS_CLI, "redis-tools").toString(), "-p",
                Integer.toString(port)));
        cmd.addAll(List.of(args));
        return run(cmd, null, 60);
    }

    /** redis-cli reading commands from {@code stdin} (one per line). */
    static Result cliWithInput(int port, String stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of(require(REDIS_CLI, "redis-tools").toString(), "-p",
                Integer.toString(port)));
        cmd.addAll(List.of(args));
        return run(cmd, stdin.getBytes(StandardCharsets.UTF_8), 60);
    }

    /** Runs a process to its end (at most {@code timeoutSeconds}) and returns its exit code and output. */
    static Result run(List<String> command, byte[] stdin, long timeoutSeconds) {
        try {
            Process p = new ProcessBuilder(command).start();
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            try (var in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin);
                }
            }
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                // what this JVM (a gateway under test) was doing while the tool waited, then what the tool printed
                System.err.println(command + " still running after " + timeoutSeconds + " s; threads of this JVM:");
                Thread.getAllStackTraces().forEach((t, stack) -> {
                    System.err.println("\"" + t.getName() + "\" " + t.getState());
                    for (StackTraceElement e : stack) {
                        System.err.println("\tat " + e);
                    }
                });
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s (this JVM's"
                        + " threads on stderr); its output: " + out.completeOnTimeout("", 5, TimeUnit.SECONDS).join()
                        + err.completeOnTimeout("", 5, TimeUnit.SECONDS).join());
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, r -> Thread.ofVirtual().start(r));
    }
}
