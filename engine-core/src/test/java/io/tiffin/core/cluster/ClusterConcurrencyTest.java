package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many client threads on the same and on different keys over the real data plane. Every value is a
 * function of its key, so whichever writer wins a key, an acknowledged put must read back byte-exact;
 * afterwards removing everything returns all space.
 */
class ClusterConcurrencyTest {
    private static final long MiB = 1L << 20;

    static byte[] valueOf(String key) {
        int size = 1 + Math.floorMod(key.hashCode(), 200_000);
        byte[] b = new byte[size];
        new SplittableRandom(key.hashCode()).nextBytes(b);
        return b;
    }

    @Test
    void acknowledgedPutsReadBackExactlyUnderConcurrency() throws Exception {
        long seed = System.nanoTime();
        try (TestCluster cluster = new TestCluster(Map.of("master.eviction-high-watermark", "1.0",
                "master.lease-ttl", "1s"), 3, 256 * MiB)) {
            List<TiffinClient> clients = List.of(cluster.remoteClient(), cluster.remoteClient());
            Set<String> acknowledged = ConcurrentHashMap.newKeySet();
            int threads = 8;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                futures.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(seed + id);
                    TiffinClient c = clients.get(id % clients.size());
                    for (int op = 0; op < 300; op++) {
                        String key = rnd.nextInt(3) == 0 ? "shared-" + rnd.nextInt(16) : "own-" + id + "-" + rnd.nextInt(60);
                        switch (rnd.nextInt(4)) {
                            case 0, 1 -> {
                                c.put(key, valueOf(key), PutOptions.replicas(1 + rnd.nextInt(2)));
                                acknowledged.add(key);
                            }
                            case 2 -> {
                                try {
                                    assertThat(c.get(key)).as("seed %d key %s", seed, key).isEqualTo(valueOf(key));
                                } catch (TiffinException e) {
                                    assertThat(e.code()).as("seed %d key %s", seed, key)
                                            .isIn(ErrorCode.OBJECT_NOT_FOUND, ErrorCode.REPLICA_IS_NOT_READY);
                                }
                            }
                            default -> {
                                try {
                                    c.remove(key, true);
                                    acknowledged.remove(key);
                                } catch (TiffinException e) {
                                    assertThat(e.code()).isIn(ErrorCode.OBJECT_NOT_FOUND, ErrorCode.REPLICA_IS_NOT_READY);
                                }
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(120, TimeUnit.SECONDS);
            }
            pool.shutdown();
            TiffinClient reader = cluster.remoteClient();
            // Keys only private to one thread were never removed after their last acknowledged put.
            for (String key : acknowledged) {
                if (key.startsWith("own-")) {
                    assertThat(reader.get(key)).as("seed %d key %s", seed, key).isEqualTo(valueOf(key));
                }
            }
            reader.removeAll(true);
            assertThat(cluster.master.service().keyCount()).isZero();
            // Buffers of force-removed leased objects come back when their (1 s) leases end.
            await("all space returns").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> assertThat(cluster.master.service().usedBytes())
                            .as("seed %d: all space returns", seed).isZero());
        }
    }

    /**
     * Rewrites of objects with a memory replica on each of two nodes race readers through all six read APIs
     * ({@link ConcurrentRewrites}): both replicas are written at once and replaced together, and no read returns a
     * stale, torn or wrongly missing value whichever replica it reads.
     */
    @Test
    void rewritesOfTwoReplicaObjectsNeverReadStaleTornOrMissing() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "200ms"), 2, 32L << 20)) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cluster.locationCachingClient(Duration.ofSeconds(30));
            ConcurrentRewrites race = new ConcurrentRewrites("two-", 10, 200_003, 2);

            long rewrites = race.run(writer, List.of(reader, reader, cluster.remoteClient()), Duration.ofSeconds(4));

            race.assertNoWrongAnswer(rewrites);
            // reads take the first replica: every replica of every key, read in its node's memory, holds the last write
            List<String> keys = race.keyNames();
            for (int k = 0; k < keys.size(); k++) {
                var replicas = writer.locate(keys.get(k)).orElseThrow().replicas();
                assertThat(replicas).as("replicas of %s", keys.get(k)).hasSize(2);
                for (var d : replicas) {
                    byte[] held = io.tiffin.core.local.LocalSegmentDirectory.find(d.segment())
                            .slice(d.offset(), d.size()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    assertThat(held).as("%s on %s", keys.get(k), d.segment()).isEqualTo(race.expected(k));
                }
            }
        }
    }
}
