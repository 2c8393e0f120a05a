package io.tiffin.bench.jmh;

import io.tiffin.core.util.Crc32c;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH: the CRC32C a writer computes of each value and a reader of what it received ({@link Crc32c}), over a
 * heap array (a {@code get} into a {@code byte[]}) and off-heap memory (a {@code getInto} destination). The time
 * per call is what {@code client.verify-checksums} adds to a get of that size. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Not thread-safe: one state per benchmark thread ({@link Scope#Thread}); the arena is closed once, at tear-down.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class Crc32cBench {
    @Param({"1048576"})
    public int size;

    private Arena arena;
    private MemorySegment heap;
    private MemorySegment offHeap;

    @Setup(Level.Trial)
    public void setUp() {
        byte[] bytes = new byte[size];
        new SplittableRandom(1).nextBytes(bytes);
        heap = MemorySegment.ofArray(bytes);
        arena = Arena.ofShared();
        offHeap = arena.allocate(size, 64);
        offHeap.copyFrom(heap);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int heapArray() {
        return Crc32c.of(heap);
    }

    @Benchmark
    public int offHeapSegment() {
        return Crc32c.of(offHeap);
    }
}
