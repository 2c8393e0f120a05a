package io.tiffin.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code tiffin bench scale --mooncake DIR}: Mooncake's C++ master measured the way {@code bench scale} measures
 * Tiffin's memory. It starts {@code DIR/mooncake_master} on loopback ports of its own and fills it with
 * {@code DIR/master_bench --operation=BatchPut} (4 clients, batches of 128, {@code --num_segments} fake segments of
 * 64 GiB, values of 4 KiB: master_bench has one value size, and a master's metadata per object does not grow with
 * it), reading the master's key count ({@code master_key_count} of its {@code /metrics}) and its resident memory as
 * the keys grow. At each stage (100k, 1M, 10M, ... keys, the last {@code --keys}) it prints one row with the
 * columns of {@code bench scale} it can fill: keys, segments, {@code rss_bytes} and {@code bytes_per_key} (RSS growth
 * since the master with the segments mounted and no key, over the keys); the rest are blank. The master runs with
 * {@code --client_ttl} of a day: master_bench's clients do not ping, and with the default 10 s the master unmounts
 * their segments and drops their keys a minute into the fill.
 *
 * <p>Not thread-safe: one instance runs one measurement.
 */
final class MooncakeScale {
    private static final Pattern KEY_COUNT = Pattern.compile("(?m)^master_key_count\\s+([0-9.eE+]+)\\s*$");
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration MOUNT_TIMEOUT = Duration.ofMinutes(5);
    /** A key count that does not grow for this long means master_bench is stuck. */
    private static final Duration STALL = Duration.ofSeconds(60);
    /** Lines of master_bench's output an error shows. */
    private static final int KEPT_LINES = 20;

    private final Path dir;
    private final long keys;
    private final int segments;
    private final Path csv;

    MooncakeScale(Path dir, long keys, int segments, Path csv) {
        this.dir = dir;
        this.keys = keys;
        this.segments = segments;
        this.csv = csv;
    }

