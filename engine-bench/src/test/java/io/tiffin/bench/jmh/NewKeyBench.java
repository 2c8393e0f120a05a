package io.tiffin.bench.jmh;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.bench.KeyShape;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.List;
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
 * JMH: what a new key costs the master, in process (no RPC), by the shape of the keys: the oldest of {@code keys}
 * objects removed and a new key put (PutStart + PutEnd), so the key count stays fixed and every operation adds one
 * key to the key index and removes one, the keys of four writers in turn ({@link KeyShape}): {@code numbered} keys
 * ({@code bench-client-3-key-123456}, as the master benchmarks name them) arrive in ascending runs; {@code lmcache}
 * keys are named as LMCache names its chunks ({@code bench-client-3-key-@1@0@<chunk hash>@bfloat16}) with random
 * chunk hashes, so each lands at a random place in the index. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Thread-safety: one benchmark thread ({@code -t 1}); the ring of keys is its own.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
        "-Xmx6g"})
@State(Scope.Benchmark)
public class NewKeyBench {

    @Param({"1000000"})
    public int keys;

    @Param({"numbered", "lmcache"})
    public String shape;

    private MasterService master;
    private PluginRegistry plugins;
    /** The live keys, oldest at {@link #next}. */
    private String[] ring;
    private int next;
    private long made;
    private KeyShape keyShape;
    private final SplittableRandom random = new SplittableRandom(42);

    @Setup(Level.Trial)
    public void setUp() {
        keyShape = KeyShape.named(shape);
        plugins = PluginRegistry.classPathOnly();
        master = JmhMasters.withSegments(plugins, 128);
        ring = new String[keys];
        for (int i = 0; i < keys; i++) {
            ring[i] = newKey();
            put(ring[i]);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        plugins.close();
    }

    @Benchmark
    public ErrorCode removeOldestPutNew() {
        ErrorCode removed = master.remove(ring[next], false);
        if (removed != ErrorCode.OK) {
            throw new IllegalStateException("remove of " + ring[next] + ": " + removed);
        }
        ring[next] = newKey();
        ErrorCode put = put(ring[next]);
        next = (next + 1) % keys;
        return put;
    }

    private ErrorCode put(String key) {
        KeyResult<List<ReplicaDescriptor>> started = master.putStart("jmh", key, 4096, PutOptions.DEFAULT);
        ErrorCode code = started.isOk() ? master.putEnd("jmh", key) : started.code();
        if (code != ErrorCode.OK) {
            throw new IllegalStateException("put of " + key + ": " + code);
        }
        return code;
    }

    /** Four writers' keys in turn, each writer's numbered or named as LMCache names chunks ({@link KeyShape}). */
    private String newKey() {
        long n = made++;
        return keyShape.key("bench-client-" + (n & 3) + "-key-", n >> 2, random);
    }
}
