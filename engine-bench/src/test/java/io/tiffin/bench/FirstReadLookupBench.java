package io.tiffin.bench;

import io.tiffin.api.PutOptions;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * What a {@code bench hotcache} first round pays that later rounds do not: in the same setup (master and nodes A
 * and B in this JVM, 25 values of 10 MB on A, a reader without same-JVM copies, with the 2 s location cache, no hot
 * cache), per fresh reader the first and second read of every key, and the time of a lookup right after a 10 MB
 * read, right after another lookup, after a 2 ms pause, and in a tight loop. Prints medians; asserts nothing (a
 * measurement, not a test: its figures depend on the machine). Run with {@code -Dtiffin.bench=true}:
 * {@code ./mvnw -pl engine-bench -am test -Dtest=FirstReadLookupBench -Dsurefire.failIfNoSpecifiedTests=false
 * -Dtiffin.bench=true}.
 */
@EnabledIfSystemProperty(named = "tiffin.bench", matches = "true")
class FirstReadLookupBench {
    private static final int KEYS = 25;
    private static final int VALUE = 10_000_000;

    @Test
    void firstRoundLookups() throws Exception {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("master.eviction-high-watermark", "1.0").build();
        try (MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class))) {
            String address = "127.0.0.1:" + master.address().getPort();
            try (NodeServer a = node("bench-node-a", 1L << 30, address);
                 NodeServer b = node("bench-node-b", 64L << 20, address);
                 TiffinClient writer = TiffinClient.connect(BenchClientOptions.hotCacheWriter(address))) {
                List<String> names = new ArrayList<>();
                for (int i = 0; i < KEYS; i++) {
                    byte[] bytes = new byte[VALUE];
                    new SplittableRandom(i).nextBytes(bytes);
                    writer.put("first-read/" + i, bytes, PutOptions.DEFAULT.withPreferredSegment(a.segmentName()));
                    names.add("first-read/" + i);
                }
                for (int pass = 0; pass < 10; pass++) {
                    readerPass(address, names, pass);
                }
                try (TiffinClient r = TiffinClient.connect(BenchClientOptions.hotCacheReader(address, null,
                        Duration.ZERO))) {
                    double[] loop = new double[2000];
                    for (int i = 0; i < loop.length; i++) {
                        long t = System.nanoTime();
                        r.locate(names.get(i % KEYS));
                        loop[i] = (System.nanoTime() - t) / 1e3;
                    }
                    System.out.printf(Locale.ROOT, "lookups in a tight loop: median %.0f us%n", median(loop));
                }
            }
        }
    }

    private static void readerPass(String address, List<String> names, int pass) throws InterruptedException {
        try (TiffinClient r = TiffinClient.connect(BenchClientOptions.hotCacheReader(address, null,
                Duration.ofSeconds(2)));
             Arena arena = Arena.ofShared()) {
            MemorySegment buf = arena.allocate(VALUE, 4096);
            double[] first = new double[KEYS];
            double[] second = new double[KEYS];
            double[] afterRead = new double[KEYS];
            double[] again = new double[KEYS];
            double[] afterPause = new double[KEYS];
            for (int k = 0; k < KEYS; k++) {
                String key = names.get(k);
                long t0 = System.nanoTime();
                r.getInto(key, buf);
                long t1 = System.nanoTime();
                r.locate(key);
                long t2 = System.nanoTime();
                r.locate(key);
                long t3 = System.nanoTime();
                Thread.sleep(2);
                long t4 = System.nanoTime();
                r.locate(key);
                long t5 = System.nanoTime();
                first[k] = (t1 - t0) / 1e3;
                afterRead[k] = (t2 - t1) / 1e3;
                again[k] = (t3 - t2) / 1e3;
                afterPause[k] = (t5 - t4) / 1e3;
            }
            for (int k = 0; k < KEYS; k++) {
                long t = System.nanoTime();
                r.getInto(names.get(k), buf);
                second[k] = (System.nanoTime() - t) / 1e3;
            }
            System.out.printf(Locale.ROOT, "reader %d: first read %.0f us, second %.0f us; lookup after a read %.0f us,"
                            + " right after a lookup %.0f us, after 2 ms %.0f us (medians of %d keys)%n", pass,
                    median(first), median(second), median(afterRead), median(again), median(afterPause), KEYS);
        }
    }

    private static NodeServer node(String id, long segment, String master) {
        return NodeServer.start(NodeOptions.builder(master).nodeId(id).segmentSize(segment)
                .pingInterval(Duration.ofSeconds(1)).build());
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