    /** Runs the measurement; returns the exit code. */
    int run() throws IOException, InterruptedException {
        for (String binary : List.of("mooncake_master", "master_bench")) {
            if (!Files.isExecutable(dir.resolve(binary))) {
                throw new IllegalArgumentException("--mooncake " + dir + " has no executable " + binary
                        + " (expected Mooncake's master directory, as shared/peers/mooncake)");
            }
        }
        int port = FailoverCluster.freePort();
        int metricsPort = FailoverCluster.freePort();
        Path log = Files.createTempFile("mooncake-master-", ".log");
        Process master = command("mooncake_master", "--rpc_address=127.0.0.1", "--rpc_port=" + port,
                "--metrics_host=127.0.0.1", "--metrics_port=" + metricsPort, "--client_ttl=86400")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
        Process bench = null;
        boolean measured = false;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        try {
            ProcessProbe probe = new ProcessProbe(master.pid());
            awaitMetrics(http, metricsPort, master, log);
            System.out.printf("Started Mooncake's master (pid %d) on 127.0.0.1:%d; its output: %s%n", master.pid(),
                    port, log);
            bench = command("master_bench", "--master_server=127.0.0.1:" + port, "--operation=BatchPut",
                    "--duration=86400", "--num_clients=4", "--num_threads=1", "--batch_size=128", "--value_size=4096",
                    "--num_segments=" + segments).redirectErrorStream(true).start();
            bench.getOutputStream().close();
            Deque<String> output = new ArrayDeque<>();
            CountDownLatch mounted = new CountDownLatch(1);
            Thread reader = watchForMounted(bench, output, mounted);
            long deadline = System.nanoTime() + MOUNT_TIMEOUT.toNanos();
            while (!mounted.await(1, TimeUnit.SECONDS)) {
                if (!bench.isAlive() || System.nanoTime() > deadline) {
                    if (!bench.isAlive()) {
                        reader.join(Duration.ofSeconds(2)); // the output it wrote before it ended
                    }
                    throw new IllegalStateException("master_bench " + (bench.isAlive() ? "did not mount " + segments
                            + " segments within " + MOUNT_TIMEOUT.toMinutes() + " minutes" : "ended (exit "
                            + bench.exitValue() + ") before it mounted its segments") + "; the end of its output:\n"
                            + String.join("\n", lastLines(output)) + "\nIf it could not load a library: Mooncake's"
                            + " binaries need Debian 12's runtime libraries (" + dir.resolve("run-master-bench")
                            + " installs them)");
                }
            }
            // the base the per-key figure grows from: the segments mounted, (almost) no key yet
            long rssEmpty = probe.rssBytes();
            System.out.printf("Mooncake's master with %d segments mounted: rss_bytes %d%n", segments, rssEmpty);
            System.out.println(BenchScaleCommand.HEADER);
            for (long stage : BenchScaleCommand.stages(keys)) {
                long[] reached = awaitKeys(http, metricsPort, stage, bench, master);
                long count = reached[0];
                long rss = reached[1];
                // the columns bench scale measures of Tiffin's master beyond its memory are blank
                String row = count + "," + segments + "," + rss + ",," + BenchSupport.fmt((double) (rss - rssEmpty)
                        / count, 1) + ",".repeat(8);
                System.out.println(row);
                BenchSupport.writeCsv(csv, BenchScaleCommand.HEADER, List.of(row));
            }
            measured = true;
            return 0;
        } catch (IllegalStateException e) {
            throw new IllegalStateException(e.getMessage() + "\nMooncake's master output stays in " + log, e);
        } finally {
            if (bench != null) {
                bench.destroy();
                bench.waitFor(10, TimeUnit.SECONDS);
                bench.destroyForcibly();
            }
            master.destroy();
            if (!master.waitFor(10, TimeUnit.SECONDS)) {
                master.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (measured) {
                Files.deleteIfExists(log); // kept after a failure, for its cause (named in its message)
            }
        }
    }

    /** {@code DIR/binary args}, finding the libraries shipped beside it. */
    private ProcessBuilder command(String binary, String... args) {
        List<String> command = new ArrayList<>();
        command.add(dir.resolve(binary).toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().merge("LD_LIBRARY_PATH", dir.toString(), (old, mine) -> mine + ":" + old);
        return pb;
    }

    /**
     * Reads master_bench's output on a thread of its own, keeping its last {@value #KEPT_LINES} lines in
     * {@code output} (guarded by itself); {@code mounted} opens at its "Segments mounted". The thread ends at the
     * end of the output.
     */
    private static Thread watchForMounted(Process bench, Deque<String> output, CountDownLatch mounted) {
        return Thread.ofPlatform().daemon().name("mooncake-master-bench-output").start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(bench.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    synchronized (output) {
                        output.addLast(line);
                        if (output.size() > KEPT_LINES) {
                            output.removeFirst();
                        }
                    }
                    if (line.contains("Segments mounted")) {
                        mounted.countDown();
                    }
                }
            } catch (IOException e) {
                // the process ended; the waits below notice
            }
        });
    }

    private static List<String> lastLines(Deque<String> output) {
        synchronized (output) {
            return List.copyOf(output);
        }
    }

    private static void awaitMetrics(HttpClient http, int metricsPort, Process master, Path log)
            throws InterruptedException, IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (keyCount(http, metricsPort).isEmpty()) {
            if (!master.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("Mooncake's master did not serve its metrics on port " + metricsPort
                        + " (alive: " + master.isAlive() + "); its output:\n" + Files.readString(log));
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /**
     * Polls until the master holds {@code target} keys; returns the keys then and the RSS read right after. Fails
     * when either process ends, or when the key count has not grown for {@link #STALL}.
     */
    private static long[] awaitKeys(HttpClient http, int metricsPort, long target, Process bench, Process master)
            throws InterruptedException {
        ProcessProbe probe = new ProcessProbe(master.pid());
        long last = -1;
        long lastGrowth = System.nanoTime();
        while (true) {
            long count = keyCount(http, metricsPort).orElse(0);
            if (count >= target) {
                return new long[] {count, probe.rssBytes()};
            }
            if (!bench.isAlive() || !master.isAlive()) {
                throw new IllegalStateException("Mooncake's " + (master.isAlive() ? "master_bench" : "master")
                        + " ended at " + count + " keys");
            }
            if (count > last) {
                last = count;
                lastGrowth = System.nanoTime();
            } else if (System.nanoTime() - lastGrowth > STALL.toNanos()) {
                throw new IllegalStateException("Mooncake's master has held " + count + " keys for "
                        + STALL.toSeconds() + " s: the fill does not progress");
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** {@code master_key_count} of the master's metrics, or empty while they cannot be read. */
    static OptionalLong keyCount(HttpClient http, int metricsPort) throws InterruptedException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort
                    + "/metrics")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? keyCount(r.body()) : OptionalLong.empty();
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    /** {@code master_key_count} in a Prometheus text page, or empty. */
    static OptionalLong keyCount(String metrics) {
        Matcher m = KEY_COUNT.matcher(metrics);
        return m.find() ? OptionalLong.of((long) Double.parseDouble(m.group(1))) : OptionalLong.empty();
    }
}
