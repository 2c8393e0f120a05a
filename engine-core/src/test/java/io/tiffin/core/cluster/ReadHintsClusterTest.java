package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.ReadHints;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.node.NodeServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Gets that read a key's last known replica while looking it up ({@link ReadHints}) against a real
 * cluster: they return what a get that waits for its lookup returns, also when the hinted bytes were
 * removed, replaced in the same place, resized, or their node stopped.
 */
class ReadHintsClusterTest {
    private static final long MiB = 1L << 20;

    private static byte[] random(int size, long seed) {
        return TestCluster.randomBytes(size, seed);
    }

    private static ReadHints.Stats stats(TiffinClient c) {
        return c.readHintStats().orElseThrow();
    }

    @Test
    void aGetReadsTheHintedReplicaWhileLookingTheKeyUp() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB); Arena arena = Arena.ofShared()) {
            TiffinClient c = cluster.remoteClient();
            byte[] v = random(1 << 20, 1);
            c.put("k", v); // the put's replica becomes the hint, its connection stays open
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(stats(c).confirmed()).isEqualTo(1);
            MemorySegment dst = arena.allocate(2 * MiB);
            assertThat(c.getInto("k", dst)).isEqualTo(v.length);
            assertThat(dst.asSlice(0, v.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(v);
            assertThat(stats(c)).isEqualTo(new ReadHints.Stats(2, 0, 1));

            // another client learns the hint from its first lookup
            TiffinClient other = cluster.remoteClient();
            assertThat(other.get("k")).isEqualTo(v);
            assertThat(other.get("k")).isEqualTo(v);
            assertThat(stats(other).confirmed()).isEqualTo(1);

            // a thread-confined destination is read the usual way (the transfer cannot write into it)
            try (Arena confined = Arena.ofConfined()) {
                MemorySegment own = confined.allocate(v.length);
                assertThat(c.getInto("k", own)).isEqualTo(v.length);
                assertThat(own.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(v);
            }
            assertThat(stats(c).confirmed()).isEqualTo(2);
        }
    }

    @Test
    void offWhenTheSizeIsZero() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).readHints(0)
                    .build());
            cluster.clients.add(c);
            byte[] v = random(5000, 2);
            c.put("k", v);
            assertThat(c.get("k")).isEqualTo(v);
            assertThat(c.readHintStats()).isEmpty();
        }
    }

    @Test
    void bytesReplacedInTheSamePlaceAreNotReturned() {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "200ms"), 1, 4 * MiB)) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            byte[] old = random(1 << 20, 3);
            byte[] fresh = random(1 << 20, 4);
            reader.put("k", old);
            ReplicaDescriptor before = writer.locate("k").orElseThrow().replicas().getFirst();
            // A plain remove is refused (and changes nothing) while the locate's lease lasts; once it ends, the
            // remove goes through and frees the bytes at once.
            await("the locate's lease to end").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> removedUnlessLeased(writer, "k"));
            writer.put("k", fresh);
            ReplicaDescriptor now = writer.locate("k").orElseThrow().replicas().getFirst();
            assertThat(now.offset()).as("the new object reuses the old one's bytes").isEqualTo(before.offset());
            assertThat(now.replicaId()).isNotEqualTo(before.replicaId());

            // The hint still names offset and mount epoch of those bytes, which the node serves; the
            // lookup names another replica, so the read is dropped and the new object read.
            assertThat(reader.get("k")).isEqualTo(fresh);
            assertThat(stats(reader)).isEqualTo(new ReadHints.Stats(0, 1, 1));
            assertThat(reader.get("k")).isEqualTo(fresh);
            assertThat(stats(reader).confirmed()).as("the lookup renewed the hint").isEqualTo(1);
        }
    }

    @Test
    void aRemovedKeyIsNotFoundThoughItsBytesAreStillThere() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB); Arena arena = Arena.ofShared()) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            reader.put("k", random(300_000, 5));
            writer.remove("k", true);
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> reader.get("k"));
            assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            reader.put("j", random(300_000, 6));
            writer.remove("j", true);
            e = catchThrowableOfType(TiffinException.class, () -> reader.getInto("j", arena.allocate(MiB)));
            assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            // the pooled connections still work: the dropped reads were not left half-read on one
            byte[] v = random(200_000, 7);
            reader.put("v", v);
            for (int i = 0; i < 5; i++) {
                assertThat(reader.get("v")).isEqualTo(v);
            }
            assertThat(stats(reader).confirmed()).isEqualTo(5);
        }
    }

    @Test
    void aReplacementOfAnotherSizeIsReadWhole() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB); Arena arena = Arena.ofShared()) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            reader.put("k", random(100_000, 8));
            byte[] larger = random(300_000, 9);
            writer.put("k", larger, PutOptions.DEFAULT.withUpsert(true));
            assertThat(reader.get("k")).isEqualTo(larger);
            byte[] smaller = random(50_000, 10);
            writer.remove("k", true);
            writer.put("k", smaller);
            MemorySegment dst = arena.allocate(MiB);
            assertThat(reader.getInto("k", dst)).isEqualTo(smaller.length);
            assertThat(dst.asSlice(0, smaller.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(smaller);
            // a destination that holds the hinted object but not the current one: the usual error
            writer.remove("k", true);
            writer.put("k", larger);
            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.getInto("k", arena.allocate(60_000)))
                    .code()).isEqualTo(ErrorCode.BUFFER_OVERFLOW);
            assertThat(stats(reader).refuted()).isEqualTo(3);
            // now the hint is larger than the destination: no speculation, the same error
            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.getInto("k", arena.allocate(60_000)))
                    .code()).isEqualTo(ErrorCode.BUFFER_OVERFLOW);
            assertThat(stats(reader)).isEqualTo(new ReadHints.Stats(0, 3, 1));
        }
    }

    @Test
    void aHintToAStoppedNodeCostsNoWait() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB)) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            reader.put("k", random(1 << 20, 11));
            ReplicaDescriptor hinted = writer.locate("k").orElseThrow().replicas().getFirst();
            NodeServer gone = cluster.nodes.stream().filter(n -> n.nodeId().equals(hinted.nodeId())).findFirst()
                    .orElseThrow();
            gone.close();
            cluster.master.service().forgetNode(gone.nodeId());
            byte[] fresh = random(1 << 20, 12);
            writer.put("k", fresh);
            assertThat(writer.locate("k").orElseThrow().replicas().getFirst().nodeId()).isNotEqualTo(gone.nodeId());
            long t0 = System.nanoTime();
            assertThat(reader.get("k")).isEqualTo(fresh);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(3));
        }
    }

    /**
     * Writers keep replacing keys (force remove, put) in a segment small enough that the allocator hands
     * the same bytes to the next object; readers with hints that go stale all the time must only ever
     * see a whole value of the key (each value names its own seed and is checked against it), or not
     * find it (removed, or still being written).
     */
    @Test
    void readersNeverSeeAnotherObjectsBytesWhileKeysAreReplaced() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "300ms",
                "master.eviction-high-watermark", "1.0"), 1, 64 * MiB)) {
            List<TiffinClient> readers = List.of(cluster.remoteClient(), cluster.remoteClient());
            TiffinClient writerClient = cluster.remoteClient();
            int keys = 8;
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong seeds = new AtomicLong(1000);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                List<Future<?>> done = new ArrayList<>();
                done.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(1);
                    while (!stop.get()) {
                        String key = "k" + r.nextInt(keys);
                        try {
                            writerClient.remove(key, true);
                        } catch (TiffinException e) {
                            if (e.code() != ErrorCode.OBJECT_NOT_FOUND) {
                                throw e;
                            }
                        }
                        writerClient.put(key, valueFor(key, seeds.incrementAndGet(), 64 * 1024 + r.nextInt(4) * 4096));
                        // Paces the writer, not a wait for a condition: some hints stay good for a few reads.
                        Thread.sleep(2);
                    }
                    return null;
                }));
                for (int t = 0; t < 3; t++) {
                    TiffinClient reader = readers.get(t % readers.size());
                    int id = t;
                    done.add(pool.submit(() -> {
                        SplittableRandom r = new SplittableRandom(100 + id);
                        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                        int read = 0;
                        while (System.nanoTime() < deadline) {
                            String key = "k" + r.nextInt(keys);
                            try {
                                checkValue(key, reader.get(key));
                                read++;
                            } catch (TiffinException e) {
                                if (e.code() != ErrorCode.OBJECT_NOT_FOUND && e.code() != ErrorCode.REPLICA_IS_NOT_READY
                                        && e.code() != ErrorCode.LEASE_EXPIRED) {
                                    throw e;
                                }
                            }
                        }
                        return read;
                    }));
                }
                List<Integer> reads = new ArrayList<>();
                for (Future<?> f : done.subList(1, done.size())) {
                    reads.add((Integer) f.get());
                }
                stop.set(true);
                done.getFirst().get();
                assertThat(reads).as("values read per reader").allMatch(n -> n > 0);
            } finally {
                stop.set(true);
                pool.shutdownNow();
            }
            long refuted = readers.stream().mapToLong(c -> stats(c).refuted()).sum();
            long confirmed = readers.stream().mapToLong(c -> stats(c).confirmed()).sum();
            assertThat(refuted).as("hints went stale under the readers").isPositive();
            assertThat(confirmed).as("and were confirmed in between").isPositive();
        }
    }

    /** A plain (unforced) remove of {@code key}: true if done, false if refused for a read lease. */
    private static boolean removedUnlessLeased(TiffinClient c, String key) {
        try {
            c.remove(key, false);
            return true;
        } catch (TiffinException e) {
            if (e.code() != ErrorCode.OBJECT_HAS_LEASE) {
                throw e;
            }
            return false;
        }
    }

    /** A value naming its key and seed in its first bytes, the rest drawn from the seed. */
    private static byte[] valueFor(String key, long seed, int size) {
        byte[] v = new byte[size];
        new SplittableRandom(seed * 31 + key.hashCode()).nextBytes(v);
        ByteBuffer.wrap(v).putLong(seed).putInt(key.hashCode());
        return v;
    }

    private static void checkValue(String key, byte[] got) {
        ByteBuffer b = ByteBuffer.wrap(got);
        long seed = b.getLong();
        assertThat(b.getInt()).as("value of another key under %s", key).isEqualTo(key.hashCode());
        assertThat(Arrays.equals(got, valueFor(key, seed, got.length))).as("%s: the bytes of value %d, whole", key, seed)
                .isTrue();
    }
}
