package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.plugin.allocation.RandomAllocationStrategy;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Many threads on the same and on different keys; afterwards the metadata is consistent: no two live
 * replicas overlap, every completed object is findable, and removing everything returns all space.
 */
class MasterConcurrencyTest {
    private static final long MiB = 1L << 20;

    @RepeatedTest(3)
    void concurrentPutsGetsAndRemovesKeepTheMetadataConsistent() throws Exception {
        long seed = System.nanoTime();
        ManualTicker ticker = new ManualTicker();
        MasterService master = new MasterService(MasterSettings.defaults().withEviction(0.95, 0.05),
                new RandomAllocationStrategy(), ticker, null);
        for (int i = 0; i < 4; i++) {
            master.mountSegment("s" + i, "n" + i, "h:" + i, 32 * MiB);
        }
        int threads = 8;
        int opsPerThread = 3000;
        ConcurrentHashMap<String, Long> completedSizes = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int id = t;
            futures.add(pool.submit(() -> {
                SplittableRandom rnd = new SplittableRandom(seed + id);
                start.await();
                for (int op = 0; op < opsPerThread; op++) {
                    // Half the traffic on 8 hot keys shared by every thread, half on private keys.
                    String key = rnd.nextBoolean() ? "hot-" + rnd.nextInt(8) : "t" + id + "-" + rnd.nextInt(200);
                    long size = 1 + rnd.nextInt(256 * 1024);
                    switch (rnd.nextInt(5)) {
                        case 0, 1 -> {
                            KeyResult<List<ReplicaDescriptor>> r = master.putStart("c" + id, key, size,
                                    PutOptions.replicas(1 + rnd.nextInt(2)));
                            if (r.isOk()) {
                                if (rnd.nextInt(10) == 0) {
                                    assertThat(master.putRevoke("c" + id, key)).isEqualTo(ErrorCode.OK);
                                } else if (master.putEnd("c" + id, key) == ErrorCode.OK) {
                                    completedSizes.put(key + "#" + id + "#" + op, size);
                                }
                            }
                        }
                        case 2 -> {
                            KeyResult<ObjectLocation> r = master.getReplicaList(key);
                            if (r.isOk()) {
                                assertThat(r.value().replicas()).isNotEmpty();
                                assertThat(r.value().replicas().stream().map(ReplicaDescriptor::segment).distinct())
                                        .hasSize(r.value().replicas().size());
                            }
                        }
                        case 3 -> master.remove(key, rnd.nextBoolean());
                        default -> master.batchGetReplicaList(List.of(key, "hot-1", "t" + id + "-1"));
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : futures) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(completedSizes).as("seed %d", seed).isNotEmpty();

        // Live replicas on each segment never overlap.
        List<ObjectLocation> all = master.getReplicaListByRegex(".");
        java.util.Map<String, List<long[]>> bySegment = new java.util.HashMap<>();
        for (ObjectLocation loc : all) {
            for (ReplicaDescriptor d : loc.replicas()) {
                bySegment.computeIfAbsent(d.segment(), s -> new ArrayList<>()).add(new long[] {d.offset(), d.size()});
            }
        }
        for (var e : bySegment.entrySet()) {
            List<long[]> ranges = e.getValue();
            ranges.sort(java.util.Comparator.comparingLong(a -> a[0]));
            for (int i = 1; i < ranges.size(); i++) {
                assertThat(ranges.get(i)[0]).as("seed %d, overlap on %s", seed, e.getKey())
                        .isGreaterThanOrEqualTo(ranges.get(i - 1)[0] + ranges.get(i - 1)[1]);
            }
        }
        master.removeAll(true);
        assertThat(master.keyCount()).as("seed %d", seed).isZero();
        ticker.advance(java.time.Duration.ofSeconds(11)); // let read leases end: force-removed buffers are released
        master.releaseDiscarded();
        assertThat(master.usedBytes()).as("seed %d: all space returns", seed).isZero();
        for (var v : master.segmentViews()) {
            assertThat(v.used()).isZero();
            assertThat(v.largestFreeRegion()).as("seed %d: %s coalesced back to one region", seed, v.name())
                    .isEqualTo(v.capacity());
        }
    }
}
