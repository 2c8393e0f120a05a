package io.tiffin.bench;

import io.netty.channel.EventLoopGroup;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.config.TiffinConfigKeys;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.BatchCodesReply;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.BatchPutStartReply;
import io.tiffin.core.transport.proto.BatchPutStartRequest;
import io.tiffin.core.transport.proto.ExistReply;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PutOptionsMsg;
import io.tiffin.core.transport.proto.PutStartResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench scale}: the master at size. It connects {@code --nodes} fake nodes (one connection each,
 * pinging at the nodes' default interval) with {@code --segments} fake segments (metadata only), fills the master
 * with BatchPut of objects of 4 KiB to 2 MiB (1 replica; {@link #valueSize}: the sizes a KV cache's blocks
 * take, which the allocator and its per-segment state see), and at each stage (100k, 1M,
 * 10M, ... keys, the last one {@code --keys}) prints and appends one CSV row: the master's resident memory, live
 * heap after a full GC, resident bytes per key (RSS growth since the empty master, over the keys), Get latency
 * p50/p99 over a sample, BatchGet keys per second, and the master's CPU share while only the nodes' heartbeats
 * run (and, on a line of its own, that share by kind of thread: event loops, GC, JIT, other, as the JVM's own work
 * can outweigh the pings'), and (extra columns) Get p99 while {@code --join-nodes} more nodes join and then leave,
 * exist p99 and BatchGet p99 (sequential calls, like the Gets; each sample after a warm-up of the same calls). Without {@code --master} the master is a process of its own started through {@code bin/tiffin master}
 * with the launcher's defaults (so its RSS is its own; only {@code transport.max-connections-per-address} is
 * raised above the nodes and clients, which all connect from one address); with {@code --master} the process-side columns are blank
 * (it may be on another host), its per-address connection limit must admit the nodes, and the fake segments are unmounted at the end, erasing the bench's keys.
 *
 * <p>Not thread-safe: one instance runs one benchmark.
 */
@Command(name = "scale", mixinStandardHelpOptions = true,
        description = "The master at size: memory per key, Get/BatchGet speed and heartbeat CPU as keys grow.")
public final class BenchScaleCommand implements Callable<Integer> {
    static final String HEADER = "keys,segments,rss_bytes,heap_live_bytes,bytes_per_key,get_p50_us,get_p99_us,"
            + "batchget_keys_per_s,heartbeat_cpu_pct,join_get_p99_us,leave_get_p99_us,exist_p99_us,batchget_p99_us";
    /** The object sizes of the fill, one after another by key (4 KiB to 2 MiB; mean {@link #MEAN_VALUE_SIZE}). */
    static final long[] VALUE_SIZES = {4L << 10, 16L << 10, 64L << 10, 256L << 10, 1L << 20, 2L << 20};
    static final long MEAN_VALUE_SIZE = Arrays.stream(VALUE_SIZES).sum() / VALUE_SIZES.length;
    /** The share of the segments' capacity the fill may take: below the master's eviction high watermark. */
    private static final double FILL_SHARE = 0.8;
    private static final long SEGMENT_CAPACITY = 64L << 30;
    private static final int FILL_BATCH = 1000;
    private static final int FILL_THREADS = 4;
    private static final int GET_SAMPLE = 5000;
    private static final int BATCHGET_SIZE = 128;
    /** Sequential BatchGets of {@link #BATCHGET_SIZE} keys whose latency gives {@code batchget_p99_us}. */
    private static final int BATCHGET_SAMPLE = 1000;
    /**
     * Calls of each kind (Get, exist; a tenth of it BatchGets) before a stage's samples, not counted: the first
     * stage's samples would otherwise time the master's compiler, not its maps (its Get path is interpreted after a
     * fill of BatchPuts alone), and every stage warms up alike.
     */
    private static final int WARMUP_CALLS = 20_000;
    /** Untimed joins and leaves of {@code --join-nodes} before the first stage's: see {@link #joinAndLeave}. */
    private static final int JOIN_WARMUP_ROUNDS = 10;
    private static final Duration BATCHGET_TIME = Duration.ofSeconds(3);
    /** Quiet: the compiler threads used less than this share of a core over {@link #JIT_SETTLE_SAMPLE}. */
    private static final double JIT_QUIET_PCT = 2;
    private static final Duration JIT_SETTLE_SAMPLE = Duration.ofSeconds(2);
    private static final Pattern LISTENING = Pattern.compile("Tiffin master listening on \\S*:(\\d+)");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--keys", defaultValue = "10000000", description = "keys at the last stage (default ${DEFAULT-VALUE})")
    long keys;

    @Option(names = "--segments", defaultValue = "1000", description = "fake segments of 64 GiB (default ${DEFAULT-VALUE})")
    int segments;

    @Option(names = "--nodes", defaultValue = "1000", description = "fake nodes heartbeating, each with its own"
            + " connection; at most --segments (default ${DEFAULT-VALUE})")
    int nodes;

    @Option(names = "--master", description = "host:port of a running master; default: start one through the launcher")
    String master;

    @Option(names = "--mooncake", description = "measure Mooncake's C++ master in this directory (mooncake_master,"
            + " master_bench) the same way instead: its memory per key as master_bench fills it; see docs/BENCHMARKS.md")
    Path mooncake;

    @Option(names = "--csv", description = "append one row per stage to this CSV file: " + HEADER)
    Path csv;

    @Option(names = "--heartbeat-window", defaultValue = "10", description = "seconds of the window in which the"
            + " master serves only the nodes' pings and its CPU is measured (default ${DEFAULT-VALUE})")
    int heartbeatWindow;

    @Option(names = "--jit-settle", defaultValue = "60", description = "the longest wait, in seconds, for the"
            + " master's JIT to go quiet after a fill before the heartbeat window (default ${DEFAULT-VALUE})")
    int jitSettle;

    @Option(names = "--join-nodes", defaultValue = "100", description = "fake nodes that join (one segment each)"
            + " and then leave at every stage while Gets run: join_get_p99_us and leave_get_p99_us; 0 = none"
            + " (default ${DEFAULT-VALUE})")
    int joinNodes;

    @Option(names = "--join-rounds", defaultValue = "5", description = "joins and leaves of --join-nodes per stage;"
            + " their Gets are pooled for the p99s (default ${DEFAULT-VALUE})")
    int joinRounds;

    @Option(names = "--join-nice", defaultValue = "10", description = "niceness of the process the joining nodes"
            + " run in: they stand for other machines, so their work does not take the CPU ahead of the master and"
            + " the timed Gets; 0 = the bench's priority (default ${DEFAULT-VALUE})")
    int joinNice;

    @Option(names = "--leave-nodes", defaultValue = "10", description = "after the last stage, this many of the"
            + " nodes holding keys leave one after another (each unmounts its segments, erasing the objects on them)"
            + " and the unmount calls are timed (at most --nodes); 0 = none (default ${DEFAULT-VALUE})")
    int leaveNodes;

    private final String runId = UUID.randomUUID().toString().substring(0, 8);

    @Override
    public Integer call() throws Exception {
        if (keys < 1 || segments < 1 || nodes < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--keys, --segments and --nodes must be >= 1");
        }
        if (heartbeatWindow < 1 || jitSettle < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--heartbeat-window must be >= 1 and"
                    + " --jit-settle >= 0");
        }
        if (leaveNodes < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--leave-nodes must be >= 0");
        }
        if (joinNodes < 0 || joinRounds < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--join-nodes must be >= 0 and"
                    + " --join-rounds >= 1");
        }
        if (joinNice < 0 || joinNice > 19) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--join-nice must be from 0 to 19 (a"
                    + " lower priority than the bench's), not " + joinNice);
        }
        if (nodes > segments) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--nodes (" + nodes + ") must be at most"
                    + " --segments (" + segments + "): every fake node mounts a segment at least, as a real one does");
        }
        long needed = (long) Math.ceil(keys * (double) MEAN_VALUE_SIZE / (FILL_SHARE * SEGMENT_CAPACITY));
        if (segments < needed) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--segments (" + segments + ") of 64 GiB"
                    + " cannot hold --keys (" + keys + ") of 4 KiB to 2 MiB (mean " + MEAN_VALUE_SIZE / 1024
                    + " KiB) below the eviction watermark: give at least " + needed + " segments");
        }
        if (mooncake != null) {
            if (master != null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--mooncake starts Mooncake's master:"
                        + " it cannot be given with --master");
            }
            return new MooncakeScale(mooncake, keys, segments, csv).run();
        }
        TiffinProcess process = null;
        String host;
        int port;
        if (master == null) {
            Path dir = Files.createTempDirectory("tiffin-bench-scale-");
            process = TiffinProcess.start("master", dir, List.of("master", "--host", "127.0.0.1", "--port", "0",
                    "--admin-port", "0", "-D", "transport.max-connections-per-address="
                            + (nodes + joinNodes + FILL_THREADS + 16)),
                    List.of()); // every fake node and client connects from 127.0.0.1
            String line = process.awaitLine("Tiffin master listening on", Duration.ofSeconds(120));
            Matcher m = LISTENING.matcher(line);
            if (!m.find()) {
                process.close();
                throw new IllegalStateException("unexpected start line of the master: " + line);
            }
            host = "127.0.0.1"; // as asked with --host; the line may print it as /127.0.0.1
            port = Integer.parseInt(m.group(1));
            System.out.printf("Started a master (pid %d) on %s:%d through %s; its output: %s%n", process.pid(), host,
                    port, System.getProperty("tiffin.home") == null ? "java (no launcher)" : "bin/tiffin",
                    dir.resolve("master.log"));
        } else {
            String[] hp = BenchSupport.hostPort(master);
            host = hp[0];
            port = Integer.parseInt(hp[1]);
        }
        ProcessProbe probe = process == null ? null : new ProcessProbe(process.pid());
        Duration pingInterval = TiffinConfig.builder().build().get(TiffinConfigKeys.NODE_PING_INTERVAL);
        TransportSettings settings = TransportSettings.defaults();
        EventLoopGroup group = EventLoops.newGroup("bench-scale", 2, true);
        // the fake nodes stand for other machines: their connections' work (pings, a join's handshakes and mounts)
        // stays off the event loops of the clients whose Gets are timed
        EventLoopGroup nodeGroup = EventLoops.newGroup("bench-scale-nodes", 1, true);
        List<TransportClient> clients = new ArrayList<>();
        FakeNodes fake = null;
        JoiningNodes joining = null;
        boolean ok = false;
        try {
            fake = new FakeNodes(host, port, "scale-" + runId, nodes, segments, SEGMENT_CAPACITY, pingInterval,
                    settings, nodeGroup);
            System.out.printf("%d fake nodes with %d fake segments, pinging every %s%n", nodes, segments, pingInterval);
            if (joinNodes > 0) {
                Path log = Files.createTempFile("tiffin-bench-scale-joining-nodes-", ".log");
                joining = JoiningNodes.start(host, port, pingInterval, SEGMENT_CAPACITY, joinNice, log);
                System.out.printf("The %d joining nodes run in a process of their own at nice %d; its output: %s%n",
                        joinNodes, joinNice, log);
            }
            for (int c = 0; c < FILL_THREADS; c++) {
                clients.add(TransportClient.connect(host, port, settings, "bench-scale-client-" + c, group));
            }
            long rssEmpty = 0;
            if (probe != null) { // the base the per-key figure grows from: nodes, segments, no key
                rssEmpty = probe.rssBytes();
                System.out.printf("Master with no key: rss_bytes %d, heap_live_bytes %d%n", rssEmpty,
                        probe.heapLiveBytes());
            }
            System.out.println(HEADER);
            long filled = 0;
            for (long stage : stages(keys)) {
                fill(clients, filled, stage);
                filled = stage;
                boolean firstStage = stage == stages(keys).getFirst();
                JoiningNodes joiners = joining;
                String row = measure(stage, clients, probe, rssEmpty, () -> joinAndLeave(stage, joiners,
                        clients.getFirst(), firstStage, probe));
                System.out.println(row);
                BenchSupport.writeCsv(csv, HEADER, List.of(row));
            }
            leaveLoaded(fake, filled);
            if (fake.failedPings() > 0) {
                System.out.println("Failed pings: " + fake.failedPings() + " of " + (fake.pings() + fake.failedPings())
                        + " (last: " + fake.lastPingFailure() + ")");
            }
            ok = fake.failedPings() == 0;
            return ok ? 0 : 1;
        } finally {
            clients.forEach(TransportClient::close);
            if (joining != null) {
                joining.close();
            }
            if (fake != null) {
                fake.close(process == null); // leave a shared master as we found it
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            nodeGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            if (process != null) {
                process.close();
            }
        }
    }

    /**
     * {@code --leave-nodes} of the fake nodes leave, one after another, spread over the nodes: each unmount erases
     * the objects that lived on its segment (about {@code keys / segments} each), so its time is what a node
     * stopping gracefully costs the master at this size. Prints the unmount calls' times.
     */
    private void leaveLoaded(FakeNodes fake, long keys) {
        int leaving = Math.min(leaveNodes, fake.nodeCount());
        if (leaving == 0) {
            return;
        }
        List<Long> took = new ArrayList<>();
        for (int k = 0; k < leaving; k++) {
            for (long ns : fake.leave(k * fake.nodeCount() / leaving)) {
                took.add(ns);
            }
        }
        long[] sorted = took.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf("%d nodes holding keys left one after another at %d keys (%d unmounts of a segment with"
                + " about %d objects): unmount ms p50 %s, max %s, all %s%n", leaving, keys, sorted.length,
                keys / segments, BenchSupport.fmt(percentile(sorted, 50) / 1e6, 2),
                BenchSupport.fmt(sorted[sorted.length - 1] / 1e6, 2),
                took.stream().map(ns -> BenchSupport.fmt(ns / 1e6, 1))
                        .collect(java.util.stream.Collectors.joining(" ")));
    }

    /** 100k, 1M, 10M, ... below {@code keys}, then {@code keys}. */
    static List<Long> stages(long keys) {
        List<Long> stages = new ArrayList<>();
        for (long s = 100_000; s < keys; s *= 10) {
            stages.add(s);
        }
        stages.add(keys);
        return stages;
    }

    private String key(long i) {
        return "scale-" + runId + "-" + i;
    }

    /** Writes keys {@code from} to {@code to - 1} with BatchPut from every client connection at once. */
    private void fill(List<TransportClient> clients, long from, long to) throws InterruptedException {
        AtomicLong next = new AtomicLong(from);
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        PutOptionsMsg options = Messages.toMsg(PutOptions.DEFAULT);
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < clients.size(); t++) {
            TransportClient client = clients.get(t);
            String clientId = "bench-scale-" + runId + "-" + t;
            threads.add(Thread.ofPlatform().name("bench-scale-fill-" + t).start(() -> {
                List<String> batch = new ArrayList<>(FILL_BATCH);
                long first;
                while (failure.get() == null && (first = next.getAndAdd(FILL_BATCH)) < to) {
                    batch.clear();
                    for (long i = first; i < Math.min(to, first + FILL_BATCH); i++) {
                        batch.add(key(i));
                    }
                    try {
                        batchPut(client, clientId, options, batch, first);
                    } catch (RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("filling the master failed at about " + next.get() + " keys: "
                    + failure.get().getMessage(), failure.get());
        }
        System.out.printf("Filled %d keys in %.1f s%n", to - from, (System.nanoTime() - start) / 1e9);
    }

    /** The size of key {@code i}'s object: one of {@link #VALUE_SIZES}, mixed evenly over the keys. */
    static long valueSize(long i) {
        return VALUE_SIZES[Math.floorMod(Long.hashCode(i * 0x9E3779B97F4A7C15L), VALUE_SIZES.length)];
    }

    /** Puts {@code batch}, the keys from number {@code first} on. */
    private static void batchPut(TransportClient client, String clientId, PutOptionsMsg options, List<String> batch,
            long first) {
        BatchPutStartRequest.Builder start = BatchPutStartRequest.newBuilder().setClientId(clientId)
                .setOptions(options).addAllKeys(batch).setCompact(true); // as the Java client asks
        for (int i = 0; i < batch.size(); i++) {
            start.addSizes(valueSize(first + i));
        }
        BatchPutStartReply started = client.callSync(Opcode.BATCH_PUT_START, start.build(), BatchPutStartReply.parser());
        for (PutStartResult r : started.getResultsList()) {
            require(r.getCode(), "BatchPutStart");
        }
        BatchCodesReply ended = client.callSync(Opcode.BATCH_PUT_END, BatchKeysRequest.newBuilder()
                .setClientId(clientId).addAllKeys(batch).build(), BatchCodesReply.parser());
        for (int code : ended.getCodesList()) {
            require(code, "BatchPutEnd");
        }
    }

    private static void require(int code, String what) {
        if (code != 0) {
            throw new IllegalStateException(what + " answered " + ErrorCode.fromValue(code));
        }
    }

    /**
     * Waits, at most {@code --jit-settle} seconds, until the master's compiler threads used less than
     * {@value #JIT_QUIET_PCT}% of a core over {@link #JIT_SETTLE_SAMPLE}: after a fill of millions of keys C2 still
     * compiles for tens of seconds, which is the fill's cost, not the heartbeats'. Returns the seconds waited past
     * the first quiet check.
     */
    private double settleJit(ProcessProbe probe) throws InterruptedException {
        long t0 = System.nanoTime();
        while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(jitSettle)) {
            Map<String, ProcessProbe.ThreadTicks> before = probe.threadCpuTicks();
            long s0 = System.nanoTime();
            Thread.sleep(JIT_SETTLE_SAMPLE.toMillis());
            double seconds = (System.nanoTime() - s0) / 1e9;
            long jit = ProcessProbe.ticksByKind(before, probe.threadCpuTicks()).getOrDefault("JIT", 0L);
            if (100.0 * jit / ProcessProbe.CLOCK_TICKS_PER_SECOND / seconds < JIT_QUIET_PCT) {
                break;
            }
        }
        return Math.max(0, (System.nanoTime() - t0) / 1e9 - JIT_SETTLE_SAMPLE.toSeconds());
    }

    /** What a stage measures besides the columns: the extra columns, comma-separated. */
    @FunctionalInterface
    private interface ExtraColumns {
        String measure() throws InterruptedException;
    }

    /**
     * One CSV row for the master holding {@code count} keys. Resident memory first, as the fill left it; then the
     * live heap, whose full GC stops the master (seconds at millions of keys on a loaded machine) before any
     * latency sample, not in one; then the warm-up of the sampled calls; then the heartbeat window, once the JIT
     * has gone quiet; then the Get sample and, right after it in the same state, the Gets during a join and a leave
     * (the "idle" they are compared with is that sample); the exist and BatchGet samples; BatchGet's rate last, as
     * its allocation leaves the collector busy for a while.
     */
    private String measure(long count, List<TransportClient> clients, ProcessProbe probe, long rssEmpty,
            ExtraColumns extra) throws InterruptedException {
        String rss = "";
        String perKey = "";
        String heap = "";
        String cpu = "";
        if (probe != null) {
            long r = probe.rssBytes();
            rss = Long.toString(r);
            perKey = BenchSupport.fmt((double) (r - rssEmpty) / count, 1);
            heap = Long.toString(probe.heapLiveBytes());
        }
        warmUp(clients.getFirst(), count); // after the memory figures, so that they are the fill's; JIT then settles
        if (probe != null) {
            cpu = heartbeatCpu(count, probe);
        }
        long[] getNanos = latencies(clients.getFirst(), count, Call.GET, GET_SAMPLE);
        String extraColumns = extra.measure();
        long[] existNanos = latencies(clients.getFirst(), count, Call.EXIST, GET_SAMPLE);
        long[] batchGetNanos = latencies(clients.getFirst(), count, Call.BATCH_GET, BATCHGET_SAMPLE);
        System.out.printf("At %d keys: exist p50 %.1f µs, BatchGet of %d keys p50 %.1f µs%n", count,
                percentile(existNanos, 50) / 1e3, BATCHGET_SIZE, percentile(batchGetNanos, 50) / 1e3);
        double batchGetRate = batchGetRate(clients, count);
        return count + "," + segments + "," + rss + "," + heap + "," + perKey + ","
                + BenchSupport.fmt(percentile(getNanos, 50) / 1e3, 1) + ","
                + BenchSupport.fmt(percentile(getNanos, 99) / 1e3, 1) + "," + Math.round(batchGetRate) + "," + cpu
                + "," + extraColumns + "," + BenchSupport.fmt(percentile(existNanos, 99) / 1e3, 1) + ","
                + BenchSupport.fmt(percentile(batchGetNanos, 99) / 1e3, 1);
    }

    /** The calls whose latency a stage samples, each of random existing keys. */
    enum Call { GET, EXIST, BATCH_GET }

    /**
     * Warms the master's paths of every sampled call up with {@value #WARMUP_CALLS} Gets and exists and a tenth
     * of that in BatchGets, whose figures are dropped.
     */
    private void warmUp(TransportClient client, long count) {
        latencies(client, count, Call.GET, WARMUP_CALLS);
        latencies(client, count, Call.EXIST, WARMUP_CALLS);
        latencies(client, count, Call.BATCH_GET, WARMUP_CALLS / 10);
    }

    /**
     * The master's CPU share, in percent of a core, over {@code --heartbeat-window} seconds in which it serves only
     * the nodes' pings, once its JIT has gone quiet; prints the share by kind of thread.
     */
    private String heartbeatCpu(long count, ProcessProbe probe) throws InterruptedException {
        double settled = settleJit(probe);
        if (settled > 0) {
            System.out.printf("Heartbeat window at %d keys: waited %.0f s for the master's JIT to settle%n", count,
                    settled);
        }
        long ticks = probe.cpuTicks();
        Map<String, ProcessProbe.ThreadTicks> threads = probe.threadCpuTicks();
        long t0 = System.nanoTime();
        Thread.sleep(TimeUnit.SECONDS.toMillis(heartbeatWindow)); // the measuring window: the master serves pings alone
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpuSeconds = (double) (probe.cpuTicks() - ticks) / ProcessProbe.CLOCK_TICKS_PER_SECOND;
        String cpu = BenchSupport.fmt(100 * cpuSeconds / seconds, 2);
        // what the share is made of: the pings are the event loops' part; GC and JIT are the JVM's own
        StringBuilder kinds = new StringBuilder();
        ProcessProbe.ticksByKind(threads, probe.threadCpuTicks()).forEach((kind, t) -> kinds.append(", ")
                .append(kind).append(' ').append(BenchSupport.fmt(100.0 * t / ProcessProbe.CLOCK_TICKS_PER_SECOND
                        / seconds, 1)));
        System.out.printf("Heartbeat window at %d keys: %s%% of a core%s%n", count, cpu, kinds);
        return cpu;
    }

    /** Nanoseconds of {@code n} sequential calls of {@code call} on random existing keys, sorted. */
    private long[] latencies(TransportClient client, long count, Call call, int n) {
        SplittableRandom random = new SplittableRandom(count * 7 + call.ordinal() * 1_000_003L + n);
        long[] nanos = new long[n];
        for (int i = 0; i < nanos.length; i++) {
            switch (call) {
                case GET -> {
                    KeyRequest req = KeyRequest.newBuilder().setKey(key(random.nextLong(count))).build();
                    long t0 = System.nanoTime();
                    ObjectLocationMsg loc = client.callSync(Opcode.GET_REPLICA_LIST, req, ObjectLocationMsg.parser());
                    nanos[i] = System.nanoTime() - t0;
                    if (loc.getReplicasCount() == 0) {
                        throw new IllegalStateException("Get of " + req.getKey() + " found no replica");
                    }
                }
                case EXIST -> {
                    KeyRequest req = KeyRequest.newBuilder().setKey(key(random.nextLong(count))).build();
                    long t0 = System.nanoTime();
                    ExistReply reply = client.callSync(Opcode.EXIST_KEY, req, ExistReply.parser());
                    nanos[i] = System.nanoTime() - t0;
                    if (!reply.getExists()) {
                        throw new IllegalStateException("exist of " + req.getKey() + " answered false");
                    }
                }
                case BATCH_GET -> {
                    BatchKeysRequest req = batchGetRequest(random, count);
                    long t0 = System.nanoTime();
                    BatchLocationsReply reply = client.callSync(Opcode.BATCH_GET_REPLICA_LIST, req,
                            BatchLocationsReply.parser());
                    nanos[i] = System.nanoTime() - t0;
                    for (LocationResult r : reply.getResultsList()) {
                        require(r.getCode(), "BatchGet");
                    }
                }
            }
        }
        Arrays.sort(nanos);
        return nanos;
    }

    private BatchKeysRequest batchGetRequest(SplittableRandom random, long count) {
        BatchKeysRequest.Builder req = BatchKeysRequest.newBuilder().setCompact(true); // as the Java client asks
        for (int i = 0; i < BATCHGET_SIZE; i++) {
            req.addKeys(key(random.nextLong(count)));
        }
        return req.build();
    }

    /**
     * {@code --join-rounds} times, {@code --join-nodes} more fake nodes connect and mount a segment each while one
     * connection runs sequential Gets, then unmount and leave while it runs them again: "p99 of Get during the
     * join, during the leave" (µs) over the Gets of every round, blank without {@code --join-nodes}. The idle
     * figure to compare with is {@code get_p99_us}, measured just before. The joining nodes run in a process of
     * their own at {@code --join-nice} ({@link JoiningNodes}): they stand for other machines. At the first stage
     * {@value #JOIN_WARMUP_ROUNDS} rounds run first, the timed rounds' code with Gets running, and are dropped, as
     * the Gets alone are warmed up: a master serves joins among its requests, and the first such joins run the
     * connection and mount paths, and the Get path beside them, through the compilers.
     * Each round's printed figures come with the milliseconds the compilers of the master ({@code probe}'s
     * process; "?" without one), of this JVM and of the joining nodes' JVM spent during its join and leave: a slow
     * round with busy compilers is the join path still being compiled, on the cores the timed Gets share.
     */
    private String joinAndLeave(long count, JoiningNodes joining, TransportClient client, boolean first,
            ProcessProbe probe) throws InterruptedException {
        if (joinNodes == 0) {
            return ",";
        }
        List<long[]> joins = new ArrayList<>();
        List<long[]> leaves = new ArrayList<>();
        StringBuilder perRound = new StringBuilder();
        StringBuilder warmRounds = new StringBuilder();
        Map<String, Long> timedTicks = new TreeMap<>(); // the master's CPU in the timed rounds, by kind of thread
        // the warm-up rounds are the timed rounds' code, Gets and bookkeeping alike, and are dropped
        int warmups = first ? JOIN_WARMUP_ROUNDS : 0;
        for (int r = -warmups; r < joinRounds; r++) {
            Map<String, ProcessProbe.ThreadTicks> masterBefore = probe == null ? null : probe.threadCpuTicks();
            long benchBefore = JitClock.self();
            AtomicLong joinersJit = new AtomicLong();
            String prefix = "scale-" + runId + "-join" + count + "-" + r;
            long[] join = getsWhile(client, count, r, () -> joinersJit.addAndGet(joining.join(prefix, joinNodes)));
            long[] leave = getsWhile(client, count, r, () -> joinersJit.addAndGet(joining.leave()));
            Map<String, Long> masterTicks = masterBefore == null ? null
                    : ProcessProbe.ticksByKind(masterBefore, probe.threadCpuTicks());
            String masterJit = masterTicks == null ? "?"
                    : Long.toString(1000 * masterTicks.getOrDefault("JIT", 0L) / ProcessProbe.CLOCK_TICKS_PER_SECOND);
            String benchJit = benchBefore < 0 ? "?" : Long.toString(JitClock.self() - benchBefore);
            StringBuilder round = new StringBuilder().append(BenchSupport.fmt(percentile(join, 99) / 1e3, 0))
                    .append('/').append(BenchSupport.fmt(percentile(leave, 99) / 1e3, 0))
                    .append(" (").append(masterJit).append('/').append(benchJit).append('/').append(joinersJit.get())
                    .append(')');
            if (r >= 0) {
                if (masterTicks != null) {
                    masterTicks.forEach((kind, ticks) -> timedTicks.merge(kind, ticks, Long::sum));
                }
                joins.add(join);
                leaves.add(leave);
                perRound.append(r == 0 ? "" : ", ").append(round);
            } else {
                warmRounds.append(r == -warmups ? "" : ", ").append(round);
            }
        }
        if (warmups > 0) {
            System.out.printf("%d warm-up rounds of joins and leaves (dropped), p99 µs per round as below: %s%n",
                    warmups, warmRounds);
        }
        long[] join = pooled(joins);
        long[] leave = pooled(leaves);
        System.out.printf("%d nodes joined and left %d times during %d and %d Gets; p99 µs per round, join/leave"
                + " (JIT ms in the round, master/bench JVM/joining nodes' JVM): %s%n",
                joinNodes, joinRounds, join.length, leave.length, perRound);
        if (probe != null) {
            StringBuilder kinds = new StringBuilder();
            timedTicks.forEach((kind, ticks) -> kinds.append(kinds.isEmpty() ? "" : ", ").append(kind).append(' ')
                    .append(perRoundMillis(ticks)));
            long total = timedTicks.values().stream().mapToLong(Long::longValue).sum();
            System.out.printf("The master's CPU per round of %d joins and leaves (the Gets beside them included): %s ms"
                    + " (%s)%n", joinNodes, perRoundMillis(total), kinds);
        }
        return BenchSupport.fmt(percentile(join, 99) / 1e3, 1) + "," + BenchSupport.fmt(percentile(leave, 99) / 1e3, 1);
    }

    /** Milliseconds per timed join round of {@code ticks} CPU ticks summed over the rounds. */
    private String perRoundMillis(long ticks) {
        return BenchSupport.fmt(1000.0 * ticks / ProcessProbe.CLOCK_TICKS_PER_SECOND / joinRounds, 1);
    }

    private static long[] pooled(List<long[]> samples) {
        long[] all = samples.stream().flatMapToLong(Arrays::stream).toArray();
        Arrays.sort(all);
        return all;
    }

    /** Nanoseconds of the sequential Gets of random existing keys that ran while {@code work} ran elsewhere, sorted. */
    private long[] getsWhile(TransportClient client, long count, int round, Runnable work)
            throws InterruptedException {
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        Thread worker = Thread.ofPlatform().name("bench-scale-join").start(() -> {
            try {
                work.run();
            } catch (RuntimeException e) {
                failure.set(e);
            }
        });
        SplittableRandom random = new SplittableRandom(count * 17 + round);
        long[] nanos = new long[1024];
        int n = 0;
        do { // one Get at least, so that a join faster than a Get still has a figure
            KeyRequest req = KeyRequest.newBuilder().setKey(key(random.nextLong(count))).build();
            long t0 = System.nanoTime();
            client.callSync(Opcode.GET_REPLICA_LIST, req, ObjectLocationMsg.parser());
            if (n == nanos.length) {
                nanos = Arrays.copyOf(nanos, n * 2);
            }
            nanos[n++] = System.nanoTime() - t0;
        } while (worker.isAlive());
        worker.join();
        if (failure.get() != null) {
            throw new IllegalStateException("the joining nodes failed: " + failure.get().getMessage(), failure.get());
        }
        long[] sorted = Arrays.copyOf(nanos, n);
        Arrays.sort(sorted);
        return sorted;
    }

    static double percentile(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    /** Keys per second of BatchGet (replica lists of {@value #BATCHGET_SIZE} random keys) from every connection. */
    private double batchGetRate(List<TransportClient> clients, long count) throws InterruptedException {
        long deadline = System.nanoTime() + BATCHGET_TIME.toNanos();
        AtomicLong done = new AtomicLong();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < clients.size(); t++) {
            TransportClient client = clients.get(t);
            SplittableRandom random = new SplittableRandom(count * 31 + t);
            threads.add(Thread.ofPlatform().name("bench-scale-batchget-" + t).start(() -> {
                try {
                    while (System.nanoTime() < deadline) {
                        BatchLocationsReply reply = client.callSync(Opcode.BATCH_GET_REPLICA_LIST,
                                batchGetRequest(random, count), BatchLocationsReply.parser());
                        for (LocationResult r : reply.getResultsList()) {
                            require(r.getCode(), "BatchGet");
                        }
                        done.addAndGet(BATCHGET_SIZE);
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("BatchGet failed: " + failure.get().getMessage(), failure.get());
        }
        return done.get() / ((System.nanoTime() - start) / 1e9);
    }
}
