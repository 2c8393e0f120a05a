package io.tiffin.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The processes {@code tiffin bench resp} runs: the distribution's {@code bin/tiffin standalone} with its
 * RESP gateway, a {@code redis-server}, each on a free loopback port and stopped with SIGTERM, and
 * {@code redis-benchmark} runs against either. A child's output goes to a log file in the bench's
 * working directory.
 *
 * <p>Not thread-safe: one bench uses it.
 */
final class RespBenchProcesses implements AutoCloseable {
    private final Path workDir;
    private final List<Process> started = new ArrayList<>();

    RespBenchProcesses(Path workDir) {
        this.workDir = workDir;
    }

    /** A TCP port free on the loopback interface now. */
    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port: " + e.getMessage(), e);
        }
    }

    /**
     * Starts {@code launcher standalone} with its gateway on {@code redisPort} and waits (up to a minute) for
     * its {@code Ready.} line.
     */
    void startStandalone(Path launcher, int redisPort, String segmentSize) {
        List<String> cmd = List.of(launcher.toString(), "standalone", "--port", "0", "--admin-port", "0",
                "--redis-port", Integer.toString(redisPort), "--segment-size", segmentSize);
        Process p = start(cmd, "tiffin-standalone.err");
        AtomicReference<String> lines = new AtomicReference<>("");
        CompletableFuture<Boolean> ready = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    String seen = line;
                    lines.updateAndGet(s -> s + seen + "\n");
                    if (line.startsWith("Ready.")) {
                        return true;
                    }
                }
                return false;
            } catch (IOException e) {
                return false;
            }
        }, r -> Thread.ofVirtual().start(r));
        try {
            if (!Boolean.TRUE.equals(ready.get(60, TimeUnit.SECONDS))) {
                throw new IllegalStateException(String.join(" ", cmd) + " ended before it was ready: " + lines.get()
                        + tail("tiffin-standalone.err"));
            }
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException(String.join(" ", cmd) + " was not ready within 60 s: " + lines.get(), e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        drainQuietly(p);
    }

    /** Starts {@code redisServer} on {@code port} without persistence and waits until it accepts connections. */
    void startRedis(String redisServer, int port) {
        Process p = start(List.of(redisServer, "--bind", "127.0.0.1", "--port", Integer.toString(port), "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--dir", workDir.toString()), "redis-server.err");
        drainQuietly(p);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && p.isAlive()) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException notYet) {
                Thread.onSpinWait();
            }
        }
        throw new IllegalStateException(redisServer + " did not start on port " + port + ": " + tail("redis-server.err"));
    }

    private Process start(List<String> cmd, String errLog) {
        try {
            Process p = new ProcessBuilder(cmd).directory(workDir.toFile())
                    .redirectError(workDir.resolve(errLog).toFile()).start();
            started.add(p);
            return p;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot run " + cmd.getFirst() + ": " + e.getMessage(), e);
        }
    }

    private static void drainQuietly(Process p) {
        Thread.ofVirtual().start(() -> {
            try {
                p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException ignored) {
                // the process ended
            }
        });
    }

    private String tail(String log) {
        try {
            List<String> lines = Files.readAllLines(workDir.resolve(log));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no " + log + ")";
        }
    }

    /**
     * Runs {@code command} to its end (at most {@code timeoutSeconds}) and returns its standard output.
     *
     * @throws IllegalStateException when it fails or times out, with its output
     */
    static String run(List<String> command, long timeoutSeconds) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, r -> Thread.ofVirtual().start(r));
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeoutSeconds
                        + " s");
            }
            String text = out.join();
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed (exit " + p.exitValue() + "): "
                        + text.strip());
            }
            return text;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot run " + command.getFirst() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Stops what it started (SIGTERM, then SIGKILL after 20 s), in reverse order. */
    @Override
    public void close() {
        for (int i = started.size() - 1; i >= 0; i--) {
            Process p = started.get(i);
            p.destroy();
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        started.clear();
    }
}
