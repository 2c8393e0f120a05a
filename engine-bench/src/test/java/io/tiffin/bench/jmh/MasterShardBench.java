package io.tiffin.bench.jmh;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.ArrayList;
import java.util.List;
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
 * JMH: the master's metadata operations in process, without RPC: a put (PutStart + PutEnd, as an upsert
 * over a ring of keys so the key count stays fixed), a single lookup and a 128-key batch lookup, over
 * {@code keys} objects on 128 segments. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Thread-safety: the {@link MasterService} state is shared by benchmark threads (it is thread-safe);
 * each thread keeps its own cursor.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
@State(Scope.Benchmark)
public class MasterShardBench {

    @Param({"100000"})
    public int keys;

    private MasterService master;
    private PluginRegistry plugins;
    private String[] names;
    private final PutOptions upsert = PutOptions.DEFAULT.withUpsert(true);

    /** Per-thread cursor over the keys. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;
        final List<String> batch = new ArrayList<>(128);
    }

    @Setup(Level.Trial)
    public void setUp() {
        plugins = PluginRegistry.classPathOnly();
        master = JmhMasters.withSegments(plugins, 128);
        names = new String[keys];
        for (int i = 0; i < keys; i++) {
            names[i] = "jmh-key-" + i;
            master.putStart("jmh", names[i], 4096, PutOptions.DEFAULT);
            if (master.putEnd("jmh", names[i]) != ErrorCode.OK) {
                throw new IllegalStateException("setup put failed for " + names[i]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        plugins.close();
    }

    @Benchmark
    public ErrorCode putStartPutEnd(Cursor c) {
        String key = names[c.next++ % keys];
        KeyResult<List<ReplicaDescriptor>> started = master.putStart("jmh", key, 4096, upsert);
        return started.isOk() ? master.putEnd("jmh", key) : started.code();
    }

    @Benchmark
    public KeyResult<ObjectLocation> getReplicaList(Cursor c) {
        return master.getReplicaList(names[c.next++ % keys]);
    }

    @Benchmark
    public List<KeyResult<ObjectLocation>> batchGetReplicaList128(Cursor c) {
        c.batch.clear();
        for (int i = 0; i < 128; i++) {
            c.batch.add(names[c.next++ % keys]);
        }
        return master.batchGetReplicaList(c.batch);
    }
}
