package io.tiffin.bench;

import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench promotion}: promotion-on-hit under a backlog. A node holds {@code --objects}
 * SSD-only objects (written to its bucket backend before it starts, so it re-registers them with the
 * master, as after a restart). Every one is read twice, which queues it for promotion; then
 * {@code --hot} other SSD-only objects are read over and over. Measures the time from the first read of
 * the hot objects until all of them are in memory (while the backlog still drains), the time the
 * backlog takes to drain, and the node's heartbeat intervals while idle and during the backlog.
 *
 * <p>Not thread-safe: one instance per invocation.
 */
@Command(name = "promotion", mixinStandardHelpOptions = true,
        description = "Promotion-on-hit: hot SSD objects reach memory while a backlog of promotions drains.")
public final class BenchPromotionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--objects", defaultValue = "10000", description = "Backlog objects (default: ${DEFAULT-VALUE}).")
    int objects;

    @Option(names = "--hot", defaultValue = "15", description = "Hot objects (default: ${DEFAULT-VALUE}).")
    int hot;

    @Option(names = "--value-size", defaultValue = "128KiB", description = "Object size (default: ${DEFAULT-VALUE}).")
    String valueSize;

    @Option(names = "--ping-interval", defaultValue = "100ms",
            description = "Node heartbeat interval during the bench (default: ${DEFAULT-VALUE}).")
    String pingInterval;

    @Option(names = "--storage-path", paramLabel = "DIR",
            description = "Directory for the node's SSD tier (default: a temporary directory, deleted after).")
    Path storagePath;

    @Option(names = "--csv", paramLabel = "FILE", description = "Append one CSV row with the results.")
    Path csv;

    /** Runs the command stand-alone. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchPromotionCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        long size = Sizes.parse(valueSize);
        Duration ping = io.tiffin.core.config.Durations.parse(pingInterval, java.time.temporal.ChronoUnit.MILLIS);
        boolean temporary = storagePath == null;
        Path dir = temporary ? Files.createTempDirectory("tiffin-bench-promotion") : storagePath;
        int total = objects + hot;
        try (PluginRegistry plugins = BenchSupport.plugins()) {
            PluginContext storage = new PluginContext(Map.of("path", dir.toString()), "promo-node");
            long started = System.nanoTime();
            try (StorageBackend backend = plugins.storageBackend("bucket").create(storage); Arena arena = Arena.ofConfined()) {
                MemorySegment values = arena.allocate(32 * size);
                for (int start = 0; start < total; start += 32) {
                    Map<String, MemorySegment> batch = new LinkedHashMap<>();
                    for (int i = start; i < Math.min(total, start + 32); i++) {
                        MemorySegment value = values.asSlice((i - start) * size, size);
                        value.set(java.lang.foreign.ValueLayout.JAVA_INT, 0, i);
                        batch.put(key(i), value);
                    }
                    backend.writeBatch(batch);
                }
            }
            out.printf("Wrote %d objects of %s to the SSD tier at %s in %.1f s%n", total, Sizes.format(size), dir,
                    (System.nanoTime() - started) / 1e9);

            try (MasterServer master = BenchSupport.startLocalMaster("master.eviction-high-watermark=1.0")) {
                String address = "127.0.0.1:" + master.address().getPort();
                long segment = (long) (total * size * 1.1) + (64L << 20);
                try (NodeServer node = NodeServer.start(NodeOptions.builder(address)
                        .nodeId("promo-node").segmentSize(segment).pingInterval(ping)
                        .storage(new NodeOptions.Storage(plugins.storageBackend("bucket"), storage), Duration.ofMillis(50))
                        .build());
                     TiffinClient client = TiffinClient.connect(address)) {
                    out.printf("Node re-registered %d SSD objects; master keys: %d%n", total,
                            master.service().keyCount());
                    Thread.sleep(Math.max(3000, ping.toMillis() * 30));
                    long idleEnd = System.nanoTime();
                    long idleStart = idleEnd - Duration.ofMillis(Math.max(3000, ping.toMillis() * 30)).toNanos();

                    // The backlog: every cold object read twice.
                    long backlogStart = System.nanoTime();
                    List<String> cold = new ArrayList<>();
                    for (int i = 0; i < objects; i++) {
                        cold.add(key(i));
                    }
                    for (int round = 0; round < 2; round++) {
                        for (int i = 0; i < cold.size(); i += 100) {
                            for (KeyResult<byte[]> r : client.batchGet(cold.subList(i, Math.min(cold.size(), i + 100)))) {
                                r.valueOrThrow();
                            }
                        }
                    }
                    out.printf("Queued the backlog: %d objects read twice in %.0f ms; promotions queued at the master: %d%n",
                            objects, (System.nanoTime() - backlogStart) / 1e6, master.service().ssdTier().promotionsQueued());

                    // The hot objects, read over and over until all are in memory.
                    List<String> hotKeys = new ArrayList<>();
                    for (int i = objects; i < total; i++) {
                        hotKeys.add(key(i));
                    }
                    long hotStart = System.nanoTime();
                    long hotDone = -1;
                    while (System.nanoTime() - hotStart < Duration.ofSeconds(60).toNanos()) {
                        boolean allInMemory = true;
                        for (String k : hotKeys) {
                            client.get(k);
                            ObjectLocation loc = client.locate(k).orElseThrow();
                            allInMemory &= loc.replicas().stream().anyMatch(r -> r.type() == ReplicaType.MEMORY);
                        }
                        if (allInMemory) {
                            hotDone = System.nanoTime();
                            break;
                        }
                    }
                    int backlogLeftWhenHotDone = master.service().ssdTier().promotionsQueued();

                    // The backlog drains.
                    long drained = -1;
                    while (System.nanoTime() - backlogStart < Duration.ofSeconds(300).toNanos()) {
                        if (master.service().counters().promotions() >= total) {
                            drained = System.nanoTime();
                            break;
                        }
                        Thread.sleep(10);
                    }
                    long backlogEnd = drained > 0 ? drained : System.nanoTime();
                    double[] idle = intervalsMs(node.pingTimesNanos(), idleStart, idleEnd);
                    double[] busy = intervalsMs(node.pingTimesNanos(), backlogStart, backlogEnd);
                    double hotMs = hotDone < 0 ? Double.NaN : (hotDone - hotStart) / 1e6;
                    double drainMs = drained < 0 ? Double.NaN : (drained - backlogStart) / 1e6;
                    out.printf("Hot objects (%d) in memory after %.1f ms (target <= 200 ms); promotions still queued "
                            + "at that moment: %d%n", hot, hotMs, backlogLeftWhenHotDone);
                    out.printf("Backlog of %d promotions drained after %.0f ms (%d promoted, %d failed)%n", total,
                            drainMs, master.service().counters().promotions(),
                            master.service().counters().promotionFailures());
                    out.printf("Heartbeat interval idle:    p50 %.1f ms, p99 %.1f ms (%d samples)%n",
                            pct(idle, 50), pct(idle, 99), idle.length);
                    out.printf("Heartbeat interval backlog: p50 %.1f ms, p99 %.1f ms (%d samples); p99 ratio %.2f "
                            + "(target <= 2)%n", pct(busy, 50), pct(busy, 99), busy.length, pct(busy, 99) / pct(idle, 99));
                    BenchSupport.writeCsv(csv, "hot_promoted_ms,backlog_drain_ms,hb_idle_p50_ms,hb_idle_p99_ms,"
                            + "hb_backlog_p50_ms,hb_backlog_p99_ms", List.of(String.join(",", BenchSupport.fmt(hotMs, 1),
                            BenchSupport.fmt(drainMs, 1), BenchSupport.fmt(pct(idle, 50), 2),
                            BenchSupport.fmt(pct(idle, 99), 2), BenchSupport.fmt(pct(busy, 50), 2),
                            BenchSupport.fmt(pct(busy, 99), 2))));
                }
            }
        } finally {
            if (temporary) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                } catch (IOException ignored) {
                    // best effort
                }
            }
        }
        return 0;
    }

    private static String key(int i) {
        return "promotion-bench/" + i;
    }

    private static double[] intervalsMs(long[] times, long from, long to) {
        List<Double> out = new ArrayList<>();
        for (int i = 1; i < times.length; i++) {
            if (times[i - 1] >= from && times[i] <= to) {
                out.add((times[i] - times[i - 1]) / 1e6);
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double pct(double[] values, double p) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int idx = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, idx))];
    }
}
