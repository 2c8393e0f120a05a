package io.tiffin.bench;

import com.sun.nio.file.ExtendedOpenOption;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.config.Sizes;
import io.tiffin.core.plugin.PluginRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench storage}: Mooncake's {@code storage_backend_bench} for the {@code bucket} storage
 * backend, loaded through the plugin registry like a node loads it.
 *
 * <p>Tests: {@code offload} (timed {@code writeBatch} of {@code --batch-size} objects per operation),
 * {@code load} (timed {@code readBatch} of the same batches, in write order), {@code concurrent_load}
 * (the same reads spread over {@value #READ_THREADS} threads), {@code restart} (close and reopen the
 * backend and scan what survived, {@value #RESTARTS} times). An operation is one batch; throughput counts
 * value bytes (MB = 10^6 bytes); latencies are per batch. The first {@code --warmup-operations} batches
 * of each test are not measured.
 *
 * <p>Baseline ({@code raw_direct}): for {@code load} and {@code concurrent_load}, the same number of bytes
 * is read from one plain file in the same directory, sequentially, on one thread, with O_DIRECT, in reads
 * of the value size (rounded up to the block size), grouped into batches of {@code --batch-size} reads
 * for latency; the ratio bucket/raw is printed. The file is written and fsynced right after the offload
 * data, so both are equally fresh. In {@code load} the two are interleaved operation by operation (one
 * bucket batch, then one raw batch), so both see the same disk and machine conditions; throughput is
 * bytes over the summed operation times of each. In {@code concurrent_load} the raw read runs after the
 * concurrent phase, on one thread. The backend's {@code
 * readBatch} merges objects that lie next to each other in a bucket into one read (up to 8 MiB), which
 * is how a batch offloaded together is meant to load; the baseline does not merge.
 *
 * <p>Page cache: {@code --cache-mode direct} makes the backend read with O_DIRECT, which bypasses the page
 * cache, like the baseline. With {@code buffered} the backend reads through the page cache; to keep the
 * bytes just written from flattering those reads, the command asks the kernel to drop clean caches
 * ({@code sync} then {@code 1 > /proc/sys/vm/drop_caches}, which needs root) before each load test and
 * says so; if that is refused, it prints a warning that buffered numbers include cache hits.
 *
 * <p>Not thread-safe: one instance runs one benchmark. Owns the backend it opens and the off-heap arena of
 * its buffers, and closes both (and deletes its working directory) before {@link #call()} returns.
 */
@Command(name = "storage", mixinStandardHelpOptions = true,
        description = "Benchmark the bucket storage backend (SSD tier) against a raw O_DIRECT read.")
public final class BenchStorageCommand implements Callable<Integer> {
    static final int READ_THREADS = 4;
    static final int RESTARTS = 5;
    static final String CSV_HEADER = "test,target,value_size,throughput_mb_s,ops_s,p50_ms,p99_ms";
    private static final List<String> TESTS = List.of("offload", "load", "concurrent_load", "restart");

    @Option(names = "--test", defaultValue = "all",
            description = "offload, load, concurrent_load, restart or all (default: ${DEFAULT-VALUE})")
    String test;

    @Option(names = "--value-size", defaultValue = "128KiB", description = "bytes per object (default: ${DEFAULT-VALUE})")
    String valueSize;

    @Option(names = "--batch-size", defaultValue = "32", description = "objects per operation (default: ${DEFAULT-VALUE})")
    int batchSize;

    @Option(names = "--num-operations", defaultValue = "200", description = "measured operations (default: ${DEFAULT-VALUE})")
    int numOperations;

    @Option(names = "--warmup-operations", defaultValue = "20",
            description = "unmeasured operations first (default: ${DEFAULT-VALUE})")
    int warmupOperations;

    @Option(names = "--cache-mode", defaultValue = "direct",
            description = "buffered or direct reads in the backend (default: ${DEFAULT-VALUE})")
    String cacheMode;

    @Option(names = "--storage-path", description = "directory to write in (default: the system temp directory)")
    Path storagePath;

    @Option(names = "--csv", description = "also write the results to this CSV file")
    Path csv;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** One result line. */
    record Result(String test, String target, long valueSize, double throughputMbS, double opsS, double p50Ms,
            double p99Ms) {
        String csv() {
            return String.format(Locale.ROOT, "%s,%s,%d,%.1f,%.1f,%.3f,%.3f", test, target, valueSize, throughputMbS,
                    opsS, p50Ms, p99Ms);
        }
    }

    private final List<Result> results = new ArrayList<>();
    private long value;
    private Path workDir;
    private StorageBackend backend;
    private PluginRegistry registry;
    private boolean populated;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchStorageCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<String> tests = validate();
        Path base = storagePath != null ? storagePath : Path.of(System.getProperty("java.io.tmpdir"));
        Files.createDirectories(base);
        workDir = Files.createTempDirectory(base, "tiffin-bench-storage-");
        PrintWriter out = spec.commandLine().getOut();
        out.printf(Locale.ROOT, "bench storage: backend bucket, value %d bytes, batch %d, %d operations (+%d warm-up), "
                + "cache mode %s, in %s%n", value, batchSize, numOperations, warmupOperations, cacheMode, workDir);
        registry = BenchSupport.plugins();
        try (Arena arena = Arena.ofShared()) {
            backend = openBackend();
            for (String t : tests) {
                switch (t) {
                    case "offload" -> offload(arena);
                    case "load" -> load(arena, false);
                    case "concurrent_load" -> load(arena, true);
                    case "restart" -> restart(arena);
                    default -> throw new IllegalStateException(t);
                }
            }
        } finally {
            if (backend != null) {
                backend.close();
            }
            registry.close();
            BenchSupport.deleteTree(workDir);
        }
        out.println();
        out.printf(Locale.ROOT, "%-16s %-10s %12s %12s %10s %10s%n", "test", "target", "MB/s", "ops/s", "p50 ms",
                "p99 ms");
        for (Result r : results) {
            out.printf(Locale.ROOT, "%-16s %-10s %12.1f %12.1f %10.3f %10.3f%n", r.test(), r.target(), r.throughputMbS(),
                    r.opsS(), r.p50Ms(), r.p99Ms());
        }
        for (String t : List.of("load", "concurrent_load")) {
            Result bucket = find(t, "bucket");
            Result raw = find(t, "raw_direct");
            if (bucket != null && raw != null) {
                out.printf(Locale.ROOT, "%s: bucket / raw_direct = %.2f%n", t, bucket.throughputMbS() / raw.throughputMbS());
            }
        }
        if (csv != null) {
            List<String> lines = new ArrayList<>(List.of(CSV_HEADER));
            results.forEach(r -> lines.add(r.csv()));
            Files.write(csv, lines, StandardCharsets.UTF_8);
            out.println("CSV written to " + csv);
        }
        out.flush();
        return 0;
    }

    private List<String> validate() {
        CommandLine cl = spec.commandLine();
        if (!test.equals("all") && !TESTS.contains(test)) {
            throw new CommandLine.ParameterException(cl, "--test = " + test
                    + " (expected: offload, load, concurrent_load, restart or all)");
        }
        if (!cacheMode.equals("buffered") && !cacheMode.equals("direct")) {
            throw new CommandLine.ParameterException(cl, "--cache-mode = " + cacheMode + " (expected: buffered or direct)");
        }
        try {
            value = Sizes.parse(valueSize);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(cl, "--value-size: " + e.getMessage());
        }
        if (value < 16 || value > (256L << 20)) {
            throw new CommandLine.ParameterException(cl, "--value-size = " + valueSize + " (expected: 16B to 256MiB)");
        }
        if (batchSize < 1 || numOperations < 1 || warmupOperations < 0) {
            throw new CommandLine.ParameterException(cl, "--batch-size = " + batchSize + ", --num-operations = "
                    + numOperations + ", --warmup-operations = " + warmupOperations
                    + " (expected: batch and operations >= 1, warm-up >= 0)");
        }
        return test.equals("all") ? TESTS : List.of(test);
    }

    private StorageBackend openBackend() {
        return registry.storageBackend("bucket").create(new PluginContext(Map.of(
                "path", workDir.resolve("bucket").toString(),
                "direct-io", Boolean.toString(cacheMode.equals("direct"))), "bench"));
    }

    private int totalOps() {
        return warmupOperations + numOperations;
    }

    private static String key(int op, int i) {
        return "bench-" + op + "-" + i;
    }

    private List<MemorySegment> buffers(Arena arena) {
        List<MemorySegment> list = new ArrayList<>();
        for (int i = 0; i < batchSize; i++) {
            list.add(arena.allocate(value, 4096));
        }
        return list;
    }

    private Map<String, MemorySegment> batch(int op, List<MemorySegment> values, SplittableRandom random) {
        Map<String, MemorySegment> m = new LinkedHashMap<>();
        for (int i = 0; i < batchSize; i++) {
            MemorySegment v = values.get(i);
            v.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, (long) op * batchSize + i);
            v.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, random.nextLong());
            m.put(key(op, i), v);
        }
        return m;
    }

    private void offload(Arena arena) {
        List<MemorySegment> values = buffers(arena);
        SplittableRandom random = new SplittableRandom(42);
        values.forEach(v -> {
            for (long o = 0; o + 8 <= value; o += 8) {
                v.set(ValueLayout.JAVA_LONG_UNALIGNED, o, random.nextLong());
            }
        });
        Histogram h = histogram();
        long measuredNanos = 0;
        for (int op = 0; op < totalOps(); op++) {
            Map<String, MemorySegment> b = batch(op, values, random);
            long t0 = System.nanoTime();
            backend.writeBatch(b);
            long dt = System.nanoTime() - t0;
            if (op >= warmupOperations) {
                h.recordValue(dt);
                measuredNanos += dt;
            }
        }
        populated = true;
        results.add(result("offload", "bucket", numOperations, measuredNanos, h));
        try {
            writeRawFile();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the raw baseline file in " + workDir, e);
        }
    }

    private void load(Arena arena, boolean concurrent) throws Exception {
        if (!populated) {
            offload(arena);
            results.removeLast();
        }
        String name = concurrent ? "concurrent_load" : "load";
        dropPageCache(name);
        Histogram h = histogram();
        Histogram raw = histogram();
        long bucketNanos = 0;
        long rawNanos = 0;
        try (RawReader reader = new RawReader()) {
            List<MemorySegment> dests = buffers(arena);
            if (!concurrent) {
                // Interleaved op by op, so both see the same disk and machine conditions.
                for (int op = 0; op < totalOps(); op++) {
                    long t0 = System.nanoTime();
                    readOp(op, dests);
                    long t1 = System.nanoTime();
                    reader.readOp();
                    long t2 = System.nanoTime();
                    if (op >= warmupOperations) {
                        h.recordValue(t1 - t0);
                        raw.recordValue(t2 - t1);
                        bucketNanos += t1 - t0;
                        rawNanos += t2 - t1;
                    }
                }
            } else {
                for (int op = 0; op < warmupOperations; op++) {
                    readOp(op, dests);
                    reader.readOp();
                }
                bucketNanos = concurrentReads(arena, h);
                long start = System.nanoTime();
                for (int op = warmupOperations; op < totalOps(); op++) {
                    raw.recordValue(reader.readOp());
                }
                rawNanos = System.nanoTime() - start;
            }
        }
        results.add(result(name, "bucket", numOperations, bucketNanos, h));
        results.add(result(name, "raw_direct", numOperations, rawNanos, raw));
    }

    /** The measured reads spread over {@value #READ_THREADS} threads; returns the wall time. */
    private long concurrentReads(Arena arena, Histogram h) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(READ_THREADS);
        try {
            List<Future<Histogram>> futures = new ArrayList<>();
            long start = System.nanoTime();
            for (int t = 0; t < READ_THREADS; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    Histogram mine = histogram();
                    List<MemorySegment> dests = buffers(arena);
                    for (int op = warmupOperations + thread; op < totalOps(); op += READ_THREADS) {
                        long t0 = System.nanoTime();
                        readOp(op, dests);
                        mine.recordValue(System.nanoTime() - t0);
                    }
                    return mine;
                }));
            }
            for (Future<Histogram> f : futures) {
                h.add(f.get());
            }
            return System.nanoTime() - start;
        } finally {
            pool.shutdown();
        }
    }

    private void readOp(int op, List<MemorySegment> dests) {
        List<String> keys = new ArrayList<>(batchSize);
        for (int i = 0; i < batchSize; i++) {
            keys.add(key(op, i));
        }
        long[] n = backend.readBatch(keys, dests);
        for (int i = 0; i < batchSize; i++) {
            if (n[i] != value || dests.get(i).get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != (long) op * batchSize + i) {
                throw new IllegalStateException("read of " + keys.get(i) + " returned " + n[i]
                        + " bytes or the wrong object (expected: " + value + " bytes of object "
                        + ((long) op * batchSize + i) + ")");
            }
        }
    }

    private long rawChunk() throws IOException {
        int block = (int) Math.max(512, Files.getFileStore(workDir).getBlockSize());
        return (value + block - 1) / block * block;
    }

    /**
     * Writes the baseline file (as many bytes as a load test reads) right after the backend's data, so
     * both are equally fresh when the load tests start.
     */
    private void writeRawFile() throws IOException {
        Path file = workDir.resolve("raw.bin");
        if (Files.exists(file)) {
            return;
        }
        long chunk = rawChunk();
        long total = chunk * batchSize * (long) totalOps();
        try (Arena arena = Arena.ofConfined();
                FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            MemorySegment buffer = arena.allocate(chunk, 4096);
            SplittableRandom random = new SplittableRandom(7);
            for (long o = 0; o + 8 <= chunk; o += 8) {
                buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, o, random.nextLong());
            }
            ByteBuffer bb = buffer.asByteBuffer();
            for (long pos = 0; pos < total; pos += chunk) {
                bb.clear();
                while (bb.hasRemaining()) {
                    ch.write(bb, pos + bb.position());
                }
            }
            ch.force(true);
        }
    }

    /**
     * Reads the baseline file sequentially with O_DIRECT, one operation ({@code --batch-size} reads of
     * the value size) at a time. Not thread-safe; owns its channel and its aligned buffer's arena.
     */
    private final class RawReader implements AutoCloseable {
        private final Arena arena = Arena.ofConfined();
        private final FileChannel channel;
        private final ByteBuffer buffer;
        private final long chunk;
        private long position;

        RawReader() throws IOException {
            chunk = rawChunk();
            int block = (int) Math.max(512, Files.getFileStore(workDir).getBlockSize());
            buffer = arena.allocate(chunk, block).asByteBuffer();
            channel = FileChannel.open(workDir.resolve("raw.bin"), StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
        }

        /** Reads the next operation's bytes; returns the nanoseconds it took. */
        long readOp() throws IOException {
            long t0 = System.nanoTime();
            for (int i = 0; i < batchSize; i++) {
                buffer.clear();
                while (buffer.hasRemaining()) {
                    if (channel.read(buffer, position + buffer.position()) < 0) {
                        throw new IOException("raw file ended early at " + position);
                    }
                }
                position += chunk;
            }
            return System.nanoTime() - t0;
        }

        @Override
        public void close() throws IOException {
            try {
                channel.close();
            } finally {
                arena.close();
            }
        }
    }

    private void restart(Arena arena) {
        if (!populated) {
            offload(arena);
            results.removeLast();
        }
        Histogram h = histogram();
        long total = 0;
        long bytes = 0;
        for (int i = 0; i < RESTARTS; i++) {
            backend.close();
            long t0 = System.nanoTime();
            backend = openBackend();
            long[] recovered = new long[2];
            backend.scan((k, size) -> {
                recovered[0]++;
                recovered[1] += size;
            });
            long dt = System.nanoTime() - t0;
            if (recovered[0] != (long) totalOps() * batchSize) {
                throw new IllegalStateException("restart recovered " + recovered[0] + " objects (expected: "
                        + (long) totalOps() * batchSize + ")");
            }
            h.recordValue(dt);
            total += dt;
            bytes += recovered[1];
        }
        double seconds = total / 1e9;
        results.add(new Result("restart", "bucket", value, bytes / 1e6 / seconds, RESTARTS / seconds,
                h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6));
    }

    private void dropPageCache(String name) {
        PrintWriter out = spec.commandLine().getOut();
        try {
            new ProcessBuilder("sync").inheritIO().start().waitFor();
            Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "1");
            out.println(name + ": dropped the page cache before reading");
        } catch (IOException | RuntimeException e) {
            if (cacheMode.equals("buffered")) {
                out.println(name + ": WARNING: cannot drop the page cache (" + e.getMessage()
                        + "); buffered reads may be served from memory and look faster than the disk");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while syncing", e);
        }
    }

    private Result result(String name, String target, int ops, long nanos, Histogram h) {
        double seconds = nanos / 1e9;
        double bytes = (double) ops * batchSize * value;
        return new Result(name, target, value, bytes / 1e6 / seconds, ops / seconds, h.getValueAtPercentile(50) / 1e6,
                h.getValueAtPercentile(99) / 1e6);
    }

    private Result find(String name, String target) {
        return results.stream().filter(r -> r.test().equals(name) && r.target().equals(target)).findFirst()
                .orElse(null);
    }

    private static Histogram histogram() {
        return new Histogram(3);
    }

    /** The results of the last run, in order (for tests). */
    List<Result> results() {
        return List.copyOf(results);
    }
}
