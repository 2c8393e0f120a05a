package io.tiffin.bench;

import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench hotcache}: the upstream hot-cache experiment on a loopback cluster. A master and
 * two nodes A and B run in this process; a writer puts {@code --keys} objects of {@code --value-size}
 * into node A's segment; a reader "on node B" (a client that never uses same-JVM memory copies, so every
 * read of A's replica crosses the data plane) reads every key {@code --rounds} times, with the hot
 * cache off and then on. Prints per-key latency of the first round and the average over all rounds
 * (first included), for get and for batch get, and the change; the average of rounds 2..N (with the cache on,
 * all hits) as time and GB/s per read, beside what one memory copy of a value costs on this machine.
 *
 * <p>After the first round of the cache-on run the bench waits for the asynchronous fills to land
 * before round two, so that the figure measures serving from the cache, not a race with the fill ring.
 *
 * <p>Not thread-safe: one instance per invocation.
 */
@Command(name = "hotcache", mixinStandardHelpOptions = true,
        description = "Client hot cache: repeated remote get and batch get with the cache off and on.")
public final class BenchHotCacheCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--keys", defaultValue = "25", description = "Objects (default: ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--value-size", defaultValue = "10MB", paramLabel = "SIZE",
            description = "Object size, e.g. 10MB or 25MB (1024-based) (default: ${DEFAULT-VALUE}).")
    String valueSize;

    @Option(names = "--rounds", defaultValue = "10", description = "Reads of every key (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--batch-size", defaultValue = "5", description = "Keys per batch get (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--cache-size", paramLabel = "SIZE",
            description = "Hot cache size (default: enough for all objects, rounded up to blocks, plus one block).")
    String cacheSize;

    @Option(names = "--block-size", defaultValue = "16MiB", paramLabel = "SIZE",
            description = "Hot cache block size (default: ${DEFAULT-VALUE}).")
    String blockSize;

    @Option(names = "--policy", defaultValue = "lru", description = "Hot cache policy, with optional settings as"
            + " in hotcache.policy.<name>.*: s3-fifo:small-share=0.2 (default: ${DEFAULT-VALUE}).")
    String policy;

    @Option(names = "--api", defaultValue = "into", paramLabel = "into|get|view",
            description = "into: getInto/batchGetInto into reused off-heap buffers (how inference engines read KV "
                    + "blocks); get (or bytes): get/batchGet returning new byte arrays (then the JVM's allocation of large "
                    + "arrays is part of every read); view: zero-copy getPinned/batchGetPinned with the cache on "
                    + "(a hit pins the cache's blocks, no copy), measured against getInto/batchGetInto with the "
                    + "cache off, the fastest way to read without the cache (default: ${DEFAULT-VALUE}).")
    String api;

    @Option(names = "--location-cache-ttl", defaultValue = "2s", paramLabel = "DURATION",
            description = "The reader's client.location-cache-ttl, cache off and on: how long a lookup is reused, so a "
                    + "hot-cache hit within it asks the master nothing; 0 = off, every read looks the key up "
                    + "(default: ${DEFAULT-VALUE}, the client's default).")
    String locationCacheTtl;

    @Option(names = "--warmup-passes", defaultValue = "2",
            description = "Unmeasured passes of every method with the cache off and on before measuring, each with a"
                    + " new client, so the JIT has compiled both read paths (default: ${DEFAULT-VALUE}).")
    int warmupPasses;

    @Option(names = "--csv", paramLabel = "FILE", description = "Write one CSV row per method and cache setting.")
    Path csv;

    /** Runs the command stand-alone. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchHotCacheCommand()).execute(args));
    }

    /** {@code laterRoundsMs}: the average of rounds 2..N (with the cache on, all hits). */
    private record Row(String method, long cacheSizeMb, double valueSizeMb, int keys, int rounds, double firstRoundMs,
                       double avgRoundMs, double laterRoundsMs) {
        /** Bytes per second of one read in rounds 2..N, in GB/s (10^9 bytes). */
        double laterGbPerSecond() {
            return valueSizeMb * (1 << 20) / (laterRoundsMs * 1e6);
        }
    }

    @Override
    public Integer call() throws IOException {
        if (keys < 1 || rounds < 2 || batchSize < 1 || warmupPasses < 0) {
            throw new ParameterException(spec.commandLine(),
                    "--keys, --batch-size must be >= 1, --rounds >= 2 and --warmup-passes >= 0");
        }
        ReadApi reads = ReadApi.of(api);
        if (reads == null) {
            throw new ParameterException(spec.commandLine(), "--api " + api + ": expected into, get (bytes) or view");
        }
        Duration reuse;
        try {
            reuse = io.tiffin.core.config.Durations.parse(locationCacheTtl, java.time.temporal.ChronoUnit.MILLIS);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "--location-cache-ttl " + e.getMessage());
        }
        long value = Sizes.parse(valueSize);
        long block = Sizes.parse(blockSize);
        long blocksPerObject = (value + block - 1) / block;
        long cache = cacheSize != null ? Sizes.parse(cacheSize) : (keys * blocksPerObject + 1) * block;
        long segment = Math.max(64L << 20, (long) (keys * value * 1.25) + (64L << 20));
        PrintWriter out = spec.commandLine().getOut();
        out.printf(Locale.ROOT, "Hot cache benchmark: keys=%d value=%s rounds=%d batch=%d cache=%s block=%s policy=%s api=%s"
                + " location-cache-ttl=%s%n", keys, Sizes.format(value), rounds, batchSize, Sizes.format(cache),
                Sizes.format(block), policy, api, reuse);
        out.println("Reads through " + reads.calls);
        double copyMs = MemoryCopyProbe.millisPerCopy(value, cache);
        out.printf(Locale.ROOT, "One memory copy of a value on this machine (off-heap to off-heap, source in a region as large"
                + " as the cache): %.3f ms, %.2f GB/s%n", copyMs, value / (copyMs * 1e6));

        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("master.eviction-high-watermark", "1.0").build();
        List<Row> rows = new ArrayList<>();
        try (PluginRegistry plugins = BenchSupport.plugins();
             MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class))) {
            BenchSupport.PolicySpec chosen;
            try {
                chosen = BenchSupport.policySpec(plugins, policy);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), "--policy " + e.getMessage());
            }
            String address = "127.0.0.1:" + master.address().getPort();
            try (NodeServer nodeA = startNode("bench-node-a", segment, address);
                 NodeServer nodeB = startNode("bench-node-b", 64L << 20, address);
                 TiffinClient writer = TiffinClient.connect(BenchClientOptions.hotCacheWriter(address))) {
                List<String> names = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    byte[] bytes = new byte[(int) value];
                    new SplittableRandom(i).nextBytes(bytes);
                    String key = "hotcache-bench/" + i;
                    writer.put(key, bytes, PutOptions.DEFAULT.withPreferredSegment(nodeA.segmentName()));
                    names.add(key);
                }
                out.printf(Locale.ROOT, "Wrote %d objects to %s; reading them from a client beside %s over the data plane%n",
                        keys, nodeA.segmentName(), nodeB.nodeId());
                HotCacheSettings settings = new HotCacheSettings(cache, block, 1.0, 4096, chosen.factory(),
                        chosen.settings());
                for (int pass = 0; pass < warmupPasses; pass++) {
                    for (String method : List.of("get", "batch_get")) {
                        measure(reads, address, reuse, null, method, names, value, 0);
                        measure(reads, address, reuse, settings, method, names, value, cache);
                    }
                }
                if (warmupPasses > 0) {
                    out.printf(Locale.ROOT, "Warmed up with %d unmeasured pass(es) of each method, cache off and on%n",
                            warmupPasses);
                }
                for (String method : List.of("get", "batch_get")) {
                    Row off = measure(reads, address, reuse, null, method, names, value, 0);
                    Row on = measure(reads, address, reuse, settings, method, names, value, cache);
                    rows.add(off);
                    rows.add(on);
                    out.printf(Locale.ROOT, "%-9s cache off: first round %8.2f ms/key, average round %8.2f ms/key;"
                            + " rounds 2-%d %7.3f ms/key, %6.2f GB/s per read%n", method, off.firstRoundMs(),
                            off.avgRoundMs(), rounds, off.laterRoundsMs(), off.laterGbPerSecond());
                    out.printf(Locale.ROOT, "%-9s cache on:  first round %8.2f ms/key, average round %8.2f ms/key;"
                            + " rounds 2-%d %7.3f ms/key, %6.2f GB/s per hit  (average %+.1f%%, ratio %.3f)%n", method,
                            on.firstRoundMs(), on.avgRoundMs(), rounds, on.laterRoundsMs(), on.laterGbPerSecond(),
                            100.0 * (on.avgRoundMs() - off.avgRoundMs()) / off.avgRoundMs(),
                            on.avgRoundMs() / off.avgRoundMs());
                }
                writer.removeAll(true);
            }
        }
        if (csv != null) {
            List<String> lines = new ArrayList<>();
            lines.add("method,cache_size_mb,value_size_mb,keys,rounds,first_round_ms,avg_round_ms,later_rounds_ms,"
                    + "later_gb_per_s,copy_gb_per_s");
            for (Row r : rows) {
                lines.add(String.format(Locale.ROOT, "%s,%d,%.2f,%d,%d,%.3f,%.3f,%.4f,%.3f,%.3f", r.method(),
                        r.cacheSizeMb(), r.valueSizeMb(), r.keys(), r.rounds(), r.firstRoundMs(), r.avgRoundMs(),
                        r.laterRoundsMs(), r.laterGbPerSecond(), value / (copyMs * 1e6)));
            }
            Files.write(csv, lines);
            out.println("Wrote " + csv);
        }
        return 0;
    }

    private static NodeServer startNode(String id, long segment, String master) {
        return NodeServer.start(NodeOptions.builder(master).nodeId(id).segmentSize(segment)
                .pingInterval(Duration.ofSeconds(1)).build());
    }

    private Row measure(ReadApi reads, String address, Duration reuse, HotCacheSettings settings, String method,
                        List<String> names, long value, long cache) {
        TiffinClient.Options options = BenchClientOptions.hotCacheReader(address, settings, reuse);
        double[] perRound = new double[rounds];
        boolean view = reads == ReadApi.VIEW && settings != null;
        boolean into = reads != ReadApi.BYTES; // a view's cache-off runs read into buffers
        try (TiffinClient reader = TiffinClient.connect(options); java.lang.foreign.Arena arena =
                java.lang.foreign.Arena.ofShared()) {
            List<java.lang.foreign.MemorySegment> buffers = new ArrayList<>();
            for (int i = 0; i < (method.equals("get") ? 1 : batchSize); i++) {
                buffers.add(into ? arena.allocate(value, 4096) : null);
            }
            for (int round = 0; round < rounds; round++) {
                long start = System.nanoTime();
                if (method.equals("get")) {
                    for (String key : names) {
                        long n;
                        if (view) {
                            try (PinnedValue v = reader.getPinned(key)) {
                                n = v.size();
                            }
                        } else {
                            n = into ? reader.getInto(key, buffers.get(0)) : reader.get(key).length;
                        }
                        if (n != value) {
                            throw new IllegalStateException("short read of " + key);
                        }
                    }
                } else {
                    for (int i = 0; i < names.size(); i += batchSize) {
                        List<String> batch = names.subList(i, Math.min(names.size(), i + batchSize));
                        if (view) {
                            for (KeyResult<PinnedValue> r : reader.batchGetPinned(batch)) {
                                r.valueOrThrow().close();
                            }
                        } else if (into) {
                            for (KeyResult<Long> r : reader.batchGetInto(batch, buffers.subList(0, batch.size()))) {
                                r.valueOrThrow();
                            }
                        } else {
                            for (KeyResult<byte[]> r : reader.batchGet(batch)) {
                                r.valueOrThrow();
                            }
                        }
                    }
                }
                perRound[round] = (System.nanoTime() - start) / 1e6 / names.size();
                if (round == 0 && reader.hotCache() != null) {
                    reader.hotCache().freeBlocksWhenQuiet();
                }
            }
        }
        double later = 0;
        for (int round = 1; round < rounds; round++) {
            later += perRound[round];
        }
        double avg = (perRound[0] + later) / rounds;
        later /= rounds - 1;
        return new Row(method, cache >> 20, value / (double) (1 << 20), names.size(), rounds, perRound[0], avg, later);
    }

    /** The read calls of {@code --api}. */
    enum ReadApi {
        INTO("getInto/batchGetInto into reused off-heap buffers"),
        BYTES("get/batchGet, each returning new byte arrays"),
        VIEW("getPinned/batchGetPinned with the cache on, getInto/batchGetInto with it off");

        final String calls;

        ReadApi(String calls) {
            this.calls = calls;
        }

        /** The API an {@code --api} value names ({@code get} and {@code bytes} are one), or null. */
        static ReadApi of(String name) {
            return switch (name) {
                case "into" -> INTO;
                case "get", "bytes" -> BYTES;
                case "view" -> VIEW;
                default -> null;
            };
        }
    }
}
