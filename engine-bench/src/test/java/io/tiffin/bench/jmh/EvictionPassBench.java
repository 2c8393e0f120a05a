package io.tiffin.bench.jmh;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.master.MasterSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * JMH: one memory-eviction pass of the master in process ({@link MasterService#runEvictionOnce}), over {@code keys}
 * objects of 4 KiB on 1,000 segments filled to 94% (high watermark 0.9, ratio 0.05: a pass evicts 9% of them).
 * Before each pass the objects it evicted are put again (new keys, one millisecond of the master's clock per three
 * keys, so leases end at many instants), and the clock moves 30 s on so no lease holds. Single shots: the time of
 * one pass, census and evictions. Run: see docs/BENCHMARKS.md ("JMH").
 *
 * <p>Not thread-safe: one benchmark thread.
 */
public class EvictionPassBench extends SingleShotMasterBench {
    private static final int SEGMENTS = 1000;
    private static final long OBJECT = 4096;
    private static final double FILL = 0.94;

    /** The master's clock, moved by the benchmark. */
    private static final class Clock implements Ticker {
        volatile long millis = 1_700_000_000_000L;

        @Override
        public long millis() {
            return millis;
        }
    }

    private final Clock clock = new Clock();
    private MasterService master;
    private long capacity;
    private long next;

    @Setup(Level.Trial)
    public void setUp() {
        master = JmhMasters.randomPlacement(PluginRegistry.classPathOnly(),
                MasterSettings.defaults().withEviction(0.9, 0.05), clock);
        long perSegment = (long) Math.ceil(keys * OBJECT / FILL / SEGMENTS);
        for (int i = 0; i < SEGMENTS; i++) {
            master.mountSegment("jmh-seg" + i, "jmh-node" + i, "127.0.0.1:" + (40000 + i), perSegment);
        }
        capacity = perSegment * SEGMENTS;
    }

    /** Puts objects until the pool is {@value #FILL} full again, then lets every lease end. */
    @Setup(Level.Invocation)
    public void refill() {
        while (master.usedBytes() < FILL * capacity) {
            String key = "jmh-evict-" + next;
            master.putStart("jmh", key, OBJECT, PutOptions.DEFAULT);
            if (master.putEnd("jmh", key) != ErrorCode.OK) {
                throw new IllegalStateException("the put of " + key + " failed");
            }
            if (++next % 3 == 0) {
                clock.millis++;
            }
        }
        clock.millis += 30_000;
    }

    @Benchmark
    public int evictionPass() {
        int evicted = master.runEvictionOnce();
        if (evicted == 0) {
            throw new IllegalStateException("the pass evicted nothing at " + master.usedBytes() + " of " + capacity);
        }
        return evicted;
    }
}
