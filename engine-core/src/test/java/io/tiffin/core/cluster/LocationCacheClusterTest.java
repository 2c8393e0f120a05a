package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.LocalSegmentDirectory;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.local.SharedMemoryFiles;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.util.ManualTicker;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's location cache ({@code client.location-cache-ttl}) against a real cluster, and the mount
 * epochs that keep it — and any descriptor that outlives the master's knowledge of a segment — from
 * reaching bytes the master has since given to another object.
 */
class LocationCacheClusterTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private static byte[] random(int size, long seed) {
        return TestCluster.randomBytes(size, seed);
    }

    private static LocationCache.Stats stats(TiffinClient c) {
        return c.locationCacheStats().orElseThrow();
    }

    /** Makes the master forget the node (as a master restart would) and waits for the node's re-mount. */
    private static void forgetAndAwaitRemount(TestCluster cluster, NodeServer node) {
        long before = node.remounts();
        cluster.master.service().forgetNode(node.nodeId());
        await("the node re-mounted").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> node.remounts() > before);
    }

    @Test
    void theReuseWindowRunsOnTheClientsClock() {
        ManualTicker ticker = new ManualTicker();
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(2), 100)).ticker(ticker).build());
            cluster.clients.add(c);
            byte[] v = random(3000, 31);
            c.put("k", v);
            assertThat(c.get("k")).isEqualTo(v); // looked up
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).isEqualTo(1);
            ticker.advance(Duration.ofMillis(1999)); // the window: min(ttl 2 s, lease 10 s / 2)
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).isEqualTo(2);
            ticker.advance(Duration.ofMillis(2));
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).as("past the window: looked up again").isEqualTo(2);
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).as("the new lookup is reused").isEqualTo(3);
        }
    }

    @Test
    void repeatedReadsReuseTheLookupAndReturnTheSameBytes() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 32 * MiB); Arena arena = Arena.ofShared()) {
            TiffinClient c = cluster.locationCachingClient(Duration.ofSeconds(5));
            TiffinClient plain = cluster.remoteClient();
            byte[] v = random(300_000, 1);
            byte[] w = random(5_000, 2);
            c.put("k", v);
            plain.put("w", w);
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).isZero();
            for (int i = 0; i < 5; i++) {
                assertThat(c.get("k")).isEqualTo(v);
            }
            MemorySegment dst = arena.allocate(v.length);
            assertThat(c.getInto("k", dst)).isEqualTo(v.length);
            assertThat(dst.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(v);
            try (PinnedValue p = c.getPinned("k")) {
                MemorySegment copy = arena.allocate(v.length);
                p.copyTo(copy);
                assertThat(copy.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(v);
            }
            assertThat(c.exists("k")).isTrue();
            assertThat(stats(c).hits()).as("get x5, getInto, getPinned, exists").isEqualTo(8);
            // a batch mixes cached keys and keys the master is asked for
            assertThat(c.batchGet(List.of("k", "w", "missing"))).satisfiesExactly(
                    r -> assertThat(r.value()).isEqualTo(v),
                    r -> assertThat(r.value()).isEqualTo(w),
                    r -> assertThat(r.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            assertThat(c.batchExists(List.of("k", "w", "missing"))).extracting(KeyResult::value)
                    .containsExactly(true, true, false);
            assertThat(stats(c).hits()).isEqualTo(8 + 1 + 2);
            assertThat(plain.locationCacheStats()).as("off by default").isEmpty();

            // The counters reach the master: STATS (tiffin stat) and /metrics.
            c.reportCaches();
            var totals = plain.stats().caches();
            assertThat(totals.locationCacheClients()).isEqualTo(1);
            assertThat(totals.hotCacheClients()).as("no client has a hot cache").isZero();
            assertThat(totals.totals().locationHits()).isEqualTo(11);
            assertThat(totals.totals().locationMisses()).isEqualTo(stats(c).misses());
            assertThat(cluster.master.metrics().scrape()).contains("tiffin_client_location_cache_hits_total 11.0")
                    .contains("tiffin_client_location_cache_reporting_clients 1.0");
        }
    }

    @Test
    void aLocationFromBeforeTheMasterForgotTheSegmentIsRefusedAndLookedUpAgain() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB); Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient cached = cluster.locationCachingClient(Duration.ofSeconds(30));
            TiffinClient other = cluster.remoteClient();
            byte[] old = random(1 << 20, 3);
            byte[] fresh = random(1 << 20, 4);
            cached.put("old", old);
            assertThat(cached.get("old")).isEqualTo(old); // now cached
            ReplicaDescriptor before = other.locate("old").orElseThrow().replicas().getFirst();
            long epoch = node.mountEpoch();
            assertThat(before.mountEpoch()).isEqualTo(epoch);

            forgetAndAwaitRemount(cluster, node);
            assertThat(node.mountEpoch()).isEqualTo(epoch + 1);
            // Another object takes the old one's place in the empty, re-mounted segment.
            other.put("fresh", fresh);
            ReplicaDescriptor now = other.locate("fresh").orElseThrow().replicas().getFirst();
            assertThat(now.offset()).as("the new object reuses the old one's bytes").isEqualTo(before.offset());
            assertThat(now.mountEpoch()).isEqualTo(epoch + 1);

            // The cached location still names those bytes; the node refuses it, the master says "gone".
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> cached.get("old"));
            assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(stats(cached).refused()).isEqualTo(1);
            assertThat(cached.get("fresh")).isEqualTo(fresh);

            // The same through the batch path: cache "fresh", forget again, put a third object there.
            assertThat(cached.get("fresh")).isEqualTo(fresh);
            forgetAndAwaitRemount(cluster, node);
            byte[] third = random(1 << 20, 5);
            other.put("third", third);
            MemorySegment d1 = arena.allocate(1 << 20);
            MemorySegment d2 = arena.allocate(1 << 20);
            assertThat(cached.batchGetInto(List.of("fresh", "third"), List.of(d1, d2))).satisfiesExactly(
                    r -> assertThat(r.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND),
                    r -> assertThat(r.value()).isEqualTo(third.length));
            assertThat(d2.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(third);
            assertThat(d1.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).as("never the third object's bytes")
                    .isNotEqualTo(third);
            assertThat(stats(cached).refused()).isEqualTo(2);
        }
    }

    @Test
    void theNodeRefusesDataRequestsOfAnotherMount() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "t");
             Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient c = cluster.remoteClient();
            byte[] v = random(4096, 6);
            c.put("k", v);
            ReplicaDescriptor d = c.locate("k").orElseThrow().replicas().getFirst();
            MemorySegment dst = arena.allocate(4096);
            DataRequest.Builder read = io.tiffin.core.transport.Messages.withGrant(DataRequest.newBuilder()
                    .setSegment(d.segment()).setOffset(d.offset()).setLength(4096), d);
            pool.call(node.endpoint(), Opcode.DATA_READ, read.setMountEpoch(d.mountEpoch()).build(), null,
                    Empty.parser(), dst);
            assertThat(dst.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)).isEqualTo(v);
            // epoch 0 skips the epoch check; the grant is bound to the current mount (its key and epoch) anyway
            pool.call(node.endpoint(), Opcode.DATA_READ, read.setMountEpoch(0).build(), null, Empty.parser(), dst);

            TiffinException stale = catchThrowableOfType(TiffinException.class, () -> pool.call(node.endpoint(),
                    Opcode.DATA_READ, read.setMountEpoch(d.mountEpoch() + 1).build(), null, Empty.parser(), dst));
            assertThat(stale.code()).isEqualTo(ErrorCode.REPLICA_IS_GONE);
            assertThat(stale.getMessage()).contains(d.segment(), "look the key up again");
            MemorySegment src = arena.allocate(4096);
            TiffinException write = catchThrowableOfType(TiffinException.class, () -> pool.call(node.endpoint(),
                    Opcode.DATA_WRITE, DataRequest.newBuilder().setSegment(d.segment()).setOffset(d.offset())
                            .setLength(4096).setMountEpoch(d.mountEpoch() + 1).build(), src, Empty.parser(), null));
            assertThat(write.code()).as("a late write of a forgotten put must not land").isEqualTo(ErrorCode.REPLICA_IS_GONE);
            assertThat(c.get("k")).as("the refused write left the bytes alone").isEqualTo(v);
        }
    }

    @Test
    void thisClientsRemovesAndPutsDropItsEntries() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = cluster.locationCachingClient(Duration.ofSeconds(30));
            byte[] v1 = random(10_000, 7);
            byte[] v2 = random(12_000, 8);
            c.put("k", v1);
            assertThat(c.get("k")).isEqualTo(v1);
            c.remove("k", true);
            assertThat(c.exists("k")).isFalse();
            assertThat(catchThrowableOfType(TiffinException.class, () -> c.get("k")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            c.put("k", v2);
            assertThat(c.get("k")).isEqualTo(v2);
            assertThat(c.get("k")).isEqualTo(v2);
            c.removeByRegex("^k$", true);
            assertThat(catchThrowableOfType(TiffinException.class, () -> c.get("k")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            c.put("k", v1);
            assertThat(c.get("k")).isEqualTo(v1);
            c.removeAll(true);
            assertThat(c.batchGet(List.of("k"))).singleElement()
                    .satisfies(r -> assertThat(r.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
        }
    }

    @Test
    void anotherClientsForcedRemoveReturnsOnlyOnceTheReaderCanNoLongerUseItsEntry() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            Duration ttl = Duration.ofMillis(800);
            TiffinClient reader = cluster.locationCachingClient(ttl);
            TiffinClient writer = cluster.remoteClient();
            TiffinClient other = cluster.remoteClient();
            byte[] v = random(20_000, 9);
            byte[] w = random(30_000, 10);
            writer.put("k", v);
            long lookedUp = System.nanoTime();
            assertThat(reader.get("k")).isEqualTo(v);
            assertThat(reader.get("k")).isEqualTo(v);
            assertThat(stats(reader).hits()).as("the second get used the entry").isEqualTo(1);

            CompletableFuture<Void> removal = CompletableFuture.runAsync(() -> writer.remove("k", true));
            // the key goes at once for lookups; only the answer waits
            await("the key gone for lookups").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
                    .until(() -> !other.exists("k"));
            TiffinException refused = catchThrowableOfType(TiffinException.class, () -> other.put("k", w));
            assertThat(removal).as("the removal still waits for the reader's entry").isNotDone();
            assertThat(refused.code()).as("no new object while the old one may still be read")
                    .isEqualTo(ErrorCode.OBJECT_HAS_LEASE);

            removal.get(5, TimeUnit.SECONDS);
            assertThat(System.nanoTime() - lookedUp).as("the remove returned after the entry's lifetime")
                    .isGreaterThanOrEqualTo(ttl.toNanos());
            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.get("k")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(reader.exists("k")).isFalse();
            other.put("k", w);
            assertThat(reader.get("k")).isEqualTo(w);
        }
    }

    /**
     * While a forced remove waits for a reader's cached location, a second remove of the key (forced or not) finds it
     * gone and says so no earlier than the first returns: it answered OBJECT_NOT_FOUND at once, and a read started
     * after that answer still returned the removed bytes through the reader's entry.
     */
    @Test
    void aSecondRemoveOfAKeyBeingForcedOutAnswersNoEarlierThanTheFirst() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            Duration ttl = Duration.ofMillis(800);
            TiffinClient reader = cluster.locationCachingClient(ttl);
            TiffinClient writer = cluster.remoteClient();
            TiffinClient other = cluster.remoteClient();
            for (boolean force : new boolean[] {true, false}) {
                writer.put("k", random(20_000, 9));
                long lookedUp = System.nanoTime();
                assertThat(reader.get("k")).hasSize(20_000);
                CompletableFuture<Void> first = CompletableFuture.runAsync(() -> writer.remove("k", true));
                await("the key gone for lookups").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
                        .until(() -> !other.exists("k"));
                TiffinException second = catchThrowableOfType(TiffinException.class, () -> other.remove("k", force));
                assertThat(second.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                assertThat(System.nanoTime() - lookedUp).as("the second remove (force %s) returned after the reader's"
                        + " entry could be used", force).isGreaterThanOrEqualTo(ttl.toNanos());
                assertThat(catchThrowableOfType(TiffinException.class, () -> reader.get("k")).code())
                        .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                first.get(5, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aClientsForcedRemoveOfWhatOnlyItCachedDoesNotWait() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = cluster.locationCachingClient(Duration.ofSeconds(5)); // a hold would be 6.25 s
            byte[] v = random(10_000, 21);
            byte[] w = random(11_000, 22);
            long t = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                c.put("k", v);
                assertThat(c.get("k")).isEqualTo(v);
                assertThat(c.get("k")).isEqualTo(v);
                c.remove("k", true);
                assertThat(catchThrowableOfType(TiffinException.class, () -> c.get("k")).code())
                        .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            }
            c.put("k", w);
            assertThat(c.batchGet(List.of("k"))).singleElement().satisfies(r -> assertThat(r.isOk()).isTrue());
            assertThat(c.removeAll(true)).isEqualTo(1);
            assertThat(System.nanoTime() - t).as("no removal waited for this client's own cached locations")
                    .isLessThan(Duration.ofSeconds(5).toNanos());
        }
    }

    @Test
    void forcedBatchRegexAndRemoveAllWaitForCachedEntriesToo() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            Duration ttl = Duration.ofMillis(600);
            TiffinClient reader = cluster.locationCachingClient(ttl);
            TiffinClient writer = cluster.remoteClient();
            for (String k : List.of("a/1", "a/2", "b/1", "c/1")) {
                writer.put(k, random(4_000, k.hashCode()));
            }
            long t = System.nanoTime();
            assertThat(reader.batchGet(List.of("a/1", "b/1"))).allSatisfy(r -> assertThat(r.isOk()).isTrue());
            writer.batchRemove(List.of("a/1", "a/2"), true);
            assertThat(System.nanoTime() - t).as("batch remove").isGreaterThanOrEqualTo(ttl.toNanos());
            assertThat(reader.batchGet(List.of("a/1"))).singleElement()
                    .satisfies(r -> assertThat(r.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));

            t = System.nanoTime();
            assertThat(reader.get("c/1")).hasSize(4_000);
            assertThat(reader.get("b/1")).hasSize(4_000);
            assertThat(writer.removeByRegex("^b/", true)).isEqualTo(1);
            assertThat(System.nanoTime() - t).as("remove by regex").isGreaterThanOrEqualTo(ttl.toNanos());
            assertThat(reader.exists("b/1")).isFalse();

            t = System.nanoTime();
            assertThat(reader.get("c/1")).hasSize(4_000);
            assertThat(writer.removeAll(true)).isEqualTo(1);
            assertThat(System.nanoTime() - t).as("remove all").isGreaterThanOrEqualTo(ttl.toNanos());
            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.get("c/1")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }
    }

    /**
     * After a master restart a node that has not pinged yet still serves the previous run's bytes at its
     * old mount epoch, and a client may hold their location: a put of the same key (landing on a node that
     * did re-mount) completes only once such locations have expired, so the reader sees the new object.
     */
    @Test
    void aPutRightAfterAMasterRestartCompletesOnlyOnceLocationsCachedBeforeItHaveExpired() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            port = s.getLocalPort();
        }
        io.tiffin.core.config.TiffinConfig config = io.tiffin.core.config.TiffinConfig.builder()
                .set("master.port", Integer.toString(port)).set("master.admin-port", "0").build();
        String address = "127.0.0.1:" + port;
        io.tiffin.core.master.MasterServer master = io.tiffin.core.master.MasterServer.start(
                io.tiffin.core.Tiffin.injector(config).getInstance(io.tiffin.core.master.MasterServer.Options.class));
        NodeServer a = NodeServer.start(NodeOptions.builder(address).nodeId("node-a").segmentSize(16 * MiB)
                .pingInterval(Duration.ofSeconds(3)).build());
        NodeServer b = NodeServer.start(NodeOptions.builder(address).nodeId("node-b").segmentSize(16 * MiB)
                .pingInterval(Duration.ofMillis(100)).build());
        TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(address)
                .locationCache(new LocationCache.Settings(Duration.ofSeconds(5), 1000)).build());
        TiffinClient writer = null;
        try {
            byte[] v = random(20_000, 1);
            byte[] w = random(20_000, 2);
            reader.put("k", v, PutOptions.DEFAULT.withPreferredSegment(a.segmentName()));
            assertThat(reader.get("k")).isEqualTo(v); // cached for 5 s (the lease is 10 s)

            master.close();
            long restarted = System.nanoTime();
            master = io.tiffin.core.master.MasterServer.start(io.tiffin.core.Tiffin.injector(config)
                    .getInstance(io.tiffin.core.master.MasterServer.Options.class));
            // Bounded, well under the 6 s asserted below: the put itself must wait out the rest.
            await("B re-mounted").atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10))
                    .until(() -> b.remounts() > 0);
            writer = TiffinClient.connect(TestCluster.remoteOptions(address).build());
            writer.put("k", w, PutOptions.DEFAULT.withPreferredSegment(b.segmentName()));
            assertThat(System.nanoTime() - restarted).as("the put completed after the longest cache window"
                    + " (lease / 2 and a quarter)").isGreaterThanOrEqualTo(Duration.ofMillis(6_000).toNanos());
            assertThat(reader.get("k")).as("a get started after the put returned").isEqualTo(w);
            assertThat(writer.get("k")).isEqualTo(w);
        } finally {
            reader.close();
            if (writer != null) {
                writer.close();
            }
            a.close();
            b.close();
            master.close();
        }
    }

    @Test
    void anOrdinaryRemoveOfAKeyBeingReadStillMeetsTheLease() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient reader = cluster.locationCachingClient(Duration.ofSeconds(5));
            TiffinClient writer = cluster.remoteClient();
            writer.put("k", random(1000, 10));
            reader.get("k");
            assertThat(catchThrowableOfType(TiffinException.class, () -> writer.remove("k", false)).code())
                    .isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            assertThat(catchThrowableOfType(TiffinException.class,
                    () -> writer.put("k", random(1000, 11), PutOptions.DEFAULT.withUpsert(true))).code())
                    .isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
        }
    }

    @Test
    void throughASharedMemoryMappingTheClientChecksTheEpochItself() throws Exception {
        Assumptions.assumeFalse(SharedMemoryFiles.hostId().isEmpty() || SharedMemoryFiles.pidNamespace().isEmpty(),
                "needs /proc/sys/kernel/random/boot_id and /proc/self/ns/pid (Linux)");
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            NodeServer node = cluster.addNode("shm-0", 8 * MiB, dir);
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).sharedMemory(true)
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(30), 100)).build());
            cluster.clients.add(c);
            TiffinClient other = cluster.remoteClient();
            byte[] v = random(3000, 12);
            c.put("k", v);
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(c.sharedSegmentsMapped()).isEqualTo(1);
            assertThat(stats(c).hits()).as("the mapped segment publishes its epoch: reusable").isEqualTo(1);
            long offset = other.locate("k").orElseThrow().replicas().getFirst().offset();

            forgetAndAwaitRemount(cluster, node);
            byte[] w = random(3000, 13);
            other.put("w", w);
            assertThat(other.locate("w").orElseThrow().replicas().getFirst().offset()).isEqualTo(offset);
            // The copy through the mapping sees w's bytes, then the epoch word: moved, so not returned.
            assertThat(catchThrowableOfType(TiffinException.class, () -> c.get("k")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(stats(c).refused()).isEqualTo(1);
            assertThat(c.get("w")).isEqualTo(w);
        }
    }

    @Test
    void aMappedWriteIntoASegmentOfAnotherMountIsNotMade() throws Exception {
        Assumptions.assumeFalse(SharedMemoryFiles.hostId().isEmpty() || SharedMemoryFiles.pidNamespace().isEmpty(),
                "needs /proc/sys/kernel/random/boot_id and /proc/self/ns/pid (Linux)");
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            cluster.addNode("shm-0", 8 * MiB, dir);
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).sharedMemory(true)
                    .build());
            cluster.clients.add(c);
            c.put("k", random(3000, 21));
            assertThat(c.sharedSegmentsMapped()).as("writes go through the mapping").isEqualTo(1);
            ReplicaDescriptor d = c.locate("k").orElseThrow().replicas().getFirst();
            LocalSegment segment = LocalSegmentDirectory.find(d.segment());
            // The node has begun a new mount that the master has not heard of: descriptors the master hands
            // out still carry the old epoch, and a write through them may land on another mount's object.
            segment.setMountEpoch(d.mountEpoch() + 1);
            byte[] v = new byte[3000];
            Arrays.fill(v, (byte) 0x5A);
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> c.put("p", v));
            assertThat(e).as("the put fails instead of writing through the mapping").isNotNull();
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.REPLICA_IS_GONE);
            assertThat(e.getMessage()).contains(d.segment(), "repeat the put");
            assertThat(c.exists("p")).isFalse();
            MemorySegment bytes = segment.slice(0, segment.size());
            MemorySegment written = MemorySegment.ofArray(v);
            for (long off = 0; off + v.length <= bytes.byteSize(); off += 64) {
                assertThat(bytes.asSlice(off, v.length).mismatch(written)).as("no copy of the put at %d", off)
                        .isNotEqualTo(-1L);
            }
        }
    }

    /** GET_REPLICA_LIST requests the master has handled, from its metrics. */
    private static double lookups(TestCluster cluster) {
        return cluster.master.metrics().scrape().lines()
                .filter(l -> l.startsWith("tiffin_master_requests_total{") && l.contains("op=\"get_replica_list\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void withAHotCacheARepeatedGetNeedsNoRequestAtAll() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
             io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new io.tiffin.core.client.hotcache.HotCacheSettings(16 * MiB, MiB, 0.5, 1024,
                            plugins.hotCachePolicy("lru")))
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(30), 100)).build());
            cluster.clients.add(c);
            TiffinClient writer = cluster.remoteClient();
            byte[] v = random(2 * (1 << 20) + 5, 14);
            writer.put("k", v);
            assertThat(c.get("k")).isEqualTo(v);
            c.hotCache().freeBlocksWhenQuiet(); // let the asynchronous fill land
            double lookups = lookups(cluster);
            assertThat(lookups).as("the first get looked up").isPositive();
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).hits()).isEqualTo(1);
            assertThat(c.hotCacheStats().orElseThrow().hits()).as("served from the hot cache").isEqualTo(1);
            assertThat(lookups(cluster)).as("no lookup reached the master").isEqualTo(lookups);
        }
    }

    @Test
    void theMasterHandsOutTheEpochOfTheLatestMount() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            c.put("k", random(100, 13), PutOptions.replicas(2));
            ObjectLocation loc = c.locate("k").orElseThrow();
            assertThat(loc.replicas()).hasSize(2).allSatisfy(d -> assertThat(d.mountEpoch()).isEqualTo(1));
        }
    }

    @Test
    void anExistsAnsweredAtHandCountsEachReadOnceWhenTheMasterRunsElsewhere() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(2), 100)).build());
            cluster.clients.add(c);
            byte[] v = random(3000, 37);
            c.put("here", v);
            assertThat(c.get("here")).isEqualTo(v); // looked up: one miss
            assertThat(stats(c).misses()).isEqualTo(1);

            assertThat(c.existsAskingMasterInThisJvm("here")).as("from the location cache").isTrue();
            assertThat(stats(c).hits()).isEqualTo(1);
            // not at hand (the master runs elsewhere): nothing asked, nothing counted, until the usual exists()
            assertThat(c.existsAskingMasterInThisJvm("absent")).isNull();
            assertThat(stats(c).misses()).isEqualTo(1);
            assertThat(c.exists("absent")).isFalse();
            assertThat(stats(c).misses()).isEqualTo(2);
            assertThat(stats(c).hits()).isEqualTo(1);
        }
    }
}
