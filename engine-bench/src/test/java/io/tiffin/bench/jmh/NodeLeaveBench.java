package io.tiffin.bench.jmh;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.master.MasterSettings;
import io.tiffin.core.master.TierSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * JMH: a node with an SSD tier leaving a master in process ({@link MasterService#unmountSegment} of its one segment),
 * with {@code keys} objects in memory on {@value #NODES} nodes and as many more on their SSD tiers ({@code keys} /
 * {@value #NODES} per node on each). Before each leave the node that left mounts again, registers its SSD tier and
 * reports its SSD objects, and its memory objects are put again. Single shots: the time of one leave, the objects
 * of the node erased. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Not thread-safe: one benchmark thread.
 */
public class NodeLeaveBench extends SingleShotMasterBench {
    private static final int NODES = 100;
    private static final long OBJECT = 4096;

    private MasterService master;
    private int leaving;
    private int round;

    @Setup(Level.Trial)
    public void setUp() {
        master = JmhMasters.randomPlacement(PluginRegistry.classPathOnly(),
                MasterSettings.defaults().withTier(TierSettings.defaults()), Ticker.SYSTEM);
        for (int n = 0; n < NODES; n++) {
            join(n);
        }
        for (int i = 0; i < keys; i++) {
            String key = "jmh-mem-" + i;
            master.putStart("jmh", key, OBJECT, PutOptions.DEFAULT);
            if (master.putEnd("jmh", key) != ErrorCode.OK) {
                throw new IllegalStateException("the put of " + key + " failed");
            }
        }
    }

    /** Node {@code n} mounts its segment, registers its SSD tier and reports its share of the SSD objects. */
    private void join(int n) {
        master.mountSegment("jmh-seg" + n, "jmh-node" + n, "127.0.0.1:" + (40000 + n), 64L << 30);
        master.ssdTier().registerStorage("jmh-node" + n, 1L << 40);
        int perNode = keys / NODES;
        List<String> ssdKeys = new ArrayList<>(perNode);
        for (int i = 0; i < perNode; i++) {
            ssdKeys.add("jmh-ssd-" + n + "-" + round + "-" + i);
        }
        master.ssdTier().reportDiskObjects("jmh-node" + n, ssdKeys, Collections.nCopies(perNode, OBJECT));
    }

    /** The node that left last comes back, and the memory objects it took are put again (about keys / nodes). */
    @Setup(Level.Invocation)
    public void rejoin() {
        if (round > 0) {
            join(leaving);
            int perNode = keys / NODES;
            for (int i = 0; i < perNode; i++) {
                String key = "jmh-mem-" + round + "-" + i;
                master.putStart("jmh", key, OBJECT, PutOptions.DEFAULT);
                master.putEnd("jmh", key);
            }
        }
        leaving = round % NODES;
        round++;
    }

    @Benchmark
    public long leave() {
        master.unmountSegment("jmh-node" + leaving, "jmh-seg" + leaving);
        return master.keyCount();
    }
}
