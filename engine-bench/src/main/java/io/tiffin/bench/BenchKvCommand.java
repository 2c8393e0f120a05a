package io.tiffin.bench;

import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.Durations;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.transport.TlsSettings;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench kv}: put, get and batch get end to end through a cluster on loopback, and in the
 * same run the same transfers through a plain loopback socket, an in-process memory copy, a client in
 * the same JVM as a node ({@code tiffin-local}) and optionally Redis, with Tiffin's ratio to each.
 *
 * <p>The cluster is a master in this JVM plus {@code --nodes} {@code tiffin node} processes ({@link KvCluster}:
 * {@code bin/tiffin node} with the launcher's defaults when the bench runs from the distribution), or the
 * running cluster at {@code --master}.
 * Remote clients never copy in memory ({@code localMemcpy=false}, no shared memory); with
 * {@code --shared-memory-dir} the nodes keep their segments in shared memory and target
 * {@code tiffin-shm} is a client (of this process, on the nodes' host) that maps them. With
 * {@code --location-cache-ttl} (default 2 s, the client's default) the Tiffin clients reuse lookups;
 * {@code --uncached-baseline} adds {@code tiffin-uncached}, tiffin-remote without that reuse. With {@code --tls}
 * a second cluster (master here, as many node processes) serves TLS with a certificate made for the run
 * ({@link BenchTls}), and target {@code tiffin-remote-tls}, tiffin-remote's client over TLS, is measured
 * right after tiffin-remote, so the ratio of the two is TLS's cost ({@code --tls-provider} picks the engine). Each measurement runs
 * {@code --clients} threads, each with one request at a time, for {@code --duration} seconds after
 * {@code --warmup} seconds; latency percentiles come from HdrHistogram (for batch get, of one batch
 * call). Puts overwrite a small ring of keys per thread (upsert) so long runs do not fill the pool.
 *
 * <p>This class holds the options and their checks and runs the parts: {@link KvCluster} (master and
 * node processes), the {@link KvTarget}s ({@link TiffinTarget}, {@link SocketTarget} with its
 * {@link SocketBaseline} server, {@link MemcpyTarget}, {@link RedisTarget}), {@link KvLoad} (the load
 * threads and histograms) and {@link KvReport} (table, ratios, medians, CSV); the clients' options come
 * from {@link BenchClientOptions}.
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

    @Option(names = "--replicas", defaultValue = "1", description = "memory replicas of every object the Tiffin"
            + " targets put, on as many nodes (at most --nodes when the bench starts the cluster; default"
            + " ${DEFAULT-VALUE})")
    int replicas;

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

    @Option(names = "--tls",
            description = "also start a TLS cluster (master here, --nodes node processes, a certificate made for the run)"
                    + " and measure target tiffin-remote-tls: tiffin-remote's client over TLS, right after"
                    + " tiffin-remote; not with --master")
    boolean tls;

    @Option(names = "--tls-provider", defaultValue = "auto",
            description = "TLS engine of --tls's cluster and client: auto (OpenSSL where it loads), openssl or jdk"
                    + " (transport.tls.provider; default ${DEFAULT-VALUE})")
    String tlsProvider;

    @Option(names = "--redis", description = "host:port of a Redis server to run the same workload against")
    String redis;

    @Option(names = "--operations", defaultValue = "put,get,batch_get", split = ",",
            description = "operations to measure on the Tiffin targets, of put, get, batch_get and batch_put"
                    + " (default ${DEFAULT-VALUE}); with --redis, batch_put adds Redis MSET")
    List<String> operations;

    @Option(names = "--no-local", description = "skip the tiffin-local target")
    boolean noLocal;

    @Option(names = "--verify-checksums", defaultValue = "true", arity = "1",
            description = "whether the Tiffin clients check what they read against each object's CRC32C"
                    + " (client.verify-checksums; default ${DEFAULT-VALUE})")
    boolean verifyChecksums;

    @Option(names = "--csv", description = "append rows: target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us")
    Path csv;

    /** A client of {@code options} that verifies checksums as {@code --verify-checksums} says. */
    private TiffinClient connect(TiffinClient.Options options) {
        return TiffinClient.connect(options.toBuilder().verifyChecksums(verifyChecksums).build());
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchKvCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Duration cacheTtl = checkOptions();
        PrintStream out = System.out;
        KvWorkload workload = new KvWorkload(sizes.stream().mapToLong(Sizes::parse).toArray(), operations, batchSize,
                replicas);
        KvReport report = new KvReport(out);
        KvLoad load = new KvLoad(clients, warmup, duration, report);
        try (KvCluster cluster = master != null ? KvCluster.existing(master)
                : KvCluster.start(nodes, segmentSize, nodeIoThreads, sharedMemoryDir, out, null);
             BenchTls pki = tls ? BenchTls.create(TlsSettings.Provider.parse(tlsProvider)) : null;
             KvCluster tlsCluster = tls ? KvCluster.start(nodes, segmentSize, nodeIoThreads, null, out, pki) : null;
             Arena arena = Arena.ofShared()) {
            String address = cluster.address();
            out.printf("Cluster: master %s%s; %d client threads, %.1f s per case after %.1f s warm-up%s%n",
                    address, master == null ? " (in this JVM) + " + nodes + " node processes of " + segmentSize : "",
                    clients, duration, warmup, replicas == 1 ? "" : "; Tiffin puts write " + replicas + " replicas");
            try (TiffinClient remote = connect(BenchClientOptions.kvRemote(address, readHints, cacheTtl));
                 TiffinClient unhinted = unhintedBaseline
                         ? connect(BenchClientOptions.kvUnhinted(address, cacheTtl)) : null;
                 TiffinClient shm = sharedMemoryDir == null ? null
                         : connect(BenchClientOptions.kvShm(address, readHints, cacheTtl));
                 TiffinClient uncached = uncachedBaseline
                         ? connect(BenchClientOptions.kvUncached(address, readHints)) : null;
                 TiffinClient remoteTls = tlsCluster == null ? null : connect(BenchClientOptions
                         .kvRemoteTls(tlsCluster.address(), readHints, cacheTtl, pki.clientSettings()));
                 SocketBaseline socket = new SocketBaseline(workload.maxSize(), socketPrefix,
                         spreadBaseline || socketPrefix > 0 ? workload.maxWorkingSet() : 0)) {
                // per size, in this order; then Redis for every size
                List<KvTarget> targets = new ArrayList<>();
                targets.add(TiffinTarget.remote(remote, load, workload, out, dataPlane));
                if (remoteTls != null) {
                    out.printf("TLS cluster: master %s (%s)%n", tlsCluster.address(),
                            io.tiffin.core.transport.TlsContexts.load(pki.clientSettings()));
                    targets.add(TiffinTarget.remoteTls(remoteTls, load, workload, out));
                }
                if (unhinted != null && workload.measures("get")) {
                    targets.add(TiffinTarget.unhinted(unhinted, load, workload, out));
                }
                if (uncached != null) {
                    targets.add(TiffinTarget.uncached(uncached, load, workload, out));
                }
                if (shm != null) {
                    targets.add(TiffinTarget.shm(shm, load, workload, out, sharedMemoryDir));
                }
                targets.add(new SocketTarget(socket, load, spreadBaseline, socketPrefix));
                targets.add(new MemcpyTarget(load));
                KvTarget redisTarget = redis == null ? null : new RedisTarget(redis, load, workload);

                TiffinTarget.warmCluster(remote, load, workload.valueSizes(), clusterWarmup, arena);
                if (remoteTls != null) {
                    TiffinTarget.warmCluster(remoteTls, load, workload.valueSizes(), clusterWarmup, arena);
                }
                for (int round = 1; round <= rounds; round++) {
                    if (rounds > 1) {
                        out.printf("Round %d of %d%n", round, rounds);
                    }
                    report.round(round);
                    // a round's values and buffers die with it (every thread using them has been joined)
                    try (Arena roundArena = Arena.ofShared()) {
                        measureRound(workload.valueSizes(), targets, redisTarget, roundArena);
                    }
                }
            }
            if (!noLocal) {
                measureLocal(workload, load, out, arena); // counts as the last round
            }
        }
        report.finish(rounds, csv);
        return 0;
    }

    /** Checks the options before anything starts; returns the location cache's TTL. */
    private Duration checkOptions() {
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
        try {
            TlsSettings.Provider.parse(tlsProvider);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tls-provider: '" + tlsProvider
                    + "' is not auto, openssl or jdk");
        }
        if (tls && master != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tls starts a TLS cluster of its own;"
                    + " it cannot be combined with --master");
        }
        if (nodes < 1 || clients < 1 || batchSize < 1 || rounds < 1 || duration <= 0 || warmup < 0
                || clusterWarmup < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--nodes, --clients, --batch-size and"
                    + " --rounds must be >= 1, --duration > 0, --warmup and --cluster-warmup >= 0");
        }
        if (replicas < 1 || (master == null && replicas > nodes)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--replicas must be >= 1"
                    + (master == null ? " and at most --nodes (" + nodes + "): each replica goes to another node"
                            : ""));
        }
        checkSizes();
        Duration cacheTtl;
        try {
            cacheTtl = Durations.parse(locationCacheTtl, ChronoUnit.MILLIS);
        } catch (RuntimeException e) {
            cacheTtl = null;
        }
        if (cacheTtl == null || cacheTtl.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--location-cache-ttl = " + locationCacheTtl
                    + " (expected: a duration >= 0 such as 1s or 500ms; 0 = off)");
        }
        if (redis != null) {
            try {
                RedisTarget.check(redis);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
        }
        return cacheTtl;
    }

    /**
     * Every {@code --sizes} entry is a size of at least 1 byte that the socket baseline can hold (a Java buffer:
     * under 2 GiB) and, for a cluster started here, that one node's segment holds, with room in the cluster for
     * a case's keys ({@link #caseBytes}).
     */
    private void checkSizes() {
        long segment = parseSize("--segment-size", segmentSize);
        for (String text : sizes) {
            long size = parseSize("--sizes", text);
            if (size < 1 || size > MAX_VALUE_SIZE) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--sizes: " + text + " is not between 1"
                        + " byte and " + Sizes.format(MAX_VALUE_SIZE) + " (the socket baseline's buffers are Java"
                        + " buffers, under 2 GiB)");
            }
            if (master != null) {
                continue; // a running cluster's segments are its own; a put too large for them fails there
            }
            if (size > segment) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--sizes: a value of " + text
                        + " does not fit one node's segment (--segment-size " + segmentSize + "); raise"
                        + " --segment-size to at least " + Sizes.format(size));
            }
            long need = caseBytes(size);
            if (need > segment * nodes) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--sizes: a case of " + text
                        + " values keeps about " + Sizes.format(need) + " in the cluster (" + KvWorkload.keyCount(size)
                        + " keys, " + PUT_SLOTS + " put keys per client"
                        + " thread and their replacements, " + replicas + " replica(s) each), more than " + nodes
                        + " node(s) of " + segmentSize
                        + " hold; raise --segment-size to at least " + Sizes.format(divideUp(need, nodes)));
            }
        }
    }

    /** Largest value size: the socket baseline holds a value in one Java buffer. */
    static final long MAX_VALUE_SIZE = Integer.MAX_VALUE - 63;
    /** Keys each client thread's put case upserts in turn ({@link KvWorkload#putKey}). */
    private static final int PUT_SLOTS = 4;

    /**
     * Bytes a case of {@code size} values keeps in the cluster at most: its keys, every client thread's put
     * keys and batch-put keys, and per thread one more put or batch being written while the value it replaces
     * is still stored; each of them {@code --replicas} times.
     */
    long caseBytes(long size) {
        int keys = KvWorkload.keyCount(size);
        long values = keys + (long) clients * (PUT_SLOTS + 1);
        if (operations.contains("batch_put")) {
            int batch = new KvWorkload(new long[] {size}, operations, batchSize).batchOf(size, keys);
            values += 2L * clients * batch;
        }
        return values * size * replicas;
    }

    private static long divideUp(long a, long b) {
        return (a + b - 1) / b;
    }

    private long parseSize(String flag, String text) {
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), flag + ": " + e.getMessage());
        }
    }

    /** One round: every size's cases on every target, then Redis's. */
    private static void measureRound(long[] valueSizes, List<KvTarget> targets, KvTarget redisTarget, Arena arena)
            throws Exception {
        for (long size : valueSizes) {
            MemorySegment value = KvWorkload.randomValue(arena, size);
            for (KvTarget target : targets) {
                target.measure(size, value, arena);
            }
        }
        if (redisTarget != null) {
            for (long size : valueSizes) {
                redisTarget.measure(size, KvWorkload.randomValue(arena, size), arena);
            }
        }
    }

    /** Target {@code tiffin-local}: an embedded Tiffin whose segment holds every size's keys. */
    private void measureLocal(KvWorkload workload, KvLoad load, PrintStream out, Arena arena) throws Exception {
        long need = 0;
        for (long s : workload.valueSizes()) {
            need += (long) KvWorkload.keyCount(s) * s + 8L * clients * s;
        }
        long segment = Math.max(Sizes.parse(segmentSize), need + (256L << 20));
        TiffinConfig config = TiffinConfig.builder().set("master.host", "127.0.0.1").set("master.port", "0")
                .set("master.admin-port", "0").set("node.port", "0").set("node.segment-size", Long.toString(segment))
                .set("client.local-memcpy", "true").build();
        try (Tiffin local = Tiffin.embedded(config)) {
            TiffinTarget target = TiffinTarget.local(local.client(), load, workload, out);
            for (long size : workload.valueSizes()) {
                target.measure(size, KvWorkload.randomValue(arena, size), arena);
            }
        }
    }
}
