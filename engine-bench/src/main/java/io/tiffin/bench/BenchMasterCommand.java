package io.tiffin.bench;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.BatchCodesReply;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.BatchPutStartReply;
import io.tiffin.core.transport.proto.BatchPutStartRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.PutOptionsMsg;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.PutStartResult;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench master}: Mooncake Store's {@code master_bench} against a master over loopback. It
 * mounts fake segments (metadata only, no memory behind them) and then drives one metadata operation
 * from {@code --num-clients} clients with {@code --num-threads} threads each, every thread issuing
 * one synchronous raw RPC at a time, as the C++ bench does (on connections it writes and reads itself, as the client
 * library's master stub does, or with {@code --client-transport event-loop} through its client's Netty connection;
 * {@link MasterBenchClients}):
 *
 * <ul>
 *   <li>{@code Put}: PutStart + PutEnd of a new key;</li>
 *   <li>{@code Get}: GetReplicaList of an existing key ({@code --num-keys} are written first);</li>
 *   <li>{@code BatchPut}: BatchPutStart + BatchPutEnd of {@code --batch-size} new keys;</li>
 *   <li>{@code BatchGet}: BatchGetReplicaList of {@code --batch-size} existing keys.</li>
 * </ul>
 *
 * Prints {@code Operations per second: X} (keys per second for batch operations) over {@code --duration} s measured
 * after {@code --warmup} s of the same load, and how long the JIT compiled during the measured window (this JVM's
 * time from its CompilationMXBean; a master process's from its performance counters, {@link JitClock}). For a master
 * process on this machine it also prints the master's CPU time per operation (per key for batch operations) in the
 * window, by kind of thread ({@link ProcessProbe#ticksByKind}): on a machine whose rates scatter from run to run, a
 * steadier figure of what an operation costs the master. With
 * {@code --mooncake DIR} it compares Mooncake's C++ master with a {@code tiffin master} process, alternating
 * ({@link MasterSideBySide}). Without
 * {@code --master} it starts a master in this JVM on a free port; with {@code --failover} that master runs with
 * failover on, the leader of {@code --failover-masters} masters (the others stand by) elected through a ZooKeeper
 * server in this JVM or {@code --coordinator}, as {@code tiffin master --coordinator} runs. The fake node is pinged so the master
 * keeps its segments, and its segments are unmounted at the end (which erases the bench's keys).
 *
 * <p>Not thread-safe: one instance runs one benchmark.
 */
@Command(name = "master", mixinStandardHelpOptions = true,
        description = "Mooncake's master_bench: metadata operations per second against a master over loopback.")
public final class BenchMasterCommand implements Callable<Integer> {
    /** Where picocli's usage errors go: the command line that runs this command (its err stream, its usage). */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;


    /** The benchmarked operation. */
    public enum Operation { Put, Get, BatchPut, BatchGet }

    @Option(names = "--master", description = "host:port of a running master; default: start one in this JVM")
    String master;

    @Option(names = "--operation", defaultValue = "BatchPut", description = "Put, Get, BatchPut or BatchGet (default ${DEFAULT-VALUE})")
    Operation operation;

    @Option(names = "--num-segments", defaultValue = "128", description = "fake segments to mount (default ${DEFAULT-VALUE})")
    int numSegments;

    @Option(names = "--segment-size", defaultValue = "64GiB", description = "capacity of each fake segment (default ${DEFAULT-VALUE})")
    String segmentSize;

    @Option(names = "--num-clients", defaultValue = "4", description = "clients of the master (default ${DEFAULT-VALUE})")
    int numClients;

    @Option(names = "--num-threads", defaultValue = "1", description = "threads per client (default ${DEFAULT-VALUE})")
    int numThreads;

    @Option(names = "--num-keys", defaultValue = "10000", description = "keys written before Get/BatchGet (default ${DEFAULT-VALUE})")
    int numKeys;

    @Option(names = "--batch-size", defaultValue = "128", description = "keys per batch call (default ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--key-shape", defaultValue = "numbered", description = "how keys are named: numbered"
            + " (<prefix><n>, ascending runs, as Mooncake's master_bench names them) or lmcache"
            + " (<prefix>@1@0@<random 64-bit hash>@bfloat16, as LMCache names its chunks: each new key lands at a"
            + " random place in the master's ordered key index) (default ${DEFAULT-VALUE})")
    String keyShape;
    /** {@link #keyShape}, parsed by {@link #validate}. */
    private KeyShape shape = KeyShape.NUMBERED;

    @Option(names = "--value-size", defaultValue = "4096", description = "object size announced in PutStart, bytes (default ${DEFAULT-VALUE})")
    long valueSize;

    @Option(names = "--duration", defaultValue = "60", description = "measured seconds (default ${DEFAULT-VALUE})")
    int duration;

    @Option(names = "--warmup", defaultValue = "10", description = "seconds of the same load before measuring, long"
            + " enough for the JIT to compile the hot paths; extended in 2 s steps (by up to as much again) while the"
            + " JIT still compiles more than 5%% of the time (default ${DEFAULT-VALUE})")
    int warmup;

    @Option(names = "--master-pid", description = "with --master: the pid of that master's JVM on this machine, to"
            + " report its JIT time during the measured window")
    Long masterPid;

    @Option(names = "--mooncake", description = "Mooncake's master directory (run-master-bench, mooncake_master,"
            + " master_bench): runs Mooncake's master and bench and `bin/tiffin master` with this bench, alternating,"
            + " with the same settings, and prints both rates and their ratio per operation (all four unless"
            + " --operation is given)")
    Path mooncake;

    @Option(names = "--pairs", defaultValue = "1", description = "with --mooncake: alternating Mooncake/Tiffin pairs"
            + " per operation; medians are printed (default ${DEFAULT-VALUE})")
    int pairs;

    @Option(names = "--io-threads", defaultValue = "1", description = "client event-loop threads with"
            + " --client-transport event-loop (default ${DEFAULT-VALUE})")
    int ioThreads;

    @Option(names = "--client-transport", defaultValue = "blocking", description = "blocking: each caller writes and"
            + " reads a pooled connection itself, as the client library does; event-loop: each client is one Netty"
            + " connection whose event loop carries its threads' calls (default ${DEFAULT-VALUE})")
    String clientTransport;

    @Option(names = "--csv", description = "append a row to this CSV file: operation,clients,batch_size,duration_s,ops_per_sec")
    Path csv;

    @Option(names = "--failover", description = "the master started in this JVM runs with failover on: it leads"
            + " standby masters (also in this JVM) through a coordination service; not with --master")
    boolean failover;

    @Option(names = "--failover-masters", defaultValue = "3", description = "masters with --failover, the leader"
            + " and its standbys (default ${DEFAULT-VALUE})")
    int failoverMasters;

    @Option(names = "--coordinator", description = "with --failover: zk://host:port[/root] of a running ZooKeeper;"
            + " default: a ZooKeeper server in this JVM")
    String coordinator;

    private final String runId = UUID.randomUUID().toString().substring(0, 8);
    private final String nodeId = "bench-node-" + runId;
    private final AtomicLong failures = new AtomicLong();
    private volatile ErrorCode lastFailure;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchMasterCommand()).execute(args));
    }

    @Override
    public Integer call() {
        validate();
        if (mooncake != null) {
            return new MasterSideBySide(this, mooncake).run();
        }
        MasterServer local = null;
        LocalFailoverMasters masters = null;
        String address = master;
        if (address == null && failover) {
            masters = new LocalFailoverMasters(failoverMasters, coordinator, java.time.Duration.ofSeconds(60));
            local = masters.leader();
            address = "127.0.0.1:" + local.address().getPort();
            System.out.printf("Failover on: %s leads the masters %s, elected through %s%n", address, masters.addresses(),
                    masters.coordinator());
        } else if (address == null) {
            local = BenchSupport.startLocalMaster();
            address = "127.0.0.1:" + local.address().getPort();
        }
        try {
            Measured m = measure(operation, address, local != null ? SAME_JVM : masterPid == null ? -1 : masterPid,
                    local == null);
            BenchSupport.writeCsv(csv, CSV_HEADER, List.of(csvRow(m, "tiffin")));
            return m.failures() == 0 ? 0 : 1;
        } finally {
            if (masters != null) {
                masters.close();
            } else if (local != null) {
                local.close();
            }
        }
    }

    /** {@code masterPid} value: the master runs in this JVM. */
    static final long SAME_JVM = 0;

    static final String CSV_HEADER = "operation,clients,batch_size,duration_s,ops_per_sec,warmup_s,bench_jit_ms,"
            + "master_jit_ms,target";

    /** One measured run: keys (or operations) per second over the measured window, and the JIT time in it. */
    record Measured(Operation operation, double opsPerSec, double seconds, long keys, long failures, long benchJitMs,
            long masterJitMs, int warmupSeconds) {
    }

    String csvRow(Measured m, String target) {
        return m.operation() + "," + numClients * numThreads + "," + (isBatch(m.operation()) ? batchSize : 1) + ","
                + duration + "," + Math.round(m.opsPerSec()) + "," + m.warmupSeconds() + "," + m.benchJitMs() + ","
                + m.masterJitMs() + "," + target;
    }

    /**
     * Runs {@code op} against the master at {@code address}: mounts the fake segments, writes the keys a get
     * needs, runs {@code --warmup} s (longer while the JIT still compiles, {@link #settleJit}), then measures
     * {@code --duration} s; prints the rate and how long the JIT compiled during the measured window (this JVM's,
     * and the master's when {@code masterPid} is a local process or {@link #SAME_JVM}). {@code unmount}: unmount the
     * fake segments at the end (a shared master).
     */
    Measured measure(Operation op, String address, long masterPid, boolean unmount) {
        // closed in reverse order: the pinger stops (its running ping done) before the clients close
        try (MasterBenchClients clients = new MasterBenchClients(MasterBenchClients.Transport.of(clientTransport),
                address, numClients, ioThreads);
             ScheduledExecutorService pinger = Executors.newSingleThreadScheduledExecutor(r -> {
                 Thread t = new Thread(r, "bench-master-ping");
                 t.setDaemon(true);
                 return t;
             })) {
            Caller admin = caller(clients, 0);
            failures.set(0);
            mountFakeSegments(admin, address);
            pinger.scheduleWithFixedDelay(() -> {
                try {
                    admin.call(Opcode.PING, PingRequest.newBuilder().setNodeId(nodeId).build(),
                            io.tiffin.core.transport.proto.PingReply.parser());
                } catch (RuntimeException e) {
                    System.err.println("ping failed: " + e.getMessage());
                }
            }, 1, 1, TimeUnit.SECONDS);
            List<String> existing = op == Operation.Get || op == Operation.BatchGet ? prefill(admin) : List.of();
            int warmedUp = 0;
            if (warmup > 0) {
                int slice = Math.min(SETTLE_SLICE_S, warmup);
                if (warmup > slice) {
                    runPhase(op, clients, existing, warmup - slice, "w");
                }
                warmedUp = warmup - slice + settleJit(op, clients, existing, masterPid, slice);
            }
            failures.set(0);
            long masterJitBefore = masterPid == SAME_JVM ? -1 : masterPid > 0 ? JitClock.of(masterPid) : -1;
            ProcessProbe masterProbe = masterPid > 0 ? new ProcessProbe(masterPid) : null;
            Map<String, ProcessProbe.ThreadTicks> masterThreads = masterProbe == null ? null
                    : masterProbe.threadCpuTicks();
            long benchJitBefore = JitClock.self();
            long[] result = runPhase(op, clients, existing, duration, "m");
            String masterCpu = masterProbe == null ? null
                    : cpuPerOperation(ProcessProbe.ticksByKind(masterThreads, masterProbe.threadCpuTicks()), result[0]);
            long benchJit = benchJitBefore < 0 ? -1 : JitClock.self() - benchJitBefore;
            long masterJitAfter = masterJitBefore < 0 ? -1 : JitClock.of(masterPid);
            long masterJit = masterPid == SAME_JVM ? benchJit : masterJitAfter < 0 ? -1 : masterJitAfter - masterJitBefore;
            double seconds = result[1] / 1e9;
            double opsPerSec = result[0] / seconds;
            System.out.printf("Operation: %s, clients: %d x %d threads, batch size: %d, keys: %s, warm-up: %d s,"
                    + " duration: %.1f s, keys done: %d%n", op, numClients, numThreads, isBatch(op) ? batchSize : 1,
                    shape, warmedUp, seconds, result[0]);
            if (masterPid == SAME_JVM) {
                System.out.println("JIT compiling during the measured window (bench and master, one JVM): "
                        + JitClock.describe(benchJit, seconds));
            } else {
                System.out.println("JIT compiling during the measured window: bench JVM "
                        + JitClock.describe(benchJit, seconds) + "; master JVM " + (masterPid < 0
                        ? "unknown (--master-pid PID reads it)" : JitClock.describe(masterJit, seconds)));
            }
            if (masterCpu != null) {
                System.out.println("Master CPU per " + (isBatch(op) ? "key" : "call") + " in the measured window: "
                        + masterCpu);
            }
            long failed = failures.get();
            if (failed > 0) {
                System.out.println("Failed keys: " + failed + " (last code " + lastFailure + ")");
            }
            System.out.println("Operations per second: " + Math.round(opsPerSec));
            if (unmount) {
                unmountFakeSegments(admin); // leave a shared master as we found it; pings go on meanwhile
            }
            return new Measured(op, opsPerSec, seconds, result[0], failed, benchJit, masterJit, warmedUp);
        }
    }

    /**
     * CPU time per operation, in µs, from a window's CPU ticks by kind of thread ({@link ProcessProbe#ticksByKind},
     * largest first) and the operations done in it: the total, then each kind, e.g. {@code 5.61 µs (event loops
     * 3.52, GC 1.71, other 0.38)}.
     */
    static String cpuPerOperation(Map<String, Long> ticksByKind, long operations) {
        double usPerTick = 1e6 / ProcessProbe.CLOCK_TICKS_PER_SECOND / Math.max(1, operations);
        long total = ticksByKind.values().stream().mapToLong(Long::longValue).sum();
        StringJoiner kinds = new StringJoiner(", ", String.format(Locale.ROOT, "%.2f µs (", total * usPerTick), ")");
        ticksByKind.forEach((kind, ticks) -> kinds.add(String.format(Locale.ROOT, "%s %.2f", kind, ticks * usPerTick)));
        return kinds.toString();
    }

    /** The warm-up's last part and each extension, seconds (at most {@code --warmup}). */
    static final int SETTLE_SLICE_S = 2;

    /**
     * The warm-up's last {@code slice} s, repeated while the JIT compiled for more than 5% of it (this JVM's, and
     * the master's when {@code masterPid} names a local process), for at most {@code --warmup} s in all: on a loaded
     * machine the compiler threads get little CPU and compile well after a fixed warm-up, into (and slowing) the
     * measured window. Returns the seconds run.
     */
    private int settleJit(Operation op, MasterBenchClients clients, List<String> existing, long masterPid, int slice) {
        long settledMs = slice * 1000L / 20;
        int ran = 0;
        while (ran < warmup) {
            long bench = JitClock.self();
            long master = masterPid > 0 ? JitClock.of(masterPid) : -1;
            runPhase(op, clients, existing, slice, "s" + ran + "t");
            ran += slice;
            boolean benchSettled = bench < 0 || JitClock.self() - bench <= settledMs;
            boolean masterSettled = master < 0 || JitClock.of(masterPid) - master <= settledMs;
            if (benchSettled && masterSettled) {
                break;
            }
        }
        if (ran > slice) {
            System.out.printf("Warm-up extended by %d s while the JIT compiled%n", ran - slice);
        }
        return ran;
    }

    private void validate() {
        if (numSegments < 1 || numClients < 1 || numThreads < 1 || numKeys < 1 || batchSize < 1 || duration < 1
                || valueSize < 1 || warmup < 0 || ioThreads < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--num-segments, --num-clients,"
                    + " --num-threads, --num-keys, --batch-size, --value-size and --duration must be >= 1,"
                    + " --warmup and --io-threads >= 0");
        }
        if (failover && master != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--failover starts masters in this JVM;"
                    + " with --master, run the masters with --coordinator yourself");
        }
        if (!failover && coordinator != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--coordinator needs --failover");
        }
        if (mooncake != null && (master != null || failover)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--mooncake starts both masters itself;"
                    + " not with --master or --failover");
        }
        if (mooncake != null && !java.nio.file.Files.isExecutable(mooncake.resolve("run-master-bench"))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--mooncake " + mooncake
                    + ": no executable run-master-bench there (Mooncake's master_bench wrapper)");
        }
        if (MasterBenchClients.Transport.of(clientTransport) == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--client-transport " + clientTransport
                    + ": expected blocking or event-loop");
        }
        try {
            shape = KeyShape.named(keyShape);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--key-shape " + e.getMessage());
        }
        if (mooncake != null && shape != KeyShape.NUMBERED) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--key-shape " + keyShape + " with --mooncake:"
                    + " Mooncake's master_bench names its keys itself, so both would not be measured alike");
        }
        if (pairs < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--pairs must be >= 1");
        }
        if (masterPid != null && master == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--master-pid goes with --master");
        }
        if (failover && failoverMasters < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--failover-masters must be >= 1");
        }
    }

    private static boolean isBatch(Operation op) {
        return op == Operation.BatchPut || op == Operation.BatchGet;
    }

    private void mountFakeSegments(Caller admin, String address) {
        long size = Sizes.parse(segmentSize);
        for (int i = 0; i < numSegments; i++) {
            Segment s = Segment.newBuilder().setName(nodeId + "-seg" + i).setNodeId(nodeId)
                    .setEndpoint("127.0.0.1:" + (40000 + i)).setCapacity(size).build();
            admin.call(Opcode.MOUNT_SEGMENT, MountSegmentRequest.newBuilder().setSegment(s).build(), Empty.parser());
        }
        System.out.printf("Mounted %d fake segments of %s on %s%n", numSegments, Sizes.format(size), address);
    }

    private void unmountFakeSegments(Caller admin) {
        for (int i = 0; i < numSegments; i++) {
            admin.call(Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder().setNodeId(nodeId)
                    .setSegmentName(nodeId + "-seg" + i).build(), Empty.parser());
        }
    }

    /** Writes {@code --num-keys} complete objects with batch calls; returns their keys. */
    private List<String> prefill(Caller admin) {
        List<String> keys = new ArrayList<>(numKeys);
        SplittableRandom random = new SplittableRandom(runId.hashCode());
        for (int i = 0; i < numKeys; i++) {
            keys.add(shape.key("bench-" + runId + "-pre-", i, random));
        }
        for (int from = 0; from < numKeys; from += 1000) {
            List<String> chunk = keys.subList(from, Math.min(numKeys, from + 1000));
            batchPut(admin, "bench-prefill", chunk);
        }
        if (failures.get() > 0) {
            throw new IllegalStateException("prefill failed for " + failures.get() + " keys (last code "
                    + lastFailure + "); does the master have room for " + numKeys + " x " + valueSize + " bytes?");
        }
        return keys;
    }

    private PutOptionsMsg putOptions() {
        return Messages.toMsg(PutOptions.DEFAULT);
    }

    /** Synchronous calls of one bench client, on the calling thread (generic: implemented by a class, not a lambda). */
    private interface Caller {
        <T extends MessageLite> T call(Opcode opcode, MessageLite request, Parser<T> parser);
    }

    private static Caller caller(MasterBenchClients clients, int client) {
        return new Caller() {
            @Override
            public <T extends MessageLite> T call(Opcode opcode, MessageLite request, Parser<T> parser) {
                return clients.call(client, opcode, request, parser);
            }
        };
    }

    private void batchPut(Caller client, String clientId, List<String> keys) {
        BatchPutStartRequest.Builder start = BatchPutStartRequest.newBuilder().setClientId(clientId)
                .setOptions(putOptions()).addAllKeys(keys).setCompact(true); // as the Java client asks
        for (int i = 0; i < keys.size(); i++) {
            start.addSizes(valueSize);
        }
        BatchPutStartReply started = client.call(Opcode.BATCH_PUT_START, start.build(), BatchPutStartReply.parser());
        for (PutStartResult r : started.getResultsList()) {
            check(r.getCode());
        }
        BatchCodesReply ended = client.call(Opcode.BATCH_PUT_END, BatchKeysRequest.newBuilder()
                .setClientId(clientId).addAllKeys(keys).build(), BatchCodesReply.parser());
        for (int code : ended.getCodesList()) {
            check(code);
        }
    }

    private void check(int code) {
        if (code != 0) {
            failures.incrementAndGet();
            lastFailure = ErrorCode.fromValue(code);
        }
    }

    /** Runs every thread for {@code seconds}; returns {keys done, elapsed nanos}. */
    private long[] runPhase(Operation op, MasterBenchClients clients, List<String> existing, int seconds,
            String phase)
            throws IllegalStateException {
        int threads = numClients * numThreads;
        long[] done = new long[threads];
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(threads);
        long[] deadline = new long[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Caller client = caller(clients, t % numClients);
            Thread w = new Thread(() -> {
                ready.countDown();
                try {
                    go.await();
                    done[id] = work(op, client, id, existing, phase, deadline[0]);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    System.err.println("bench thread " + id + " failed: " + e.getMessage());
                    failures.incrementAndGet();
                } finally {
                    finished.countDown();
                }
            }, "bench-master-" + t);
            w.setDaemon(true);
            workers.add(w);
            w.start();
        }
        try {
            ready.await();
            long start = System.nanoTime();
            deadline[0] = start + TimeUnit.SECONDS.toNanos(seconds);
            go.countDown();
            finished.await();
            long elapsed = System.nanoTime() - start;
            long total = 0;
            for (long d : done) {
                total += d;
            }
            return new long[] {total, elapsed};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            workers.forEach(Thread::interrupt);
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** One thread's loop; returns the number of keys it completed before {@code deadline}. */
    private long work(Operation op, Caller client, int id, List<String> existing, String phase,
            long deadline) {
        String clientId = "bench-" + runId + "-t" + id;
        String keyPrefix = "bench-" + runId + "-" + phase + id + "-";
        SplittableRandom random = new SplittableRandom(id * 7919L + 1);
        SplittableRandom hashes = new SplittableRandom(keyPrefix.hashCode());
        PutOptionsMsg options = putOptions();
        long done = 0;
        long seq = 0;
        List<String> batch = new ArrayList<>(batchSize);
        while (System.nanoTime() < deadline) {
            switch (op) {
                case Put -> {
                    String key = shape.key(keyPrefix, seq++, hashes);
                    client.call(Opcode.PUT_START, PutStartRequest.newBuilder().setClientId(clientId).setKey(key)
                            .setSize(valueSize).setOptions(options).build(), PutStartReply.parser());
                    client.call(Opcode.PUT_END, KeyRequest.newBuilder().setClientId(clientId).setKey(key).build(),
                            Empty.parser());
                    done++;
                }
                case Get -> {
                    String key = existing.get(random.nextInt(existing.size()));
                    ObjectLocationMsg loc = client.call(Opcode.GET_REPLICA_LIST,
                            KeyRequest.newBuilder().setKey(key).build(), ObjectLocationMsg.parser());
                    if (loc.getReplicasCount() == 0) {
                        check(ErrorCode.REPLICA_IS_NOT_READY.value());
                    }
                    done++;
                }
                case BatchPut -> {
                    batch.clear();
                    for (int i = 0; i < batchSize; i++) {
                        batch.add(shape.key(keyPrefix, seq++, hashes));
                    }
                    batchPut(client, clientId, batch);
                    done += batchSize;
                }
                case BatchGet -> {
                    batch.clear();
                    for (int i = 0; i < batchSize; i++) {
                        batch.add(existing.get(random.nextInt(existing.size())));
                    }
                    BatchLocationsReply reply = client.call(Opcode.BATCH_GET_REPLICA_LIST,
                            BatchKeysRequest.newBuilder().addAllKeys(batch).setCompact(true).build(), // as the client
                            BatchLocationsReply.parser());
                    for (LocationResult r : reply.getResultsList()) {
                        check(r.getCode());
                    }
                    done += batchSize;
                }
            }
        }
        return done;
    }
}
