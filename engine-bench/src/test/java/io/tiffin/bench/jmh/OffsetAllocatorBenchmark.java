package io.tiffin.bench.jmh;

import io.tiffin.core.allocator.OffsetAllocator;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * JMH benchmark of the {@link OffsetAllocator} alone: one operation is an allocation of a size from
 * the {@code kv_mixed} mix (4 KiB ×70, 256 KiB ×20, 3,274,752 B ×10) on a 1 GiB allocator kept at
 * about 70–90% use, freeing a random live allocation whenever the allocator is above its high
 * water mark or the allocation fails. Run it with {@link #main}; see docs/BENCHMARKS.md.
 *
 * <p>Not thread-safe: one state per benchmark thread ({@link Scope#Thread}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class OffsetAllocatorBenchmark {
    private static final long[] SIZES = {4L << 10, 256L << 10, 3_274_752L};
    private static final int[] CUMULATIVE = {70, 90, 100};

    @Param({"1073741824"})
    public long capacity;

    private OffsetAllocator allocator;
    private SplittableRandom random;
    private long[] live;
    private int liveCount;
    private long highWater;

    @Setup
    public void setUp() {
        allocator = new OffsetAllocator(capacity);
        random = new SplittableRandom(42);
        live = new long[1 << 20];
        highWater = capacity / 10 * 9;
        while (allocator.usedBytes() < capacity / 10 * 7) {
            allocateOne();
        }
    }

    private long nextSize() {
        int r = random.nextInt(100);
        return r < CUMULATIVE[0] ? SIZES[0] : r < CUMULATIVE[1] ? SIZES[1] : SIZES[2];
    }

    private long allocateOne() {
        long handle = allocator.allocate(nextSize());
        if (handle >= 0) {
            live[liveCount++] = handle;
        }
        return handle;
    }

    private void freeRandom() {
        int i = random.nextInt(liveCount);
        allocator.free(live[i]);
        live[i] = live[--liveCount];
    }

    /** One allocation, after freeing a random live allocation if the allocator is over 90% used. */
    @Benchmark
    public long allocateFreeMix() {
        if (allocator.usedBytes() > highWater || liveCount == live.length) {
            freeRandom();
        }
        long handle = allocateOne();
        if (handle < 0 && liveCount > 0) {
            freeRandom();
        }
        return handle;
    }

    /** Runs this benchmark with a small fork and iteration count. */
    public static void main(String[] args) throws RunnerException {
        Options options = new OptionsBuilder()
                .include(OffsetAllocatorBenchmark.class.getSimpleName())
                .forks(1)
                .warmupIterations(3)
                .warmupTime(TimeValue.seconds(1))
                .measurementIterations(5)
                .measurementTime(TimeValue.seconds(1))
                .jvmArgsAppend("--sun-misc-unsafe-memory-access=allow", "--enable-native-access=ALL-UNNAMED")
                .build();
        new Runner(options).run();
    }
}
