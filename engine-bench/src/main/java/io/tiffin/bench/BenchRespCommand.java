package io.tiffin.bench;

import io.tiffin.core.config.Sizes;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench resp}: the real {@code redis-benchmark} against Tiffin's Redis gateway (the
 * distribution's {@code bin/tiffin standalone}, started here with its default JVM flags, or a gateway given
 * by {@code --port}) and against a {@code redis-server} started on a free port in the same run. Every case
 * (test, value size, pipeline) first runs unmeasured against Tiffin until it has served {@code --warmup} requests (the
 * JIT's warm-up, {@link #warmupFor}), then {@code --rounds} times against both (a measured run against Tiffin starts
 * once its store is empty again, {@link #awaitEmpty}), the target order alternating from round to round, each run
 * after a FLUSHALL. Prints every run (with how many of its lookups missed on that server), then the medians and
 * Tiffin's ratio to Redis; {@code --csv} gets the medians, one row per target and
 * case ({@code target,command,value_size,pipeline,clients,requests_per_sec,p50_ms,p99_ms}).
 *
 * <p>Not thread-safe: picocli fills one instance and runs it once.
 */
@Command(name = "resp", mixinStandardHelpOptions = true,
        description = "redis-benchmark against Tiffin's Redis gateway and a redis-server in the same run; medians"
                + " and ratios.")
final class BenchRespCommand implements Callable<Integer> {
    static final String CSV_HEADER = "target,command,value_size,pipeline,clients,requests_per_sec,p50_ms,p99_ms";

    @Spec
    CommandSpec spec;

    @Option(names = "--tiffin", paramLabel = "PATH",
            description = "The launcher whose standalone to start (default: bin/tiffin of this installation).")
    Path tiffin;

    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Host of a running gateway (with --port; default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT",
            description = "Port of a running gateway to measure instead of starting a standalone.")
    Integer port;

    // 4 x the default keyspace's values: room for replacements without eviction; every page of the segment
    // is touched over a run, so a larger one only takes memory (4 GiB got a run killed on a 24 GiB machine)
    @Option(names = "--segment-size", paramLabel = "SIZE", defaultValue = "1GiB",
            description = "Memory of the standalone started (default ${DEFAULT-VALUE}).")
    String segmentSize;

    @Option(names = "--redis-server", paramLabel = "PATH", defaultValue = "redis-server",
            description = "The redis-server to start on a free port for the comparison (default ${DEFAULT-VALUE},"
                    + " from PATH).")
    String redisServer;

    @Option(names = "--no-redis", description = "Measure the gateway only.")
    boolean noRedis;

    @Option(names = "--redis-benchmark", paramLabel = "PATH", defaultValue = "redis-benchmark",
            description = "The redis-benchmark to run (default ${DEFAULT-VALUE}, from PATH).")
    String redisBenchmark;

    @Option(names = "--tests", paramLabel = "LIST", defaultValue = "set,get",
            description = "redis-benchmark -t (default ${DEFAULT-VALUE}).")
    String tests;

    @Option(names = "--sizes", paramLabel = "LIST", split = ",", defaultValue = "4KiB,1MiB",
            description = "Value sizes, -d (default ${DEFAULT-VALUE}).")
    List<String> sizes;

    @Option(names = "--pipelines", paramLabel = "LIST", split = ",", defaultValue = "1,16",
            description = "Pipelines, -P (default ${DEFAULT-VALUE}).")
    List<Integer> pipelines;

    @Option(names = "--clients", paramLabel = "N", defaultValue = "8",
            description = "Connections, -c (default ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "1",
            description = "redis-benchmark's threads, --threads (default ${DEFAULT-VALUE}: its single-threaded mode,"
                    + " whose one thread caps 1 MiB GETs near 4,500 a second on the machine of docs/BENCHMARKS.md)")
    int threads;

    @Option(names = "--requests", paramLabel = "N", defaultValue = "0",
            description = "Requests per test, -n; 0 = about 2 GiB of values, 1000..200000 (default ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--warmup", paramLabel = "N", defaultValue = "0",
            description = "Unmeasured requests per case against Tiffin before the rounds; 0 = at least 20000 (the"
                    + " JIT's thresholds count calls, and a large value's request is one call of the per-request path)"
                    + " and at least one measured run, at most 24 GiB of values (default ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--keyspace", paramLabel = "N", defaultValue = "0",
            description = "Distinct keys, -r; 0 = at most 256 MiB of values (default ${DEFAULT-VALUE}).")
    int keyspace;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "3",
            description = "Measured runs of every case per target (default ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--csv", paramLabel = "FILE", description = "Append the medians to this CSV file.")
    Path csv;

    /** The last run's lookups and misses as printed after its rows (INFO stats), or null when it made none. */
    private String lookups;

    /**
     * One redis-benchmark result (or the medians of several).
     *
     * <p>Thread-safe (immutable).
     */
    record Run(String target, String command, long size, int pipeline, int clients, double rps, double p50, double p99) {
        Run withRps(double value) {
            return new Run(target, command, size, pipeline, clients, value, p50, p99);
        }
    }

    @Override
    public Integer call() throws IOException {
        List<Long> valueSizes = sizes.stream().map(Sizes::parse).toList();
        if (rounds < 1 || clients < 1 || threads < 1 || pipelines.stream().anyMatch(p -> p < 1)
                || valueSizes.stream().anyMatch(s -> s < 1)) {
            throw new ParameterException(spec.commandLine(), "--rounds, --clients, --threads, --pipelines and --sizes"
                    + " must be positive");
        }
        if (warmup < 0) {
            throw new ParameterException(spec.commandLine(), "--warmup must be 0 (automatic) or a number of requests");
        }
        Path launcher = port != null ? null : launcher();
        Path work = Files.createTempDirectory("tiffin-bench-resp");
        System.out.println("load before: " + loadAverage());
        List<Run> runs = new ArrayList<>();
        try (RespBenchProcesses processes = new RespBenchProcesses(work)) {
            int tiffinPort = port != null ? port : RespBenchProcesses.freePort();
            if (port == null) {
                processes.startStandalone(launcher, tiffinPort, segmentSize);
                System.out.println("tiffin: " + launcher + " standalone --redis-port " + tiffinPort + " --segment-size "
                        + segmentSize);
            }
            int redisPort = -1;
            if (!noRedis) {
                redisPort = RespBenchProcesses.freePort();
                processes.startRedis(redisServer, redisPort);
                System.out.println("redis: " + redisServer + " --port " + redisPort + " --save \"\" --appendonly no");
            }
            for (long size : valueSizes) {
                for (int pipeline : pipelines) {
                    int n = requestsFor(size);
                    int runsToWarm = (warmupFor(size) + n - 1) / n;
                    for (int w = 1; w <= runsToWarm; w++) {
                        String label = "warm-up " + w + "/" + runsToWarm + " ";
                        benchmark("tiffin", tiffinPort, size, pipeline, n, false)
                                .forEach(run -> System.out.println(label + describe(run)));
                        printLookups();
                    }
                }
            }
            for (int round = 1; round <= rounds; round++) {
                for (long size : valueSizes) {
                    for (int pipeline : pipelines) {
                        List<String> order = noRedis ? List.of("tiffin")
                                : round % 2 == 1 ? List.of("tiffin", "redis") : List.of("redis", "tiffin");
                        for (String target : order) {
                            List<Run> r = benchmark(target, target.equals("tiffin") ? tiffinPort : redisPort, size,
                                    pipeline, requestsFor(size), target.equals("tiffin"));
                            String label = "round " + round + " ";
                            r.forEach(run -> System.out.println(label + describe(run)));
                            printLookups();
                            runs.addAll(r);
                        }
                    }
                }
            }
        }
        List<Run> medians = medians(runs);
        System.out.println("load after: " + loadAverage());
        System.out.println("medians of " + rounds + " rounds (" + clients + " clients" + (threads > 1 ? ", " + threads
                + " redis-benchmark threads" : "") + "):");
        medians.forEach(m -> System.out.println("  " + describe(m)));
        printRatios(medians);
        BenchSupport.writeCsv(csv, CSV_HEADER, medians.stream().map(BenchRespCommand::csvRow).toList());
        return 0;
    }

    private Path launcher() {
        if (tiffin != null) {
            return tiffin;
        }
        String home = System.getProperty("tiffin.home");
        Path p = home == null ? null : Path.of(home, "bin", "tiffin");
        if (p == null || !Files.isExecutable(p)) {
            throw new ParameterException(spec.commandLine(), "no bin/tiffin to start (this is not an installed"
                    + " Tiffin): pass --tiffin PATH of an unpacked distribution, or --port of a running gateway");
        }
        return p;
    }

    /** About 2 GiB of values per test, within 1000..200000 requests, unless --requests says otherwise. */
    int requestsFor(long size) {
        return requests > 0 ? requests : (int) Math.max(1000, Math.min(200_000, (2L << 30) / size));
    }

    /**
     * Unmeasured requests per case before the rounds, unless --warmup says otherwise: at least one measured run's and
     * 20,000, at most 24 GiB of values. HotSpot compiles a method with C2 after thousands of calls (its tier-4
     * thresholds: 5,000 calls, or 15,000 calls and loop iterations), and a request of a large value calls the
     * gateway's per-request path once: one run of 2,048 SETs of 1 MiB left the standalone at a third of its settled
     * rate, which it reached after about 16,000 (docs/BENCHMARKS.md, "The gateway's warm-up, and GETs that missed").
     */
    int warmupFor(long size) {
        if (warmup > 0) {
            return warmup;
        }
        return Math.max(requestsFor(size), (int) Math.min(20_000, (24L << 30) / size));
    }

    /** At most 256 MiB of values, unless --keyspace says otherwise. */
    int keyspaceFor(long size) {
        return keyspace > 0 ? keyspace : (int) Math.max(1, Math.min(100_000, (256L << 20) / size));
    }

    /** One redis-benchmark run after a FLUSHALL; with {@code awaitEmpty}, once the store's memory is all free again. */
    private List<Run> benchmark(String target, int targetPort, long size, int pipeline, int n, boolean awaitEmpty) {
        String h = target.equals("redis") ? "127.0.0.1" : host;
        flushAll(h, targetPort);
        if (awaitEmpty) {
            long waited = awaitEmpty(h, targetPort, EMPTY_WAIT_MILLIS);
            if (waited > 0) {
                System.out.println(String.format(Locale.ROOT, "  (store empty %.1f s after FLUSHALL)", waited / 1000.0));
            }
        }
        long hits = infoField(h, targetPort, "stats", "keyspace_hits");
        long misses = infoField(h, targetPort, "stats", "keyspace_misses");
        List<String> command = new ArrayList<>(List.of(redisBenchmark, "-h", h, "-p", Integer.toString(targetPort),
                "-t", tests, "-d", Long.toString(size), "-n", Integer.toString(n), "-c", Integer.toString(clients),
                "-r", Integer.toString(keyspaceFor(size)), "-P", Integer.toString(pipeline), "--csv"));
        if (threads > 1) {
            command.addAll(List.of("--threads", Integer.toString(threads)));
        }
        String out = RespBenchProcesses.run(command, 3600);
        hits = infoField(h, targetPort, "stats", "keyspace_hits") - hits;
        misses = infoField(h, targetPort, "stats", "keyspace_misses") - misses;
        List<Run> runs = parse(target, size, pipeline, out);
        // a GET of a missing key is answered at once: runs compare only as far as their misses are alike
        lookups = hits + misses == 0 ? null : String.format(Locale.ROOT, "  (%s: %d of %d lookups missed, %.1f%%)",
                target, misses, hits + misses, 100.0 * misses / (hits + misses));
        return runs;
    }

    private void printLookups() {
        if (lookups != null) {
            System.out.println(lookups);
        }
    }

    /** The rows of redis-benchmark's --csv output. */
    List<Run> parse(String target, long size, int pipeline, String out) {
        List<Run> runs = new ArrayList<>();
        for (String line : out.lines().toList()) {
            String[] f = line.replace("\"", "").split(",");
            if (f.length < 7 || f[0].equals("test")) {
                continue;
            }
            runs.add(new Run(target, f[0].toLowerCase(Locale.ROOT), size, pipeline, clients, rate(f[1], line),
                    Double.parseDouble(f[4]), Double.parseDouble(f[6])));
        }
        if (runs.isEmpty()) {
            throw new IllegalStateException("redis-benchmark printed no results: " + out.strip());
        }
        return runs;
    }

    /**
     * A run's requests per second as redis-benchmark printed it. It prints {@code inf} for a run that ended within
     * the millisecond its clock counts in: too short to be a figure.
     */
    private static double rate(String field, String line) {
        double rps;
        try {
            rps = Double.parseDouble(field);
        } catch (NumberFormatException e) {
            rps = Double.NaN;
        }
        if (!Double.isFinite(rps) || rps <= 0) {
            throw new IllegalStateException("redis-benchmark could not time a run (requests per second '" + field
                    + "' in " + line.strip() + "): it ended within a millisecond; give --requests a larger number");
        }
        return rps;
    }

    /** FLUSHALL (a run's GETs hold read leases on its keys in Tiffin; the next run's SETs would meet them). */
    private static void flushAll(String h, int p) {
        try (Socket s = new Socket(h, p)) {
            s.setSoTimeout(120_000);
            s.getOutputStream().write("FLUSHALL\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] reply = s.getInputStream().readNBytes(5);
            if (!new String(reply, StandardCharsets.US_ASCII).equals("+OK\r\n")) {
                throw new IllegalStateException("FLUSHALL on " + h + ":" + p + " answered "
                        + new String(reply, StandardCharsets.US_ASCII));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot reach " + h + ":" + p + ": " + e.getMessage(), e);
        }
    }

    /** Longest wait for a store's memory to be free after a FLUSHALL: a read lease's default term and a half. */
    static final long EMPTY_WAIT_MILLIS = 15_000;

    /**
     * Waits until the gateway's INFO reports {@code used_memory:0}, at most {@code maxMillis}, and returns how long
     * that took (0 at once). Tiffin frees the memory of a value removed while a reader holds its lease only when the
     * lease ends ({@code master.lease-ttl}, 10 s: the reader may still be reading it), so a FLUSHALL right after a
     * run's GETs leaves their values' memory taken for up to that long; runs started meanwhile filled the segment
     * with those and with their own values, and the store evicted live keys to make room, whose GETs then missed
     * (docs/BENCHMARKS.md, "The gateway's warm-up, and GETs that missed"). Warns and returns the time spent when the
     * memory is not free by then.
     */
    static long awaitEmpty(String h, int p, long maxMillis) {
        long start = System.nanoTime();
        long used;
        while ((used = infoField(h, p, "memory", "used_memory")) != 0) {
            long spent = (System.nanoTime() - start) / 1_000_000;
            if (spent >= maxMillis) {
                System.out.println("  (warning: " + used + " bytes still used " + spent + " ms after FLUSHALL; the run"
                        + " starts anyway)");
                return spent;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the store to empty", e);
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** The number {@code field} of the server's {@code INFO section} (a single section's reply). */
    static long infoField(String h, int p, String section, String field) {
        String what = "INFO " + section + " on " + h + ":" + p;
        try (Socket s = new Socket(h, p)) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("INFO " + section + "\r\n").getBytes(StandardCharsets.US_ASCII));
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            String header = in.readLine();
            if (header == null || !header.startsWith("$")) {
                throw new IllegalStateException(what + " answered " + header);
            }
            for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.substring(field.length() + 1).strip());
                }
            }
            throw new IllegalStateException(what + " has no " + field + " line");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot reach " + h + ":" + p + ": " + e.getMessage(), e);
        }
    }

    static List<Run> medians(List<Run> runs) {
        Map<String, List<Run>> byCase = new LinkedHashMap<>();
        for (Run r : runs) {
            byCase.computeIfAbsent(r.target() + "/" + r.command() + "/" + r.size() + "/" + r.pipeline(),
                    k -> new ArrayList<>()).add(r);
        }
        List<Run> out = new ArrayList<>();
        for (List<Run> c : byCase.values()) {
            Run first = c.getFirst();
            out.add(new Run(first.target(), first.command(), first.size(), first.pipeline(), first.clients(),
                    median(c.stream().mapToDouble(Run::rps).toArray()), median(c.stream().mapToDouble(Run::p50).toArray()),
                    median(c.stream().mapToDouble(Run::p99).toArray())));
        }
        return out;
    }

    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static void printRatios(List<Run> medians) {
        for (Run t : medians) {
            if (!t.target().equals("tiffin")) {
                continue;
            }
            medians.stream().filter(r -> r.target().equals("redis") && r.command().equals(t.command())
                    && r.size() == t.size() && r.pipeline() == t.pipeline()).findFirst().ifPresent(r ->
                    System.out.println(String.format(Locale.ROOT, "  tiffin/redis %-4s %8s -P %-2d: %.2fx",
                            t.command().toUpperCase(Locale.ROOT), Sizes.format(t.size()), t.pipeline(), t.rps() / r.rps())));
        }
    }

    private static String describe(Run r) {
        return String.format(Locale.ROOT, "%-6s %-4s %8s -P %-2d -c %d: %10.1f req/s, p50 %.3f ms, p99 %.3f ms", r.target(),
                r.command().toUpperCase(Locale.ROOT), Sizes.format(r.size()), r.pipeline(), r.clients(), r.rps(), r.p50(),
                r.p99());
    }

    static String csvRow(Run r) {
        return String.join(",", r.target(), r.command(), Long.toString(r.size()), Integer.toString(r.pipeline()),
                Integer.toString(r.clients()), BenchSupport.fmt(r.rps(), 1), BenchSupport.fmt(r.p50(), 3),
                BenchSupport.fmt(r.p99(), 3));
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).strip();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
