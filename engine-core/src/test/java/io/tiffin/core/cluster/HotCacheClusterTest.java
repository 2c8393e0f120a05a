package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;

import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.config.ConfigException;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.plugin.PluginRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The client hot cache over a real cluster: hits, no stale reads across clients, configuration. */
class HotCacheClusterTest {
    private static final long MiB = 1L << 20;

    private static TiffinClient cachingClient(TestCluster cluster, PluginRegistry plugins, String policy) {
        TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                .hotCache(new HotCacheSettings(64 * MiB, MiB, 0.5, 1024, plugins.hotCachePolicy(policy))).build());
        cluster.clients.add(c);
        return c;
    }

    /**
     * A read that outlives its lease fails ({@code LEASE_EXPIRED}, or {@code REPLICA_IS_GONE} when the node sees its
     * grant expired first) and leaves nothing in the cache: after
     * the lease the master may have freed the replica and given its memory to another object, whose bytes
     * the read may have received; cached under this object's version they would be served to every later
     * read of it (its version does not change when it moves to SSD).
     */
    @Test
    void aReadThatOutlivesItsLeaseFillsNothing() {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "3ms"), 1, 256 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            writer.put("k", ClusterEndToEndTest.bytes(7, (int) (64 * MiB))); // far more than 3 ms to read
            TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new HotCacheSettings(256 * MiB, MiB, 1.0, 1024, plugins.hotCachePolicy("lru"))).build());
            cluster.clients.add(reader);

            // The client's lease clock refuses the read (LEASE_EXPIRED); on a loaded machine a later slice of the
            // 64 MiB may reach the node more than the grants' grace (1 s) after the lookup, and the node refuses it
            // first (REPLICA_IS_GONE, the grant expired). Either way the read fails and must fill nothing.
            var outlived = List.of(io.tiffin.api.ErrorCode.LEASE_EXPIRED, io.tiffin.api.ErrorCode.REPLICA_IS_GONE);
            for (Runnable read : List.<Runnable>of(() -> reader.get("k"), () -> reader.getPinned("k").close())) {
                assertThatThrownBy(read::run).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                        e -> assertThat(e.code()).isIn(outlived));
            }
            assertThat(reader.batchGet(List.of("k")).getFirst().code()).isIn(outlived);

            reader.hotCache().freeBlocksWhenQuiet();
            assertThat(reader.hotCacheStats().orElseThrow().fills()).as("fills of lease-expired reads").isZero();
        }
    }

    /**
     * A zero-copy batch get whose retry fails (a cached location refused, then the master unreachable)
     * throws, and closes what it had already opened: the pinned cache block comes back.
     */
    @Test
    void aBatchGetPinnedThatFailsOnItsRetryClosesTheValuesItOpened() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new HotCacheSettings(8 * MiB, MiB, 0.25, 1024, plugins.hotCachePolicy("lru")))
                    .locationCache(new io.tiffin.core.client.LocationCache.Settings(java.time.Duration.ofSeconds(5),
                            100)).build());
            cluster.clients.add(reader);
            writer.put("y", TestCluster.randomBytes((int) MiB, 1));       // cached (one block)
            writer.put("x", TestCluster.randomBytes((int) (3 * MiB), 2)); // too large for the cache
            reader.get("y");
            reader.get("x");
            reader.hotCache().freeBlocksWhenQuiet();
            int blocks = reader.hotCache().blockCount();
            cluster.nodes.getFirst().close(); // x's read through its cached location fails...
            cluster.nodes.clear();
            cluster.master.close();           // ...and its fresh lookup finds no master

            assertThatThrownBy(() -> reader.batchGetPinned(List.of("y", "x")))
                    .isInstanceOf(io.tiffin.api.TiffinException.class);

            reader.hotCache().invalidate("y");
            assertThat(reader.hotCache().freeBlocksWhenQuiet()).as("y's block, pinned for the batch").isEqualTo(blocks);
        }
    }

    @Test
    void repeatedRemoteReadsAreServedFromTheCacheForGetBatchGetAndGetInto() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly();
             Arena arena = Arena.ofConfined()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, "lru");
            byte[] big = ClusterEndToEndTest.bytes(1, (int) (20 * MiB + 3)); // spans 21 blocks and 2 slices
            writer.put("big", big);
            writer.put("small", ClusterEndToEndTest.bytes(2, 100));
            assertThat(reader.get("big")).isEqualTo(big);
            reader.hotCache().freeBlocksWhenQuiet(); // let the asynchronous fill land
            assertThat(reader.get("big")).isEqualTo(big);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).isEqualTo(1);

            List<KeyResult<byte[]>> batch = reader.batchGet(List.of("small", "big"));
            reader.hotCache().freeBlocksWhenQuiet();
            batch = reader.batchGet(List.of("small", "big"));
            assertThat(batch.get(0).value()).isEqualTo(ClusterEndToEndTest.bytes(2, 100));
            assertThat(batch.get(1).value()).isEqualTo(big);
            MemorySegment dst = arena.allocate(big.length);
            assertThat(reader.getInto("big", dst)).isEqualTo(big.length);
            assertThat(dst.mismatch(MemorySegment.ofArray(big))).isEqualTo(-1);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).isGreaterThanOrEqualTo(4);

            // The counters reach the master: STATS (tiffin stat) and /metrics.
            reader.reportCaches();
            var totals = writer.stats().caches();
            assertThat(totals.hotCacheClients()).isEqualTo(1);
            assertThat(totals.totals().hits()).isGreaterThanOrEqualTo(4);
            assertThat(cluster.master.metrics().scrape()).contains("tiffin_client_hotcache_hits_total")
                    .contains("tiffin_client_hotcache_stale_rejected_total");
        }
    }

    /** A client with a hot cache and a location cache reusing lookups for up to {@code reuse}. */
    private static TiffinClient cachingClient(TestCluster cluster, PluginRegistry plugins, Duration reuse) {
        TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                .hotCache(new HotCacheSettings(64 * MiB, MiB, 0.5, 1024, plugins.hotCachePolicy("lru")))
                .locationCache(new LocationCache.Settings(reuse, 1000)).build());
        cluster.clients.add(c);
        return c;
    }

    /** GET_REPLICA_LIST and BATCH_GET_REPLICA_LIST requests the master has handled, from its metrics. */
    private static double lookups(TestCluster cluster) {
        return cluster.master.metrics().scrape().lines()
                .filter(l -> l.startsWith("tiffin_master_requests_total{") && l.contains("get_replica_list\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void withinTheReuseWindowAHitThroughEveryReadApiAsksTheMasterNothing() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly();
             Arena arena = Arena.ofShared()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, Duration.ofSeconds(30));
            byte[] a = ClusterEndToEndTest.bytes(41, (int) (3 * MiB + 5)); // spans 4 blocks
            byte[] b = ClusterEndToEndTest.bytes(42, 777);
            writer.put("a", a);
            writer.put("b", b);
            assertThat(reader.get("a")).isEqualTo(a);
            assertThat(reader.batchGet(List.of("b")).getFirst().value()).isEqualTo(b);
            reader.hotCache().freeBlocksWhenQuiet(); // let the fills land
            double before = lookups(cluster);
            assertThat(before).as("the first reads looked the keys up").isGreaterThanOrEqualTo(2);
            long hitsBefore = reader.hotCacheStats().orElseThrow().hits();

            assertThat(reader.get("a")).isEqualTo(a);
            MemorySegment dst = arena.allocate(a.length);
            assertThat(reader.getInto("a", dst)).isEqualTo(a.length);
            assertThat(dst.mismatch(MemorySegment.ofArray(a))).isEqualTo(-1);
            List<KeyResult<byte[]>> batch = reader.batchGet(List.of("a", "b"));
            assertThat(batch.get(0).value()).isEqualTo(a);
            assertThat(batch.get(1).value()).isEqualTo(b);
            MemorySegment dstB = arena.allocate(b.length);
            dst.fill((byte) 0);
            assertThat(reader.batchGetInto(List.of("a", "b"), List.of(dst, dstB)))
                    .extracting(KeyResult::value).containsExactly((long) a.length, (long) b.length);
            assertThat(dst.mismatch(MemorySegment.ofArray(a))).isEqualTo(-1);
            assertThat(dstB.mismatch(MemorySegment.ofArray(b))).isEqualTo(-1);
            try (PinnedValue v = reader.getPinned("a")) {
                assertThat(bytesOf(v)).isEqualTo(a);
            }
            for (KeyResult<PinnedValue> r : reader.batchGetPinned(List.of("a", "b"))) {
                try (PinnedValue v = r.valueOrThrow()) {
                    assertThat(bytesOf(v)).isEqualTo(r.key().equals("a") ? a : b);
                }
            }
            assertThat(reader.hotCacheStats().orElseThrow().hits() - hitsBefore).as("every read a hit").isEqualTo(9);
            assertThat(lookups(cluster)).as("no lookup reached the master").isEqualTo(before);
        }
    }

    /**
     * The location cache's rule, with hits that reach neither master nor node: once another client's remove,
     * put or upsert of a key has returned, no read of this client returns the key's old bytes — through
     * any API, the first read after it or any later one.
     */
    @Test
    void onceAnotherClientsRemovePutOrUpsertReturnedNoReadReturnsTheOldBytes() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "1s"), 2, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly();
             Arena arena = Arena.ofShared()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, Duration.ofSeconds(30)); // capped at lease / 2
            int size = (int) (2 * MiB + 1);
            for (int generation = 0; generation < 6; generation++) {
                byte[] value = ClusterEndToEndTest.bytes(100 + generation, size); // same size: only versions differ
                switch (generation % 3) {
                    case 0 -> {
                        if (generation > 0) {
                            writer.remove("k", true); // returns once the reader's reuse window has passed
                            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.get("k")).code())
                                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                            assertThat(reader.batchGetPinned(List.of("k")).getFirst().code())
                                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                        }
                        writer.put("k", value);
                    }
                    case 1 -> await("an upsert past the reader's lease").atMost(Duration.ofSeconds(10))
                            .pollInterval(Duration.ofMillis(20)).ignoreExceptionsMatching(
                                    e -> e instanceof TiffinException t && t.code() == ErrorCode.OBJECT_HAS_LEASE)
                            .until(() -> {
                                writer.put("k", value, PutOptions.DEFAULT.withUpsert(true));
                                return true;
                            });
                    default -> {
                        writer.remove("k", true);
                        writer.put("k", value);
                    }
                }
                // the write has returned: every read from now on sees it, hits included
                for (int read = 0; read < 3; read++) {
                    assertThat(reader.get("k")).as("generation %d read %d", generation, read).isEqualTo(value);
                    MemorySegment dst = arena.allocate(size);
                    reader.getInto("k", dst);
                    assertThat(dst.mismatch(MemorySegment.ofArray(value))).isEqualTo(-1);
                    try (PinnedValue v = reader.getPinned("k")) {
                        assertThat(bytesOf(v)).isEqualTo(value);
                    }
                    reader.hotCache().freeBlocksWhenQuiet();
                }
            }
            assertThat(reader.hotCacheStats().orElseThrow().hits()).as("reads were served by the cache").isPositive();
        }
    }

    /**
     * As above, for a forced replacement (the Redis gateway's SET: {@code replaceLeased}), which does not wait for
     * the reader's lease: its PutEnd still returns only once the reader's reuse of the old location has ended, so
     * no read after it returns the old bytes.
     */
    @Test
    void onceAnotherClientsForcedReplacementReturnedNoReadReturnsTheOldBytes() {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "2s"), 2, 64 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, Duration.ofSeconds(30)); // capped at lease / 2
            int size = (int) MiB;
            PutOptions set = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
            for (int generation = 0; generation < 4; generation++) {
                byte[] value = ClusterEndToEndTest.bytes(200 + generation, size);
                writer.put("k", value, set);
                for (int read = 0; read < 3; read++) {
                    assertThat(reader.get("k")).as("generation %d read %d", generation, read).isEqualTo(value);
                }
            }
        }
    }

    private static byte[] bytesOf(PinnedValue v) {
        byte[] out = new byte[(int) v.size()];
        v.copyTo(MemorySegment.ofArray(out));
        return out;
    }

    @Test
    void zeroCopyGetReadsIntoCacheBlocksThenServesThemPinned() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, "lru");
            byte[] big = ClusterEndToEndTest.bytes(11, (int) (20 * MiB + 5)); // 21 blocks, 2 slices
            writer.put("big", big);
            try (PinnedValue first = reader.getPinned("big")) {
                assertThat(first.fromCache()).isFalse();
                assertThat(first.segments()).allMatch(MemorySegment::isReadOnly);
                assertThat(bytesOf(first)).isEqualTo(big);
            }
            reader.hotCache().freeBlocksWhenQuiet();
            assertThat(reader.hotCacheStats().orElseThrow().fills()).as("the read itself filled the cache").isEqualTo(1);
            PinnedValue second = reader.getPinned("big");
            assertThat(second.fromCache()).isTrue();
            assertThat(second.segments()).hasSize(21);
            // another client replaces the object; the pinned copy keeps its bytes until closed
            writer.remove("big", true);
            byte[] replaced = ClusterEndToEndTest.bytes(12, big.length);
            writer.put("big", replaced);
            try (PinnedValue third = reader.getPinned("big")) {
                assertThat(third.fromCache()).isFalse();
                assertThat(bytesOf(third)).isEqualTo(replaced);
            }
            assertThat(bytesOf(second)).isEqualTo(big);
            second.close();
            assertThatThrownBy(second::segments).isInstanceOf(IllegalStateException.class);
            reader.hotCache().freeBlocksWhenQuiet();
            try (PinnedValue fourth = reader.getPinned("big")) {
                assertThat(fourth.fromCache()).isTrue();
                assertThat(bytesOf(fourth)).isEqualTo(replaced);
            }
            assertThat(reader.hotCacheStats().orElseThrow().staleRejected()).isPositive();
            assertThatThrownBy(() -> reader.getPinned("missing"))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND));
            reader.hotCache().freeBlocksWhenQuiet();
            assertThat(reader.hotCache().freeBlocksWhenQuiet() + reader.hotCache().residentBlocks())
                    .as("no block leaked").isEqualTo(reader.hotCache().blockCount());
        }
    }

    @Test
    void zeroCopyBatchGetMixesHitsMissesAndMissingKeysAndWorksWithoutACache() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient reader = cachingClient(cluster, plugins, "sieve");
            TiffinClient plain = cluster.remoteClient();
            byte[] a = ClusterEndToEndTest.bytes(21, 3 * (int) MiB + 1);
            byte[] b = ClusterEndToEndTest.bytes(22, 777);
            writer.put("a", a);
            writer.put("b", b);
            try (PinnedValue warm = reader.getPinned("a")) {
                assertThat(bytesOf(warm)).isEqualTo(a);
            }
            reader.hotCache().freeBlocksWhenQuiet();
            for (TiffinClient c : List.of(reader, plain)) {
                List<KeyResult<PinnedValue>> r = c.batchGetPinned(List.of("a", "nope", "b"));
                assertThat(r.get(1).isOk()).isFalse();
                assertThat(r.get(1).code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND);
                assertThat(bytesOf(r.get(0).value())).isEqualTo(a);
                assertThat(bytesOf(r.get(2).value())).isEqualTo(b);
                assertThat(r.get(0).value().fromCache()).isEqualTo(c == reader);
                r.get(0).value().close();
                r.get(2).value().close();
            }
        }
    }

    @Test
    void aKeyRemovedAndPutAgainByAnotherClientIsNeverReadStale() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 128 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient a = cluster.remoteClient();
            for (String policy : plugins.names(io.tiffin.core.plugin.ExtensionPoint.HOT_CACHE_POLICY)) {
                TiffinClient b = cachingClient(cluster, plugins, policy);
                String key = "k-" + policy;
                for (int round = 0; round < 20; round++) {
                    byte[] value = ClusterEndToEndTest.bytes(round * 31L + policy.hashCode(), 3000 + round);
                    a.put(key, value, PutOptions.replicas(1 + round % 2));
                    assertThat(b.get(key)).as("%s round %d first read", policy, round).isEqualTo(value);
                    b.hotCache().freeBlocksWhenQuiet();
                    assertThat(b.get(key)).as("%s round %d cached read", policy, round).isEqualTo(value);
                    a.remove(key, true);
                    if (round % 3 == 0) {
                        // same size, new bytes: only the version tells them apart
                        a.put(key, ClusterEndToEndTest.bytes(round * 31L + policy.hashCode() + 1, 3000 + round));
                        assertThat(b.get(key)).isEqualTo(ClusterEndToEndTest.bytes(round * 31L + policy.hashCode() + 1,
                                3000 + round));
                        a.remove(key, true);
                    }
                }
                assertThat(b.hotCacheStats().orElseThrow().staleRejected()).isPositive();
                assertThat(b.hotCacheStats().orElseThrow().hits()).isPositive();
            }
        }
    }

    @Test
    void putAndRemoveThroughTheCachingClientInvalidateAtOnce() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 64 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient c = cachingClient(cluster, plugins, "lru");
            c.put("x", new byte[] {1, 2, 3});
            // The replica lives on a node of another process, as far as this client knows: it is cached.
            assertThat(c.get("x")).containsExactly(1, 2, 3);
            c.hotCache().freeBlocksWhenQuiet();
            c.remove("x", true);
            assertThat(c.hotCacheStats().orElseThrow().invalidations()).isEqualTo(1);
            c.put("x", new byte[] {4, 5, 6}, PutOptions.DEFAULT.withUpsert(true));
            assertThat(c.get("x")).containsExactly(4, 5, 6);
            c.removeAll(true);
        }
    }

    @Test
    void configurationCases() {
        // Unset or 0: disabled.
        try (Tiffin t = Tiffin.embedded(base().build())) {
            assertThat(t.client().hotCacheStats()).isEmpty();
        }
        // Smaller than one block: disabled with a warning (not an error).
        try (Tiffin t = Tiffin.embedded(base().fromEnvironment(Map.of("LOCAL_HOT_CACHE_SIZE", "1MiB",
                "LOCAL_HOT_BLOCK_SIZE", "4MiB")).build())) {
            assertThat(t.client().hotCacheStats()).isEmpty();
        }
        try (Tiffin t = Tiffin.embedded(base().fromEnvironment(Map.of("MC_STORE_LOCAL_HOT_CACHE_SIZE", "8388608",
                "MC_STORE_LOCAL_HOT_BLOCK_SIZE", "1MiB")).build())) {
            assertThat(t.client().hotCacheStats().orElseThrow().capacityBytes()).isEqualTo(8 * MiB);
        }
        assertThatThrownBy(() -> base().fromEnvironment(Map.of("LOCAL_HOT_CACHE_SIZE", "-5")).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("LOCAL_HOT_CACHE_SIZE")
                .hasMessageContaining("-5");
        assertThatThrownBy(() -> base().fromEnvironment(Map.of("LOCAL_HOT_CACHE_SIZE", "lots")).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("LOCAL_HOT_CACHE_SIZE")
                .hasMessageContaining("lots");
        assertThatThrownBy(() -> base().fromEnvironment(Map.of("LOCAL_HOT_BLOCK_SIZE", "0")).build())
                .isInstanceOf(ConfigException.class).hasMessageContaining("LOCAL_HOT_BLOCK_SIZE");
        // Memory the machine cannot give: the client does not start.
        assertThatThrownBy(() -> Tiffin.embedded(base().set("hotcache.size", "64TiB")
                .set("hotcache.block-size", "1GiB").build()).close())
                .isInstanceOf(TiffinException.class).hasMessageContaining("hotcache.size");
        assertThatThrownBy(() -> Tiffin.embedded(base().set("hotcache.size", "64MiB")
                .set("hotcache.policy", "nope").build()).close())
                .isInstanceOf(TiffinException.class).hasMessageContaining("lru");
    }

    private static TiffinConfig.Builder base() {
        return TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB");
    }
}
