package io.tiffin.bench;

import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * {@code tiffin bench kv}: put, get and batch get end to end through a cluster on loopback, and in the
 * same run the same transfers through a plain loopback socket, an in-process memory copy, a client in
 * the same JVM as a node ({@code tiffin-local}) and optionally Redis, with Tiffin's ratio to each.
 *
 * <p>The cluster is a master in this JVM plus {@code --nodes} node processes started with this JVM's
 * {@code java} and class path ({@link BenchNodeMain}), or the running cluster at {@code --master}.
 * Remote clients never copy in memory ({@code localMemcpy=false}, no shared memory); with
 * {@code --shared-memory-dir} the nodes keep their segments in shared memory and target
 * {@code tiffin-shm} is a client (of this process, on the nodes' host) that maps them. With
 * {@code --location-cache-ttl} (default 2 s, the client's default) the Tiffin clients reuse lookups;
 * {@code --uncached-baseline} adds {@code tiffin-uncached}, tiffin-remote without that reuse. Each measurement runs
 * {@code --clients} threads, each with one request at a time, for {@code --duration} seconds after
 * {@code --warmup} seconds; latency percentiles come from HdrHistogram (for batch get, of one batch
 * call). Puts overwrite a small ring of keys per thread (upsert) so long runs do not fill the pool.
 *
 * <p>Not thread-safe: one instance runs one benchmark. Owns the processes, servers and memory it
 * starts and releases them before returning.
 */
@Command(name = "kv", mixinStandardHelpOptions = true,
        description = "End-to-end put/get/batch get against socket, memcpy, local-replica and Redis baselines.")
public final class BenchKvCommand implements Callable<Integer> {
    /** Where picocli's usage errors go: the command line that runs this command (its err stream, its usage). */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;


    @Option(names = "--master", description = "host:port of a running cluster; default: master here + node processes")
    String master;

    @Option(names = "--nodes", defaultValue = "2", description = "node processes to start (default ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = "--segment-size", defaultValue = "2GiB", description = "memory per node (default ${DEFAULT-VALUE})")
    String segmentSize;

    @Option(names = "--node-io-threads", defaultValue = "0",
            description = "event-loop threads of each node process (0 = the node's default, node.io-threads:"
                    + " one per processor)")
    int nodeIoThreads;

    @Option(names = "--clients", defaultValue = "4", description = "client threads (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--sizes", defaultValue = "4KiB,256KiB,1MiB,16MiB", split = ",",
            description = "value sizes (default ${DEFAULT-VALUE})")
    List<String> sizes;

    @Option(names = "--batch-size", defaultValue = "16", description = "keys per batch get, at most 64 MiB per batch (default ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--duration", defaultValue = "3", description = "measured seconds per case (default ${DEFAULT-VALUE})")
    double duration;

    @Option(names = "--rounds", defaultValue = "1",
            description = "run the whole sequence of cases this many times after the one cluster warm-up (every"
                    + " case once, then every case again, ...) and also report each figure's median over the rounds,"
                    + " with the ratios of every round and of the medians; with more than 1 the CSV gets a column"
                    + " round: 1 to N, or median. tiffin-local is measured once, after the rounds, and reported"
                    + " as the last round's (default ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--warmup", defaultValue = "5",
            description = "unmeasured seconds before each case, the same workload (default ${DEFAULT-VALUE}; after 1 s"
                    + " the JIT compilers still took up to a fifth of the CPU in a case's first measured seconds)")
    double warmup;

    @Option(names = "--spread-baseline",
            description = "also measure target socket-spread: the socket get served from as many distinct values"
                    + " as Tiffin reads (about 128 MiB, cold in the CPU caches) instead of one buffer per connection")
    boolean spreadBaseline;

    @Option(names = "--socket-prefix", defaultValue = "0",
            description = "also measure target socket-prefixed: the socket-spread get with this many bytes sent"
                    + " before each value, as a frame header would be (0 = off); shows what a value misaligned in the"
                    + " byte stream costs the kernel's copies (Tiffin pads its frames to 64 bytes for this)")
    int socketPrefix;

    @Option(names = "--data-plane",
            description = "also measure target tiffin-data-plane: the remote get's node read alone (a DATA_READ to"
                    + " the replica the master named, located once before the case; no lookup per get), to split"
                    + " a remote get's cost between the master lookup and the transfer")
    boolean dataPlane;

    @Option(names = "--shared-memory-dir",
            description = "start the node processes with node.shared-memory-dir = this directory (a tmpfs such as"
                    + " /dev/shm) and also measure target tiffin-shm: a client of another process on the same host"
                    + " that maps the nodes' segments (client.shared-memory); tiffin-remote still uses the socket")
    Path sharedMemoryDir;

    @Option(names = "--location-cache-ttl", defaultValue = "2s",
            description = "client.location-cache-ttl of the Tiffin clients: how long a get reuses a lookup (default"
                    + " ${DEFAULT-VALUE}, the client's default; 0 = off, every get asks the master)")
    String locationCacheTtl;

    @Option(names = "--uncached-baseline",
            description = "also measure target tiffin-uncached: tiffin-remote with client.location-cache-ttl = 0,"
                    + " every get and batch get asking the master first; right after tiffin-remote's")
    boolean uncachedBaseline;

    @Option(names = "--read-hint-cache-size", defaultValue = "100000",
            description = "client.read-hint-cache-size of the Tiffin clients: keys whose last known replica a get reads"
                    + " while looking the key up (default ${DEFAULT-VALUE}, the client's default; 0 = off)")
    long readHints;

    @Option(names = "--unhinted-baseline",
            description = "also measure target tiffin-unhinted: tiffin-remote with client.read-hint-cache-size = 0,"
                    + " every get waiting for its lookup before it reads; its get case, right after tiffin-remote's")
    boolean unhintedBaseline;

    @Option(names = "--cluster-warmup", defaultValue = "20",
            description = "seconds of unmeasured puts and gets of every size from every client thread before the"
                    + " first case, in all (default ${DEFAULT-VALUE}; 6 left a run's first case measurably colder)")
    double clusterWarmup;

    @Option(names = "--redis", description = "host:port of a Redis server to run the same workload against")
    String redis;

    @Option(names = "--operations", defaultValue = "put,get,batch_get", split = ",",
            description = "operations to measure on the Tiffin targets, of put, get, batch_get and batch_put"
                    + " (default ${DEFAULT-VALUE}); with --redis, batch_put adds Redis MSET")
    List<String> operations;

    @Option(names = "--no-local", description = "skip the tiffin-local target")
    boolean noLocal;

    @Option(names = "--csv", description = "append rows: target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us")
    Path csv;

    /** One measured row. */
    /** One case's figures; {@code round} is 1 to N, or 0 for the medians over the rounds. */
    record Result(String target, String operation, long valueSize, int clients, double opsPerSec, double gbPerSec,
                  double p50Us, double p99Us, int round) {
        String csv() {
            return target + "," + operation + "," + valueSize + "," + clients + "," + BenchSupport.fmt(opsPerSec, 1)
                    + "," + BenchSupport.fmt(gbPerSec, 3) + "," + BenchSupport.fmt(p50Us, 1) + ","
                    + BenchSupport.fmt(p99Us, 1);
        }

        String csvWithRound() {
            return csv() + "," + (round == 0 ? "median" : Integer.toString(round));
        }

        String key() {
            return target + "/" + operation + "/" + valueSize;
        }
    }

    /**
     * Per case (target, operation, size, in the order first measured), the median of each figure over
     * {@code all}'s rounds; for an even count the mean of the middle two.
     */
    static List<Result> medians(List<Result> all) {
        Map<String, List<Result>> byCase = new LinkedHashMap<>();
        for (Result r : all) {
            byCase.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
        }
        List<Result> out = new ArrayList<>();
        for (List<Result> runs : byCase.values()) {
            Result first = runs.getFirst();
            out.add(new Result(first.target(), first.operation(), first.valueSize(), first.clients(),
                    median(runs, Result::opsPerSec), median(runs, Result::gbPerSec), median(runs, Result::p50Us),
                    median(runs, Result::p99Us), 0));
        }
        return out;
    }

    private static double median(List<Result> runs, java.util.function.ToDoubleFunction<Result> figure) {
        double[] v = runs.stream().mapToDouble(figure).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** One thread's operation: {@code run(i)} performs the i-th request of that thread. */
    @FunctionalInterface
    interface Op {
        void run(long i) throws Exception;
    }

    /** Builds the per-thread operation (and its buffers) for thread {@code t}. */
    @FunctionalInterface
    interface OpFactory {
        Op create(int thread) throws Exception;
    }

    private final List<Result> results = new ArrayList<>();
    /** The round being measured, 1 to {@link #rounds}. */
    private int round = 1;
    private final List<Process> processes = new ArrayList<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchKvCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (nodeIoThreads < 0 || socketPrefix < 0 || socketPrefix > 4096) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--node-io-threads must be >= 0 and"
                    + " --socket-prefix between 0 and 4096");
        }
        for (String op : operations) {
            if (!List.of("put", "get", "batch_get", "batch_put").contains(op)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--operations: unknown operation '"
                        + op + "' (expected put, get, batch_get or batch_put, separated by commas)");
            }
        }
        if (nodes < 1 || clients < 1 || batchSize < 1 || rounds < 1 || duration <= 0 || warmup < 0
                || clusterWarmup < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--nodes, --clients, --batch-size and"
                    + " --rounds must be >= 1, --duration > 0, --warmup and --cluster-warmup >= 0");
        }
        long[] valueSizes = sizes.stream().mapToLong(Sizes::parse).toArray();
        java.time.Duration cacheTtl;
        try {
            cacheTtl = io.tiffin.core.config.Durations.parse(locationCacheTtl, java.time.temporal.ChronoUnit.MILLIS);
        } catch (RuntimeException e) {
            cacheTtl = null;
        }
        if (cacheTtl == null || cacheTtl.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--location-cache-ttl = " + locationCacheTtl
                    + " (expected: a duration >= 0 such as 1s or 500ms; 0 = off)");
        }
        if (redis != null) {
            checkRedis();
        }
        MasterServer localMaster = null;
        try (Arena arena = Arena.ofShared()) {
            String address = master;
            if (address == null) {
                localMaster = BenchSupport.startLocalMaster();
                address = "127.0.0.1:" + localMaster.address().getPort();
                startNodes(address);
            }
            System.out.printf("Cluster: master %s%s; %d client threads, %.1f s per case after %.1f s warm-up%n",
                    address, master == null ? " (in this JVM) + " + nodes + " node processes of " + segmentSize : "",
                    clients, duration, warmup);
            TiffinClient.Options uncachedBase = TiffinClient.Options.builder(address).localMemcpy(false)
                    .sharedMemory(false).locationCache(LocationCache.Settings.DISABLED).readHints(readHints).build();
            TiffinClient.Options base = cacheTtl.isZero() ? uncachedBase
                    : uncachedBase.withLocationCache(new LocationCache.Settings(cacheTtl, 1_000_000));
            try (TiffinClient remote = TiffinClient.connect(base.withSharedMemory(false));
                 TiffinClient unhinted = unhintedBaseline ? TiffinClient.connect(base.withSharedMemory(false)
                         .withReadHints(0)) : null;
                 TiffinClient shm = sharedMemoryDir == null ? null : TiffinClient.connect(base.withSharedMemory(true));
                 TiffinClient uncached = uncachedBaseline ? TiffinClient.connect(uncachedBase.withSharedMemory(false))
                         : null;
                 SocketBaseline socket = new SocketBaseline(maxOf(valueSizes), socketPrefix,
                         spreadBaseline || socketPrefix > 0 ? maxWorkingSet(valueSizes) : 0)) {
                warmCluster(remote, arena, valueSizes);
                for (round = 1; round <= rounds; round++) {
                    if (rounds > 1) {
                        System.out.printf("Round %d of %d%n", round, rounds);
                    }
                    // a round's values and buffers die with it (every thread using them has been joined)
                    try (Arena roundArena = Arena.ofShared()) {
                        measureRound(valueSizes, roundArena, remote, unhinted, shm, uncached, socket);
                    }
                }
                round = rounds; // tiffin-local, measured once, counts as the last round
            }
            if (!noLocal) {
                benchLocal(valueSizes, arena);
            }
        } finally {
            stopNodes();
            if (localMaster != null) {
                localMaster.close();
            }
        }
        if (rounds == 1) {
            printRatios(results, "Ratios (throughput, same run):");
            BenchSupport.writeCsv(csv, "target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us",
                    results.stream().map(Result::csv).toList());
            return 0;
        }
        for (int n = 1; n <= rounds; n++) {
            int current = n;
            printRatios(results.stream().filter(r -> r.round() == current).toList(), "Ratios of round " + n + ":");
        }
        List<Result> medians = medians(results);
        System.out.println();
        System.out.println("Medians over " + rounds + " rounds:");
        for (Result r : medians) {
            System.out.printf(Locale.ROOT, "%-14s %-9s %8s  %10.0f ops/s  %7.3f GB/s  p50 %9.1f us  p99 %9.1f us%n",
                    r.target(), r.operation(), Sizes.format(r.valueSize()), r.opsPerSec(), r.gbPerSec(), r.p50Us(),
                    r.p99Us());
        }
        printRatios(medians, "Ratios of the medians over " + rounds + " rounds:");
        List<String> rows = new ArrayList<>(results.stream().map(Result::csvWithRound).toList());
        medians.forEach(r -> rows.add(r.csvWithRound()));
        BenchSupport.writeCsv(csv, "target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us,round",
                rows);
        return 0;
    }

    /** One round: every size's cases on the open clients, then Redis's. */
    private void measureRound(long[] valueSizes, Arena arena, TiffinClient remote, TiffinClient unhinted,
                              TiffinClient shm, TiffinClient uncached, SocketBaseline socket) throws Exception {
        for (long size : valueSizes) {
            MemorySegment value = randomValue(arena, size);
            benchCached("tiffin-remote", remote, value, size, arena, true);
            if (unhinted != null && operations.contains("get")) {
                benchUnhinted(unhinted, value, size, arena);
            }
            if (uncached != null) {
                benchTiffin("tiffin-uncached", uncached, value, size, arena, false);
            }
            if (shm != null) {
                benchCached("tiffin-shm", shm, value, size, arena, true);
                if (shm.sharedSegmentsMapped() == 0) {
                    throw new IllegalStateException("tiffin-shm: the client mapped no segment of the nodes;"
                            + " is " + sharedMemoryDir + " on this host and readable?");
                }
            }
            benchSocket(socket, size, arena);
            socket.closeConnections(); // each case's connections hold a serving thread and its buffers
            benchMemcpy(value, size, arena);
        }
        if (redis != null) {
            for (long size : valueSizes) {
                benchRedis(randomValue(arena, size), size);
            }
        }
    }

    // ------------------------------------------------------------------ cluster processes

    private void startNodes(String masterAddress) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int i = 0; i < nodes; i++) {
            ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                    "--sun-misc-unsafe-memory-access=allow", "-Dguice_bytecode_gen_option=DISABLED", "-Xmx512m",
                    "-cp", System.getProperty("java.class.path"), BenchNodeMain.class.getName(), masterAddress,
                    "bench-node-" + i, segmentSize, Integer.toString(nodeIoThreads),
                    sharedMemoryDir == null ? "" : sharedMemoryDir.toString());
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
            Process p = pb.start();
            processes.add(p);
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while ((line = out.readLine()) != null && !line.startsWith("READY ")) {
                if (System.nanoTime() > deadline) {
                    break;
                }
            }
            if (line == null || !line.startsWith("READY ")) {
                throw new IllegalStateException("node process " + i + " did not start (see its output above)");
            }
            System.out.println("Node process " + p.pid() + " serves on " + line.substring(6));
        }
    }

    private void stopNodes() {
        for (Process p : processes) {
            try {
                p.getOutputStream().close(); // BenchNodeMain exits when its stdin closes
            } catch (IOException e) {
                p.destroy();
            }
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        processes.clear();
    }

    // ------------------------------------------------------------------ targets

    /** Gets and batch gets of a client with a location cache; fails when the cache answered nothing. */
    /** Target {@code tiffin-unhinted}: the get case of a remote client without read hints. */
    private void benchUnhinted(TiffinClient client, MemorySegment value, long size, Arena arena) throws Exception {
        List<String> all = operations;
        operations = List.of("get");
        try {
            benchTiffin("tiffin-unhinted", client, value, size, arena, false);
        } finally {
            operations = all;
        }
    }

    /** {@link #benchTiffin}; with a location cache, prints how many reads it answered and fails if none. */
    private void benchCached(String target, TiffinClient client, MemorySegment value, long size, Arena arena,
                             boolean withPut) throws Exception {
        Optional<LocationCache.Stats> before = client.locationCacheStats();
        benchTiffin(target, client, value, size, arena, withPut);
        if (before.isPresent() && (operations.contains("get") || operations.contains("batch_get"))) {
            LocationCache.Stats s = client.locationCacheStats().orElseThrow();
            long hits = s.hits() - before.get().hits();
            long misses = s.misses() - before.get().misses();
            System.out.printf("  (%s location cache: %d reads without a lookup, %d looked up)%n", target, hits, misses);
            if (hits == 0) {
                throw new IllegalStateException(target + ": the location cache answered no lookup: " + s);
            }
        }
    }

    private static long maxOf(long[] sizes) {
        return Arrays.stream(sizes).max().orElse(1);
    }

    /** The largest number of value bytes one case reads from: {@link #keyCount} values of its size. */
    private static long maxWorkingSet(long[] sizes) {
        return Arrays.stream(sizes).map(v -> keyCount(v) * v).max().orElse(1);
    }

    private static MemorySegment randomValue(Arena arena, long size) {
        MemorySegment v = arena.allocate(size, 64);
        SplittableRandom r = new SplittableRandom(size);
        for (long off = 0; off + 8 <= size; off += 8) {
            v.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
        }
        return v;
    }

    /** Key of client thread {@code thread}'s put case, one of 4 slots it upserts in turn. */
    private static String putKey(String prefix, int thread, long slot) {
        return prefix + "put-" + thread + "-" + slot;
    }

    /** Key {@code b} of client thread {@code thread}'s batch-put case (the same keys every call). */
    private static String batchPutKey(String prefix, int thread, int b) {
        return prefix + "batch-put-" + thread + "-" + b;
    }

    /** Keys stored per size: about 128 MiB worth, between 8 and 1024. */
    private static int keyCount(long size) {
        return (int) Math.max(8, Math.min(1024, (128L << 20) / size));
    }

    private int batchOf(long size, int keys) {
        return (int) Math.max(1, Math.min(Math.min(batchSize, keys), (64L << 20) / size));
    }

    private void benchTiffin(String target, TiffinClient client, MemorySegment value, long size, Arena arena,
                             boolean withPut) throws Exception {
        String prefix = target + "-" + Long.toHexString(System.nanoTime()) + "-" + size + "-";
        int keys = keyCount(size);
        List<String> names = new ArrayList<>(keys);
        for (int k = 0; k < keys; k++) {
            names.add(prefix + k);
            client.putFrom(prefix + k, value, PutOptions.DEFAULT);
        }
        verify(client, names.getFirst(), value, arena);
        if (withPut && operations.contains("put")) {
            PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
            measure(target, "put", size, 1, t -> i -> client.putFrom(putKey(prefix, t, i & 3), value, upsert));
        }
        if (withPut && operations.contains("batch_put")) {
            int batch = batchOf(size, keys);
            PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
            measure(target, "batch_put", size, batch, t -> {
                List<String> batchKeys = new ArrayList<>(batch);
                for (int b = 0; b < batch; b++) {
                    batchKeys.add(batchPutKey(prefix, t, b));
                }
                List<MemorySegment> values = java.util.Collections.nCopies(batch, value);
                return i -> {
                    for (KeyResult<Void> res : client.batchPutFrom(batchKeys, values, upsert)) {
                        if (!res.isOk()) {
                            throw new IllegalStateException("batch put of " + res.key() + " failed: " + res.code());
                        }
                    }
                };
            });
        }
        if (operations.contains("get")) {
            var hintsBefore = client.readHintStats();
            measure(target, "get", size, 1, t -> {
                MemorySegment dst = arena.allocate(size, 64);
                SplittableRandom r = new SplittableRandom(t);
                return i -> client.getInto(names.get(r.nextInt(keys)), dst);
            });
            if (hintsBefore.isPresent()) {
                var after = client.readHintStats().orElseThrow();
                System.out.printf(Locale.ROOT, "    (read hints: %d gets read while looked up, %d hints refuted)%n",
                        after.confirmed() - hintsBefore.get().confirmed(), after.refuted() - hintsBefore.get().refuted());
            }
            if (dataPlane && target.equals("tiffin-remote")) {
                benchDataPlane(client, names, size, arena);
            }
        }
        int batch = batchOf(size, keys);
        if (operations.contains("batch_get")) {
            measure(target, "batch_get", size, batch, t -> {
                List<MemorySegment> dsts = new ArrayList<>(batch);
                for (int b = 0; b < batch; b++) {
                    dsts.add(arena.allocate(size, 64));
                }
                SplittableRandom r = new SplittableRandom(t);
                List<String> chosen = new ArrayList<>(batch);
                return i -> {
                    chosen.clear();
                    int first = r.nextInt(keys);
                    for (int b = 0; b < batch; b++) {
                        chosen.add(names.get((first + b) % keys));
                    }
                    for (KeyResult<Long> res : client.batchGetInto(chosen, dsts)) {
                        if (!res.isOk()) {
                            throw new IllegalStateException("batch get of " + res.key() + " failed: " + res.code());
                        }
                    }
                };
            });
        }
        // the case's keys, its puts' and batch puts' included (the prefix holds no regex metacharacter)
        client.removeByRegex("^" + prefix, true);
    }

    /**
     * Target {@code tiffin-data-plane}: each get is only the node read of a remote get, a {@code DATA_READ}
     * over a pooled blocking connection to the first memory replica that one lookup per key (before the
     * case) named. No lease is held, which is safe here only because nothing else writes or removes the
     * bench's keys during the case.
     */
    private void benchDataPlane(TiffinClient client, List<String> names, long size, Arena arena) throws Exception {
        List<ReplicaDescriptor> replicas = new ArrayList<>(names.size());
        for (String name : names) {
            ObjectLocation loc = client.locate(name).orElseThrow(
                    () -> new IllegalStateException(name + " vanished before the data-plane case"));
            replicas.add(loc.replicas().stream().filter(d -> d.type() == ReplicaType.MEMORY).findFirst()
                    .orElseThrow(() -> new IllegalStateException(name + " has no memory replica")));
        }
        try (BlockingConnectionPool pool = new BlockingConnectionPool("bench-data-plane", TransportSettings.defaults(),
                "bench-kv")) {
            measure("tiffin-data-plane", "get", size, 1, t -> {
                MemorySegment dst = arena.allocate(size, 64);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    ReplicaDescriptor d = replicas.get(r.nextInt(replicas.size()));
                    pool.call(d.endpoint(), Opcode.DATA_READ, DataRequest.newBuilder().setSegment(d.segment()).setMountEpoch(d.mountEpoch())
                            .setOffset(d.offset()).setLength(d.size()).build(), null, Empty.parser(), dst);
                };
            });
        }
    }

    /**
     * Puts and gets values of every measured size (at most 16 MiB) from {@code --clients} threads for
     * {@code --cluster-warmup} seconds in all, unmeasured, so the JIT of the bench JVM and of the node
     * processes has compiled the data path and every client thread's connections exist before the first
     * case runs (without it the first case of a run measured about half of the later ones).
     */
    private void warmCluster(TiffinClient client, Arena arena, long[] valueSizes) throws Exception {
        if (clusterWarmup <= 0) {
            return;
        }
        PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);
        double perSize = clusterWarmup / valueSizes.length;
        for (long wanted : valueSizes) {
            long size = Math.min(wanted, 16L << 20);
            MemorySegment value = randomValue(arena, size);
            String prefix = "bench-kv-warm-" + size + "-";
            for (int k = 0; k < 8; k++) {
                client.putFrom(prefix + k, value, PutOptions.DEFAULT);
            }
            Op[] ops = new Op[clients];
            for (int t = 0; t < clients; t++) {
                int thread = t;
                MemorySegment dst = arena.allocate(size, 64);
                // Puts go to keys that are never read: an upsert of a key read moments ago would meet its
                // read lease (OBJECT_HAS_LEASE), as in the measured put case.
                ops[t] = i -> {
                    if ((i & 3) == 0) {
                        client.putFrom(prefix + "put-" + thread, value, upsert);
                    } else {
                        client.getInto(prefix + (i & 7), dst);
                    }
                };
            }
            runThreads(ops, perSize, null);
        }
        client.removeByRegex("^bench-kv-warm-", true);
    }

    private static void verify(TiffinClient client, String key, MemorySegment value, Arena arena) {
        MemorySegment dst = arena.allocate(value.byteSize(), 64);
        client.getInto(key, dst);
        if (dst.mismatch(value) != -1) {
            throw new IllegalStateException("get of " + key + " returned other bytes than were put");
        }
    }

    private void benchLocal(long[] valueSizes, Arena arena) throws Exception {
        long need = 0;
        for (long s : valueSizes) {
            need += (long) keyCount(s) * s + 8L * clients * s;
        }
        long segment = Math.max(Sizes.parse(segmentSize), need + (256L << 20));
        TiffinConfig config = TiffinConfig.builder().set("master.host", "127.0.0.1").set("master.port", "0")
                .set("master.admin-port", "0").set("node.port", "0").set("node.segment-size", Long.toString(segment))
                .set("client.local-memcpy", "true").build();
        try (Tiffin local = Tiffin.embedded(config)) {
            for (long size : valueSizes) {
                benchTiffin("tiffin-local", local.client(), randomValue(arena, size), size, arena, true);
            }
        }
    }

    private void benchSocket(SocketBaseline socket, long size, Arena arena) throws Exception {
        measure("socket", "put", size, 1, t -> {
            SocketChannel ch = socket.connect();
            ByteBuffer src = arena.allocate(size, 64).asByteBuffer();
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            ByteBuffer ack = ByteBuffer.allocateDirect(1);
            return i -> {
                header.clear().putLong(0, -size).putLong(8, -1);
                SocketBaseline.writeFully(ch, header);
                SocketBaseline.writeFully(ch, src.clear());
                SocketBaseline.readFully(ch, ack.clear());
            };
        });
        measure("socket", "get", size, 1, t -> {
            SocketChannel ch = socket.connect();
            ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            return i -> {
                header.clear().putLong(0, size).putLong(8, -1);
                SocketBaseline.writeFully(ch, header);
                SocketBaseline.readFully(ch, dst.clear());
            };
        });
        if (spreadBaseline) {
            int keys = keyCount(size);
            measure("socket-spread", "get", size, 1, t -> {
                SocketChannel ch = socket.connect();
                ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
                ByteBuffer header = ByteBuffer.allocateDirect(16);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    header.clear().putLong(0, size).putLong(8, r.nextInt(keys) * size);
                    SocketBaseline.writeFully(ch, header);
                    SocketBaseline.readFully(ch, dst.clear());
                };
            });
        }
        if (socketPrefix > 0) {
            int keys = keyCount(size);
            measure("socket-prefixed", "get", size, 1, t -> {
                SocketChannel ch = socket.connect();
                ByteBuffer prefix = ByteBuffer.allocateDirect(socketPrefix);
                ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
                ByteBuffer[] both = {prefix, dst};
                ByteBuffer header = ByteBuffer.allocateDirect(16);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    header.clear().putLong(0, size).putLong(8, SocketBaseline.PREFIXED | (r.nextInt(keys) * size));
                    SocketBaseline.writeFully(ch, header);
                    prefix.clear();
                    dst.clear();
                    while (dst.hasRemaining()) {
                        if (ch.read(both) < 0) {
                            throw new IOException("connection closed");
                        }
                    }
                };
            });
        }
    }

    private void benchMemcpy(MemorySegment value, long size, Arena arena) throws Exception {
        measure("memcpy", "get", size, 1, t -> {
            MemorySegment src = arena.allocate(size, 64);
            MemorySegment.copy(value, 0, src, 0, size);
            MemorySegment dst = arena.allocate(size, 64);
            return i -> MemorySegment.copy(src, 0, dst, 0, size);
        });
    }

    private void benchRedis(MemorySegment valueSegment, long size) throws Exception {
        String[] hp = BenchSupport.hostPort(redis);
        byte[] value = valueSegment.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        int keys = keyCount(size);
        byte[][] names = new byte[keys][];
        String prefix = "tiffin-bench-" + Long.toHexString(System.nanoTime()) + "-" + size + "-";
        try (Jedis j = redisConnection(hp)) {
            for (int k = 0; k < keys; k++) {
                names[k] = (prefix + k).getBytes(StandardCharsets.UTF_8);
                j.set(names[k], value);
            }
            if (!Arrays.equals(j.get(names[0]), value)) {
                throw new IllegalStateException("Redis returned other bytes than were set");
            }
        }
        List<Jedis> open = new ArrayList<>();
        try {
            measure("redis", "put", size, 1, t -> {
                Jedis j = connectRedis(hp, open);
                return i -> j.set(putKey(prefix, t, i & 3).getBytes(StandardCharsets.UTF_8), value);
            });
            measure("redis", "get", size, 1, t -> {
                Jedis j = connectRedis(hp, open);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    if (j.get(names[r.nextInt(keys)]) == null) {
                        throw new IllegalStateException("Redis lost a key");
                    }
                };
            });
            int batch = batchOf(size, keys);
            measure("redis", "batch_get", size, batch, t -> {
                Jedis j = connectRedis(hp, open);
                SplittableRandom r = new SplittableRandom(t);
                byte[][] chosen = new byte[batch][];
                return i -> {
                    int first = r.nextInt(keys);
                    for (int b = 0; b < batch; b++) {
                        chosen[b] = names[(first + b) % keys];
                    }
                    j.mget(chosen);
                };
            });
            if (operations.contains("batch_put")) {
                measure("redis", "batch_put", size, batch, t -> {
                    Jedis j = connectRedis(hp, open);
                    byte[][] keysAndValues = new byte[2 * batch][];
                    for (int b = 0; b < batch; b++) {
                        keysAndValues[2 * b] = batchPutKey(prefix, t, b).getBytes(StandardCharsets.UTF_8);
                        keysAndValues[2 * b + 1] = value;
                    }
                    return i -> j.mset(keysAndValues);
                });
            }
        } finally {
            open.forEach(Jedis::close);
            try (Jedis j = redisConnection(hp)) {
                j.del(names);
                for (int t = 0; t < clients; t++) {
                    for (int k = 0; k < 4; k++) {
                        j.del(putKey(prefix, t, k).getBytes(StandardCharsets.UTF_8));
                    }
                    for (int b = 0; b < batchOf(size, keys); b++) {
                        j.del(batchPutKey(prefix, t, b).getBytes(StandardCharsets.UTF_8));
                    }
                }
            }
        }
    }

    /**
     * Fails before any case runs (they take minutes) when {@code --redis} names no Redis server: not host:port,
     * or nothing there answers PING.
     */
    private void checkRedis() {
        String[] hp;
        try {
            hp = BenchSupport.hostPort(redis);
            Integer.parseInt(hp[1]);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--redis " + redis + ": expected host:port"
                    + " of a Redis server, e.g. 127.0.0.1:6379");
        }
        try (Jedis j = redisConnection(hp)) {
            j.ping();
        } catch (RuntimeException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--redis " + redis + ": no Redis server"
                    + " answers there (" + e.getMessage() + "); start one (redis-server --port " + hp[1]
                    + " --save \"\" --appendonly no) or leave --redis out");
        }
    }

    /**
     * A Redis connection in the server's default protocol (RESP2 for Redis): no HELLO is sent, so Jedis logs
     * no negotiation warning per connection and servers without HELLO answer too.
     */
    private static Jedis redisConnection(String[] hp) {
        return new Jedis(new HostAndPort(hp[0], Integer.parseInt(hp[1])),
                DefaultJedisClientConfig.builder().serverDefaultProtocol().timeoutMillis(30_000).build());
    }

    private static Jedis connectRedis(String[] hp, List<Jedis> open) {
        Jedis j = redisConnection(hp);
        synchronized (open) {
            open.add(j);
        }
        return j;
    }

    // ------------------------------------------------------------------ measuring

    /**
     * Runs {@code clients} threads of {@code factory}'s operation for the warm-up and then the measured
     * duration; records and prints one row. {@code keysPerOp} counts keys per call (batch size).
     */
    private void measure(String target, String operation, long size, int keysPerOp, OpFactory factory) throws Exception {
        Op[] ops = new Op[clients];
        for (int t = 0; t < clients; t++) {
            ops[t] = factory.create(t);
        }
        runThreads(ops, warmup, null);
        Histogram[] hist = new Histogram[clients];
        long[] calls = new long[clients];
        long elapsed = runThreads(ops, duration, new Object[] {hist, calls});
        Histogram all = new Histogram(3);
        long totalCalls = 0;
        for (int t = 0; t < clients; t++) {
            all.add(hist[t]);
            totalCalls += calls[t];
        }
        double seconds = elapsed / 1e9;
        double opsPerSec = totalCalls * (double) keysPerOp / seconds;
        Result r = new Result(target, operation, size, clients, opsPerSec, opsPerSec * size / 1e9,
                all.getValueAtPercentile(50) / 1000.0, all.getValueAtPercentile(99) / 1000.0, round);
        results.add(r);
        System.out.printf(Locale.ROOT, "%-14s %-9s %8s  %10.0f ops/s  %7.3f GB/s  p50 %9.1f us  p99 %9.1f us%s%n",
                target, operation, Sizes.format(size), r.opsPerSec(), r.gbPerSec(), r.p50Us(), r.p99Us(),
                keysPerOp > 1 ? "  (" + keysPerOp + " keys per call; latency per call)" : "");
    }

    /** Runs every op on its own thread for {@code seconds}; returns the elapsed nanos. */
    private long runThreads(Op[] ops, double seconds, Object[] sinks) throws Exception {
        if (seconds <= 0) {
            return 0;
        }
        Histogram[] hist = sinks == null ? null : (Histogram[]) sinks[0];
        long[] calls = sinks == null ? null : (long[]) sinks[1];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(ops.length);
        long[] deadline = new long[1];
        for (int t = 0; t < ops.length; t++) {
            int id = t;
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            if (hist != null) {
                hist[t] = h;
            }
            Thread th = new Thread(() -> {
                long n = 0;
                try {
                    go.await();
                    long end = deadline[0];
                    long now = System.nanoTime();
                    while (now < end && failure.get() == null) {
                        ops[id].run(n++);
                        long after = System.nanoTime();
                        h.recordValue(Math.min(after - now, h.getHighestTrackableValue()));
                        now = after;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    if (calls != null) {
                        calls[id] = n;
                    }
                    done.countDown();
                }
            }, "bench-kv-" + t);
            th.setDaemon(true);
            th.start();
        }
        long start = System.nanoTime();
        deadline[0] = start + (long) (seconds * 1e9);
        go.countDown();
        done.await();
        long elapsed = System.nanoTime() - start;
        if (failure.get() != null) {
            throw new IllegalStateException("a bench thread failed: " + failure.get(), failure.get());
        }
        return elapsed;
    }

    private static void printRatios(List<Result> results, String title) {
        Map<String, Result> byKey = new LinkedHashMap<>();
        for (Result r : results) {
            byKey.put(r.key(), r);
        }
        System.out.println();
        System.out.println(title);
        for (Result r : results) {
            if (!r.operation().equals("get") || !r.target().startsWith("tiffin")) {
                continue;
            }
            boolean mapped = r.target().equals("tiffin-shm");
            boolean remote = !r.target().equals("tiffin-local") && !mapped;
            String base = remote ? "socket" : "memcpy";
            Result b = byKey.get(base + "/get/" + r.valueSize());
            Result rd = byKey.get("redis/get/" + r.valueSize());
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %-14s get %8s: %.2fx %s",
                    r.target(), Sizes.format(r.valueSize()), b == null ? Double.NaN : r.gbPerSec() / b.gbPerSec(), base));
            Result spreadBase = byKey.get("socket-spread/get/" + r.valueSize());
            if (spreadBase != null && remote) {
                line.append(String.format(Locale.ROOT, ", %.2fx socket-spread", r.gbPerSec() / spreadBase.gbPerSec()));
            }
            Result socketBase = byKey.get("socket/get/" + r.valueSize());
            if (mapped && socketBase != null) {
                line.append(String.format(Locale.ROOT, ", %.2fx socket", r.gbPerSec() / socketBase.gbPerSec()));
            }
            if (rd != null && !r.target().equals("tiffin-local")) {
                line.append(String.format(Locale.ROOT, ", %.2fx redis", r.gbPerSec() / rd.gbPerSec()));
            }
            Result uncached = byKey.get("tiffin-uncached/get/" + r.valueSize());
            if (uncached != null && r.target().equals("tiffin-remote")) {
                line.append(String.format(Locale.ROOT, ", %.2fx tiffin-uncached", r.gbPerSec() / uncached.gbPerSec()));
            }
            Result unhinted = byKey.get("tiffin-unhinted/get/" + r.valueSize());
            if (unhinted != null && r.target().equals("tiffin-remote")) {
                line.append(String.format(Locale.ROOT, ", %.2fx tiffin-unhinted", r.gbPerSec() / unhinted.gbPerSec()));
            }
            System.out.println(line);
        }
        for (Result r : results) {
            // batches against Redis's MGET / MSET of the same keys per call
            Result rd = byKey.get("redis/" + r.operation() + "/" + r.valueSize());
            if (rd != null && r.target().startsWith("tiffin") && !r.target().equals("tiffin-local")
                    && (r.operation().equals("batch_get") || r.operation().equals("batch_put"))) {
                System.out.println(String.format(Locale.ROOT, "  %-14s %-9s %8s: %.2fx redis", r.target(),
                        r.operation(), Sizes.format(r.valueSize()), r.gbPerSec() / rd.gbPerSec()));
            }
        }
        for (Result r : results) {
            Result rd = byKey.get("redis/get/" + r.valueSize());
            if (rd == null || !r.operation().equals("get")
                    || !(r.target().equals("socket") || r.target().equals("socket-spread"))) {
                continue;
            }
            // What a get over loopback TCP can reach against Redis: the plain socket moving the same bytes.
            System.out.println(String.format(Locale.ROOT, "  %-14s get %8s: %.2fx redis (bound for a get over TCP)",
                    r.target(), Sizes.format(r.valueSize()), r.gbPerSec() / rd.gbPerSec()));
        }
    }

    /**
     * A plain loopback TCP server for the socket baseline: per connection a thread that reads a 16-byte
     * request (n, offset) — n > 0: send n bytes, from the connection's one buffer when offset is -1, else
     * from the spread values at offset, preceded by the prefix bytes when offset has the {@link #PREFIXED}
     * flag; n < 0: receive -n bytes, answer one byte. Thread-safe; {@link
     * #close()} stops it.
     */
    static final class SocketBaseline implements AutoCloseable {
        private final ServerSocketChannel server;
        private final int prefixBytes;
        private final ByteBuffer data;
        /** Distinct values for the spread baseline (random bytes), or null. */
        private final ByteBuffer spread;
        private final List<SocketChannel> channels = new ArrayList<>();

        /** Flag in a request's offset: send the spread value at the offset preceded by the prefix bytes. */
        static final long PREFIXED = 1L << 62;

        SocketBaseline(long maxSize, long spreadBytes) throws IOException {
            this(maxSize, 0, spreadBytes);
        }

        SocketBaseline(long maxSize, int prefixBytes, long spreadBytes) throws IOException {
            this.prefixBytes = prefixBytes;
            server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            data = ByteBuffer.allocateDirect((int) maxSize);
            spread = spreadBytes > 0 ? ByteBuffer.allocateDirect((int) spreadBytes) : null;
            if (spread != null) {
                MemorySegment m = MemorySegment.ofBuffer(spread);
                SplittableRandom r = new SplittableRandom(spreadBytes);
                for (long off = 0; off + 8 <= spreadBytes; off += 8) {
                    m.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
                }
            }
            Thread acceptor = new Thread(this::acceptLoop, "bench-socket-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        /** Closes every connection so far, both ends: their serving threads end and drop their buffers. */
        void closeConnections() throws IOException {
            synchronized (channels) {
                for (SocketChannel ch : channels) {
                    ch.close();
                }
                channels.clear();
            }
        }

        SocketChannel connect() throws IOException {
            SocketChannel ch = SocketChannel.open(server.getLocalAddress());
            ch.socket().setTcpNoDelay(true);
            synchronized (channels) {
                channels.add(ch);
            }
            return ch;
        }

        private void acceptLoop() {
            while (server.isOpen()) {
                try {
                    SocketChannel ch = server.accept();
                    ch.socket().setTcpNoDelay(true);
                    synchronized (channels) {
                        channels.add(ch);
                    }
                    Thread t = new Thread(() -> serve(ch), "bench-socket-serve");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(SocketChannel ch) {
            try {
                serveUntilClosed(ch);
            } catch (IOException e) {
                // the client closed the connection
            } catch (RuntimeException | Error e) {
                // out of direct memory, say: close, so the client fails instead of waiting for an answer
                System.err.println("socket baseline: a serving thread failed: " + e);
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // closing is all that is left to do
                }
            }
        }

        private void serveUntilClosed(SocketChannel ch) throws IOException {
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            ByteBuffer ack = ByteBuffer.allocateDirect(1);
            ByteBuffer mine = data.duplicate();
            ByteBuffer values = spread == null ? null : spread.duplicate();
            ByteBuffer sink = ByteBuffer.allocateDirect(data.capacity());
            ByteBuffer prefix = ByteBuffer.allocateDirect(Math.max(1, prefixBytes));
            while (true) {
                readFully(ch, header.clear());
                long n = header.getLong(0);
                long offset = header.getLong(8);
                if (n > 0 && offset >= 0 && (offset & PREFIXED) != 0) {
                    int at = (int) (offset & ~PREFIXED);
                    ByteBuffer[] both = {prefix.clear().limit(prefixBytes), values.clear().position(at).limit((int) (at + n))};
                    while (both[1].hasRemaining()) {
                        ch.write(both);
                    }
                } else if (n > 0 && offset >= 0 && values != null) {
                    writeFully(ch, values.clear().position((int) offset).limit((int) (offset + n)));
                } else if (n > 0) {
                    writeFully(ch, mine.clear().limit((int) n));
                } else {
                    readFully(ch, sink.clear().limit((int) -n));
                    writeFully(ch, ack.clear());
                }
            }
        }

        static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new IOException("connection closed");
                }
            }
        }

        static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            synchronized (channels) {
                for (SocketChannel ch : channels) {
                    ch.close();
                }
            }
        }
    }
}
