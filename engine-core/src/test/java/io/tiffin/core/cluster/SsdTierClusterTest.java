package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The SSD tier end to end: offload, reads from SSD, promotion, restart, a full disk. */
class SsdTierClusterTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private final PluginRegistry plugins = PluginRegistry.classPathOnly();
    private final List<AutoCloseable> open = new ArrayList<>();
    private MasterServer master;

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        plugins.close();
    }

    private void startMaster(Map<String, String> settings) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0");
        settings.forEach(b::set);
        master = MasterServer.start(Tiffin.injector(b.build()).getInstance(MasterServer.Options.class));
        open.add(master);
    }

    private String address() {
        return "127.0.0.1:" + master.address().getPort();
    }

    private NodeServer startNode(String id, long segment, String storageDir, Map<String, String> storageProps) {
        return startNode(id, segment, storageDir, storageProps, Duration.ofSeconds(20));
    }

    private NodeServer startNode(String id, long segment, String storageDir, Map<String, String> storageProps,
                                 Duration stopOffload) {
        Map<String, String> props = new HashMap<>(storageProps);
        props.put("path", dir.resolve(storageDir).toString());
        NodeServer n = NodeServer.start(NodeOptions.builder(address()).nodeId(id).segmentSize(segment)
                .pingInterval(Duration.ofMillis(200)).build().withStorage(
                new NodeOptions.Storage(plugins.storageBackend("bucket"), new PluginContext(props, id), stopOffload),
                Duration.ofMillis(20)));
        open.add(n);
        return n;
    }

    private TiffinClient client() {
        TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address()).build());
        open.add(c);
        return c;
    }

    /** How long a wait for the SSD tier (offload, promotion, a node's re-listing) may take, and its polling. */
    static final Duration SSD_WAIT = Duration.ofSeconds(20);
    static final Duration POLL = Duration.ofMillis(20);

    private static boolean has(ObjectLocation loc, ReplicaType type) {
        return loc.replicas().stream().anyMatch(r -> r.type() == type);
    }

    /** Waits until the master lists an SSD copy of {@code key}. */
    private static void awaitSsdCopy(TiffinClient c, String key) {
        await("SSD copy of " + key).atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> has(c.locate(key).orElseThrow(), ReplicaType.LOCAL_DISK));
    }

    @Test
    void evictionMovesObjectsToSsdAndTheyStayReadable() throws Exception {
        startMaster(Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.5",
                "master.eviction-ratio", "0.2"));
        startNode("ssd-node", 16 * MiB, "n1", Map.of());
        TiffinClient c = client();
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            byte[] v = ClusterEndToEndTest.bytes(i, (int) MiB / 2 + i);
            values.add(v);
            c.put("obj-" + i, v);
        }
        await("offloads").atMost(SSD_WAIT).pollInterval(POLL).until(() -> master.service().counters().offloads() > 10);
        for (int i = 0; i < 40; i++) {
            assertThat(c.get("obj-" + i)).as("obj-%d", i).isEqualTo(values.get(i));
        }
        long ssdOnly = 0;
        for (int i = 0; i < 40; i++) {
            ObjectLocation loc = c.locate("obj-" + i).orElseThrow();
            if (!has(loc, ReplicaType.MEMORY) && has(loc, ReplicaType.LOCAL_DISK)) {
                ssdOnly++;
                // a range of an object on the SSD tier alone: read whole into a staging buffer, the range kept
                byte[] range = new byte[1000];
                assertThat(c.getRangeInto("obj-" + i, 100, java.lang.foreign.MemorySegment.ofArray(range)))
                        .isEqualTo(1000);
                assertThat(range).isEqualTo(java.util.Arrays.copyOfRange(values.get(i), 100, 1100));
            }
        }
        assertThat(ssdOnly).isPositive();
        assertThat(master.service().usedBytes()).isLessThan(16 * MiB);
        assertThat(master.metrics().scrape()).contains("tiffin_master_offloads_total")
                .contains("tiffin_master_ssd_capacity_bytes");
        // Batch get mixes memory and SSD reads.
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            keys.add("obj-" + i);
        }
        var batch = c.batchGet(keys);
        for (int i = 0; i < 40; i++) {
            assertThat(batch.get(i).value()).isEqualTo(values.get(i));
        }
    }

    @Test
    void writeThroughCopiesEveryPutToSsd() throws Exception {
        startMaster(Map.of("offload.mode", "write-through"));
        NodeServer node = startNode("wt-node", 64 * MiB, "n1", Map.of());
        TiffinClient c = client();
        byte[] v = ClusterEndToEndTest.bytes(7, 300_000);
        c.put("k", v);
        await("the SSD copy").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> has(c.locate("k").orElseThrow(), ReplicaType.LOCAL_DISK));
        ObjectLocation loc = c.locate("k").orElseThrow();
        assertThat(loc.replicas().get(0).type()).as("memory replicas come first").isEqualTo(ReplicaType.MEMORY);
        assertThat(c.get("k")).isEqualTo(v);
        assertThat(node.storageBackend().size("k")).hasValue(300_000);
    }

    @Test
    void ssdOnlyObjectsReadTwiceArePromotedBackToMemory() throws Exception {
        startMaster(Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.3",
                "master.eviction-ratio", "0.5"));
        startNode("promo-node", 16 * MiB, "n1", Map.of());
        TiffinClient c = client();
        for (int i = 0; i < 20; i++) {
            c.put("p-" + i, ClusterEndToEndTest.bytes(i, 400_000));
        }
        await("offloads").atMost(SSD_WAIT).pollInterval(POLL).until(() -> master.service().counters().offloads() > 5);
        String ssdOnlyKey = null;
        for (int i = 0; i < 20 && ssdOnlyKey == null; i++) {
            ObjectLocation loc = c.locate("p-" + i).orElseThrow();
            if (!has(loc, ReplicaType.MEMORY)) {
                ssdOnlyKey = "p-" + i;
            }
        }
        assertThat(ssdOnlyKey).isNotNull();
        String key = ssdOnlyKey;
        int index = Integer.parseInt(key.substring(2));
        assertThat(c.get(key)).isEqualTo(ClusterEndToEndTest.bytes(index, 400_000));
        assertThat(c.get(key)).isEqualTo(ClusterEndToEndTest.bytes(index, 400_000));
        await("the promotion").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().promotions() > 0);
        assertThat(c.get(key)).isEqualTo(ClusterEndToEndTest.bytes(index, 400_000));
    }

    /**
     * An SSD copy whose bytes are not the object's (rewritten on the node: the tier's own record CRC passes) is
     * refused by readers, naming the copy, and by promotion: the object stays on SSD, no memory replica of it.
     */
    @Test
    void anSsdCopyThatFailsTheObjectsChecksumIsRefusedOnPromotionAndNamedToReaders() throws Exception {
        startMaster(Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.3",
                "master.eviction-ratio", "0.5"));
        NodeServer node = startNode("crc-node", 16 * MiB, "n1", Map.of());
        TiffinClient c = client();
        for (int i = 0; i < 20; i++) {
            c.put("p-" + i, ClusterEndToEndTest.bytes(i, 400_000));
        }
        await("offloads").atMost(SSD_WAIT).pollInterval(POLL).until(() -> master.service().counters().offloads() > 5);
        String key = null;
        for (int i = 0; i < 20 && key == null; i++) {
            ObjectLocation loc = c.locate("p-" + i).orElseThrow(); // one read of an SSD-only object: below promotion
            if (!has(loc, ReplicaType.MEMORY)) {
                key = "p-" + i;
            }
        }
        assertThat(key).isNotNull();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment other = arena.allocate(400_000);
            other.copyFrom(java.lang.foreign.MemorySegment.ofArray(ClusterEndToEndTest.bytes(999, 400_000)));
            node.storageBackend().writeBatch(Map.of(key, other));
        }
        String k = key;
        io.tiffin.api.TiffinException e = org.assertj.core.api.Assertions.catchThrowableOfType(
                io.tiffin.api.TiffinException.class, () -> c.get(k)); // the second read: promotion is queued
        assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.CHECKSUM_MISMATCH);
        assertThat(e.getMessage()).contains("key " + k, "SSD copy on node crc-node", "corrupt");
        await("the refused promotion").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().promotionFailures() > 0);
        assertThat(master.service().counters().promotions()).isZero();
        assertThat(has(c.locate(k).orElseThrow(), ReplicaType.MEMORY)).as("no memory replica of the corrupt copy")
                .isFalse();
    }

    /** A memory replica whose bytes fail the object's checksum is not offloaded: it must not become a clean SSD copy. */
    @Test
    void aCorruptMemoryReplicaIsNotOffloaded() throws Exception {
        // a short lease: the test's lookup of the victim must not keep it from being evicted (and offloaded) first
        startMaster(Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.3",
                "master.eviction-ratio", "0.5", "master.lease-ttl", "200ms"));
        NodeServer node = startNode("crc-offload-node", 16 * MiB, "n1", Map.of());
        TiffinClient c = client();
        c.put("victim", ClusterEndToEndTest.bytes(5, 400_000));
        io.tiffin.api.ReplicaDescriptor d = c.locate("victim").orElseThrow().replicas().getFirst();
        // its bytes changed in the node's memory (the node runs in this JVM), as a bit flip would
        io.tiffin.core.local.LocalSegmentDirectory.find(d.segment()).slice(d.offset() + 1000, 64).fill((byte) 1);
        int[] next = {0};
        // more puts keep the evictor busy until the victim (the oldest, once its lease has passed) goes
        await("the refused offload").atMost(SSD_WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
            c.put("p-" + next[0], ClusterEndToEndTest.bytes(next[0]++, 400_000));
            return master.service().counters().offloadFailures() > 0;
        });
        // the victim may have gone before five others did: more puts keep evictions (and offloads) coming
        await("the other offloads").atMost(SSD_WAIT).pollInterval(POLL).until(() -> {
            c.put("p-" + next[0], ClusterEndToEndTest.bytes(next[0]++, 400_000));
            return master.service().counters().offloads() > 5;
        });
        assertThat(node.storageBackend().size("victim")).as("no SSD copy of the corrupt replica").isEmpty();
    }

    @Test
    void aRestartedNodeServesItsSsdObjectsAgain() throws Exception {
        startMaster(Map.of("offload.mode", "write-through", "master.node-ttl", "1s",
                "master.node-check-interval", "100ms"));
        NodeServer node = startNode("restart-node", 32 * MiB, "persist", Map.of());
        TiffinClient c = client();
        List<String> keys = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            keys.add("r-" + i);
            values.add(ClusterEndToEndTest.bytes(100 + i, 50_000 + i));
        }
        putOffloadAndCrash(c, node, keys, values);
        startNode("restart-node", 32 * MiB, "persist", Map.of());
        for (int i = 0; i < 10; i++) {
            assertThat(c.get("r-" + i)).as("r-%d after restart", i).isEqualTo(values.get(i));
        }
    }

    /**
     * A graceful stop first copies to the node's SSD tier what only its memory holds ({@code node.stop-offload-timeout};
     * offload is off, so nothing was on SSD before): once the node starts again on the same storage path every object
     * reads back. With the timeout at 0 the memory's objects are lost with it, as before.
     */
    @ParameterizedTest
    @ValueSource(ints = {20, 0})
    void aGracefulStopKeepsWhatOnlyTheNodesMemoryHeldOnItsSsd(int stopOffloadSeconds) throws Exception {
        startMaster(Map.of());
        Duration stopOffload = Duration.ofSeconds(stopOffloadSeconds);
        NodeServer node = startNode("stopping", 32 * MiB, "keep", Map.of(), stopOffload);
        TiffinClient c = client();
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            values.add(ClusterEndToEndTest.bytes(300 + i, 200_000 + i));
            c.put("keep-" + i, values.get(i));
        }
        assertThat(has(c.locate("keep-0").orElseThrow(), ReplicaType.LOCAL_DISK)).as("offload is off").isFalse();
        node.close();
        assertThat(master.service().keyCount()).as("the node and its memory are gone").isZero();

        startNode("stopping", 32 * MiB, "keep", Map.of(), stopOffload);
        if (stopOffloadSeconds == 0) {
            await().atMost(SSD_WAIT).until(() -> master.service().liveNodes().size() == 1);
            assertThatThrownBy(() -> c.get("keep-0")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            return;
        }
        await("the node's SSD copies listed again").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().keyCount() == 40);
        for (int i = 0; i < 40; i++) {
            assertThat(c.get("keep-" + i)).as("keep-%d", i).isEqualTo(values.get(i));
        }
    }

    /** A stopping node whose master is gone waits about 2 s for its answer, not the whole stop-offload timeout. */
    @Test
    void aStoppingNodeWhoseMasterIsGoneDoesNotWaitOutTheStopOffloadTimeout() {
        startMaster(Map.of());
        NodeServer node = startNode("orphan", 16 * MiB, "orphan", Map.of(), Duration.ofSeconds(60));
        client().put("orphan-0", new byte[10_000]);
        master.close();
        long start = System.nanoTime();
        node.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }

    /**
     * A restart of the whole cluster (node and master, the new master knowing nothing) brings SSD-only objects back
     * as they were: with their versions, and with their deadlines as the last EXPIRE or PERSIST left them, so an
     * object whose time has come does not come back without one. The deadlines and versions come from the stamps
     * the node's backend keeps with the copies.
     */
    @Test
    void aWholeClusterRestartBringsSsdCopiesBackWithTheirVersionsAndDeadlines() throws Exception {
        Map<String, String> settings = Map.of("offload.mode", "write-through", "master.node-ttl", "1s",
                "master.node-check-interval", "100ms");
        startMaster(settings);
        NodeServer node = startNode("cold-node", 32 * MiB, "cold", Map.of());
        TiffinClient c = client();
        Map<String, byte[]> values = new java.util.LinkedHashMap<>();
        for (String key : List.of("soon", "later", "moved", "kept", "plain")) {
            values.put(key, ClusterEndToEndTest.bytes(key.hashCode(), 30_000));
        }
        c.put("soon", values.get("soon"), PutOptions.DEFAULT.withTtlMillis(4_000));
        c.put("later", values.get("later"), PutOptions.DEFAULT.withTtlMillis(120_000));
        c.put("moved", values.get("moved"), PutOptions.DEFAULT.withTtlMillis(120_000));
        c.put("kept", values.get("kept"), PutOptions.DEFAULT.withTtlMillis(4_000));
        c.put("plain", values.get("plain"));
        for (String key : values.keySet()) {
            awaitSsdCopy(c, key);
        }
        Map<String, Long> versions = new HashMap<>();
        values.keySet().forEach(key -> versions.put(key, c.locate(key).orElseThrow().version()));
        // moved after the copies were written: the node writes the new deadlines into their stamps (without
        // failover, after its next task poll)
        assertThat(c.expire("moved", 4_000)).isTrue();
        assertThat(c.persist("kept")).isTrue();
        long movedDeadline = System.currentTimeMillis() + 4_000;
        await("the new deadlines in the stamps").atMost(SSD_WAIT).pollInterval(POLL).until(() -> {
            Map<String, io.tiffin.api.spi.storage.ObjectStamp> stamps = new HashMap<>();
            node.storageBackend().scanStamped((key, size, stamp) -> stamps.put(key, stamp));
            return stamps.get("kept").expireAtMs() == 0
                    && Math.abs(stamps.get("moved").expireAtMs() - movedDeadline) < 2_000;
        });

        node.crash();
        open.remove(node);
        master.close();
        open.remove(master);
        startMaster(settings);
        NodeServer back = startNode("cold-node", 32 * MiB, "cold", Map.of());
        TiffinClient after = client();

        await("the SSD copies are listed again").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> after.locate("later").isPresent() && after.locate("plain").isPresent());
        assertThat(after.ttlMillis("later")).as("later's time to live").isBetween(100_000L, 120_000L);
        assertThat(after.ttlMillis("kept")).as("kept, persisted after its offload").isEqualTo(-1);
        assertThat(after.ttlMillis("plain")).isEqualTo(-1);
        for (String key : List.of("later", "kept", "plain")) {
            assertThat(after.locate(key).orElseThrow().version()).as("%s's version", key).isEqualTo(versions.get(key));
            assertThat(after.get(key)).as(key).isEqualTo(values.get(key));
        }
        // a copy of the node's previous run takes a new deadline into its stamp too
        assertThat(after.expire("later", 90_000)).isTrue();
        long laterDeadline = System.currentTimeMillis() + 90_000;
        await("later's new deadline in its stamp").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> Math.abs(back.storageBackend().stamp("later").expireAtMs() - laterDeadline) < 2_000);
        assertThat(back.storageBackend().stamp("later").version()).isEqualTo(versions.get("later"));
                // within 15 s: moved by its EXPIRE, not by its put's 120 s
        await("soon and moved expire").atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(100))
                .until(() -> after.ttlMillis("soon") == -2 && after.ttlMillis("moved") == -2);
        assertThat(after.locate("soon")).isEmpty();
        assertThat(after.locate("moved")).isEmpty();
    }

    /**
     * One corrupt SSD copy in a batch read from SSD fails that key alone: the keys after it still get
     * their own bytes (the node used to leave the corrupt key's room in its answer, so the client read
     * the next key's bytes from the wrong place — native memory nothing had written — and said OK).
     */
    @Test
    void aCorruptSsdCopyInABatchFailsItsKeyAloneAndTheOthersGetTheirOwnBytes() throws Exception {
        startMaster(Map.of("offload.mode", "write-through", "master.node-ttl", "1s",
                "master.node-check-interval", "100ms"));
        NodeServer node = startNode("rot-node", 32 * MiB, "rot", Map.of());
        TiffinClient c = client();
        List<String> keys = List.of("rot-a", "rot-b", "rot-c");
        List<byte[]> values = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            values.add(ClusterEndToEndTest.bytes(200 + i, 50_000));
        }
        putOffloadAndCrash(c, node, keys, values);
        assertThat(flipAByteOf(dir.resolve("rot"), values.get(1))).as("rot-b found in a bucket file").isTrue();
        startNode("rot-node", 32 * MiB, "rot", Map.of());
        await("the SSD copies are listed again").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> keys.stream().allMatch(k -> c.locate(k).isPresent()));
        for (String key : keys) {
            assertThat(c.locate(key).orElseThrow().replicas()).as(key).allMatch(r -> r.type() == ReplicaType.LOCAL_DISK);
        }

        List<io.tiffin.api.KeyResult<byte[]>> got = c.batchGet(keys);

        assertThat(got.get(0).isOk()).as("rot-a: %s", got.get(0).code()).isTrue();
        assertThat(got.get(0).value()).isEqualTo(values.get(0));
        assertThat(got.get(1).isOk()).as("the corrupt rot-b").isFalse();
        assertThat(got.get(2).isOk()).as("rot-c: %s", got.get(2).code()).isTrue();
        assertThat(got.get(2).value()).as("rot-c's own bytes").isEqualTo(values.get(2));
    }

    /**
     * Puts {@code values} under {@code keys} (write-through), waits for their SSD copies, crashes the
     * node and waits until the master has forgotten it (and with it the copies' listing).
     */
    private void putOffloadAndCrash(TiffinClient c, NodeServer node, List<String> keys, List<byte[]> values) {
        for (int i = 0; i < keys.size(); i++) {
            c.put(keys.get(i), values.get(i));
        }
        for (String key : keys) {
            awaitSsdCopy(c, key);
        }
        node.crash();
        open.remove(node);
        await("the master forgets the dead node").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> c.locate(keys.getFirst()).isEmpty());
    }

    @Test
    void aStorageBackendLearnsTheNodesGeneratedId() {
        startMaster(Map.of());
        java.util.concurrent.atomic.AtomicReference<String> seen = new java.util.concurrent.atomic.AtomicReference<>();
        io.tiffin.api.spi.storage.StorageBackendFactory bucket = plugins.storageBackend("bucket");
        io.tiffin.api.spi.storage.StorageBackendFactory capturing = new io.tiffin.api.spi.storage.StorageBackendFactory() {
            @Override
            public String name() {
                return "capturing";
            }

            @Override
            public io.tiffin.api.spi.storage.StorageBackend create(PluginContext context) {
                seen.set(context.nodeId());
                return bucket.create(context);
            }
        };
        NodeServer n = NodeServer.start(NodeOptions.builder(address()).nodeId("").segmentSize(16 * MiB)
                .pingInterval(Duration.ofMillis(200)).build().withStorage(new NodeOptions.Storage(capturing,
                new PluginContext(Map.of("path", dir.resolve("generated").toString()), "")), Duration.ofMillis(20)));
        open.add(n);
        assertThat(seen.get()).isEqualTo(n.nodeId()).startsWith("node-");
    }

    /** Flips one byte inside {@code value}'s bytes in whichever bucket file under {@code storage} holds them. */
    private static boolean flipAByteOf(Path storage, byte[] value) throws java.io.IOException {
        byte[] head = java.util.Arrays.copyOf(value, 64);
        try (var files = java.nio.file.Files.walk(storage)) {
            for (Path f : files.filter(java.nio.file.Files::isRegularFile).toList()) {
                byte[] content = java.nio.file.Files.readAllBytes(f);
                for (int at = 0; at + value.length <= content.length; at++) {
                    if (java.util.Arrays.equals(content, at, at + head.length, head, 0, head.length)) {
                        content[at + 100] ^= (byte) 0xFF;
                        java.nio.file.Files.write(f, content);
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * A node whose node.id is left empty keeps the id it generated at its first start on a storage path ({@code
     * node.id} in that directory): its SSD copies stay its own across a restart while the master runs. With a new id
     * at every start, the master deleted the copies of objects it still knew (strangers on that disk) and adopted the
     * copy of an object removed while the node was down (the deletion waited under the old id).
     */
    @Test
    void aNodeWithAGeneratedIdKeepsItAcrossRestartsAndItsSsdCopiesStayItsOwn() throws Exception {
        startMaster(Map.of("offload.mode", "write-through", "master.node-ttl", "60s"));
        NodeServer node = startNode("", 32 * MiB, "anon", Map.of());
        String id = node.nodeId();
        assertThat(id).startsWith("node-");
        assertThat(java.nio.file.Files.readString(dir.resolve("anon").resolve("node.id")).strip()).isEqualTo(id);
        TiffinClient c = client();
        byte[] kept = ClusterEndToEndTest.bytes(11, 40_000);
        c.put("kept", kept);
        c.put("gone", ClusterEndToEndTest.bytes(12, 40_000));
        for (String key : List.of("kept", "gone")) {
            awaitSsdCopy(c, key);
        }
        node.crash();
        open.remove(node);
        c.remove("gone", true); // while the node is down: its copy's deletion waits for the node's next poll

        NodeServer back = startNode("", 32 * MiB, "anon", Map.of());

        assertThat(back.nodeId()).isEqualTo(id);
        await("the removed object's copy is deleted").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> back.storageBackend().size("gone").isEmpty());
        assertThat(c.locate("gone")).isEmpty();
        await("kept is listed from the node's SSD").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> c.locate("kept").map(l -> has(l, ReplicaType.LOCAL_DISK)).orElse(false));
        assertThat(c.get("kept")).isEqualTo(kept);
        assertThat(back.storageBackend().size("kept")).isPresent();
    }

    /** A node started with a node.id other than the one its storage directory belongs to stops with a clear error. */
    @Test
    void aStoragePathOfAnotherNodeIsRefused() {
        startMaster(Map.of());
        NodeServer first = startNode("owner", 16 * MiB, "owned", Map.of());
        first.close();
        open.remove(first);

        assertThatThrownBy(() -> startNode("intruder", 16 * MiB, "owned", Map.of()))
                .isInstanceOf(io.tiffin.api.TiffinException.class)
                .hasMessageContaining("node.id = intruder").hasMessageContaining("belongs to node owner")
                .hasMessageContaining("node.storage-path");
        assertThat(startNode("", 16 * MiB, "owned", Map.of()).nodeId()).isEqualTo("owner");
    }

    @Test
    void removedOrReplacedObjectsDoNotComeBackFromSsdAfterARestart() throws Exception {
        startMaster(Map.of("offload.mode", "write-through"));
        NodeServer node = startNode("stale-node", 32 * MiB, "stale", Map.of());
        TiffinClient c = client();
        c.put("gone", ClusterEndToEndTest.bytes(1, 10_000));
        c.put("replaced", ClusterEndToEndTest.bytes(2, 10_000));
        await("SSD copies").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> has(c.locate("gone").orElseThrow(), ReplicaType.LOCAL_DISK)
                        && has(c.locate("replaced").orElseThrow(), ReplicaType.LOCAL_DISK));
        c.remove("gone", true);
        await("the SSD copy of a removed object is deleted").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> node.storageBackend().size("gone").isEmpty());
        // Replace "replaced" while its node is down, with bytes of the same size: the old SSD copy must not
        // be served for the new object when the node comes back.
        node.crash();
        open.remove(node);
        master.service().forgetNode("stale-node");
        startNode("other", 32 * MiB, "other", Map.of());
        c.put("replaced", ClusterEndToEndTest.bytes(3, 10_000), PutOptions.DEFAULT.withUpsert(true));
        NodeServer back = startNode("stale-node", 32 * MiB, "stale", Map.of());
        assertThat(c.locate("gone")).isEmpty();
        await("the stale copy is deleted").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> back.storageBackend().size("replaced").isEmpty());
        assertThat(c.get("replaced")).isEqualTo(ClusterEndToEndTest.bytes(3, 10_000));
        assertThat(master.service().counters().staleDiskCopies()).isPositive();
    }

    /**
     * While a node with an SSD tier is away (here crashed and expired; a graceful stop is the same), its SSD-only
     * objects read as missing; a removal of one of them, and a new object put under another's key and removed in turn,
     * reach its disk when it returns, so neither comes back; the node's other objects do. Before, the master kept
     * nothing of them: the node's scan brought both keys back.
     */
    @Test
    void whatIsRemovedWhileANodeIsAwayDoesNotComeBackWithIt() throws Exception {
        startMaster(Map.of("offload.mode", "write-through", "master.node-ttl", "1s",
                "master.node-check-interval", "100ms"));
        NodeServer node = startNode("away-node", 32 * MiB, "away", Map.of());
        TiffinClient c = client();
        List<String> keys = List.of("kept", "removed", "superseded");
        List<byte[]> values = List.of(ClusterEndToEndTest.bytes(31, 20_000), ClusterEndToEndTest.bytes(32, 20_000),
                ClusterEndToEndTest.bytes(33, 20_000));
        putOffloadAndCrash(c, node, keys, values);
        assertThat(master.service().ssdTier().awayCopies()).isEqualTo(3);
        assertThatThrownBy(() -> c.get("kept")).as("missing while its node is away")
                .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND));

        assertThatThrownBy(() -> c.remove("removed", true)).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND));
        startNode("other", 32 * MiB, "other", Map.of());
        c.put("superseded", ClusterEndToEndTest.bytes(34, 20_000)); // a new object under the key, on another node
        await("its write-through copy").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> has(c.locate("superseded").orElseThrow(), ReplicaType.LOCAL_DISK));
        c.remove("superseded", true);
        assertThat(master.service().ssdTier().awayCopies()).isEqualTo(1);

        NodeServer back = startNode("away-node", 32 * MiB, "away", Map.of());

        await("the copies of removed objects are deleted").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> back.storageBackend().size("removed").isEmpty()
                        && back.storageBackend().size("superseded").isEmpty());
        assertThat(c.locate("removed")).isEmpty();
        assertThat(c.locate("superseded")).isEmpty();
        await("kept comes back from the node's SSD").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> c.locate("kept").map(l -> has(l, ReplicaType.LOCAL_DISK)).orElse(false));
        assertThat(c.get("kept")).isEqualTo(values.getFirst());
        await("nothing kept once its scan is in").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().ssdTier().awayCopies() == 0);
    }

    /**
     * A task poll whose list of failed deletes, or of failed deadlines, and their versions differ in length is
     * refused, naming both.
     */
    @Test
    void aTaskPollWithUnevenFailedChangesIsRefused() {
        startMaster(Map.of("offload.mode", "write-through"));
        startNode("poller", 16 * MiB, "poller", Map.of());
        try (io.tiffin.core.transport.TransportClientPool pool = new io.tiffin.core.transport.TransportClientPool(
                "poll-test", TransportSettings.defaults(), "poll-test")) {
            assertThatThrownBy(() -> pool.get(address()).callSync(io.tiffin.core.transport.Opcode.POLL_TASKS,
                    io.tiffin.core.transport.proto.TaskPollRequest.newBuilder().setNodeId("poller").setMaxOffloads(1)
                            .addUndeleted("a").addUndeleted("b").addUndeletedVersions(3).build(),
                    io.tiffin.core.transport.proto.TaskPollReply.parser()))
                    .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.INVALID_PARAMS);
                        assertThat(e.getMessage()).contains("2 undeleted SSD copies and 1 versions");
                    });
            assertThatThrownBy(() -> pool.get(address()).callSync(io.tiffin.core.transport.Opcode.POLL_TASKS,
                    io.tiffin.core.transport.proto.TaskPollRequest.newBuilder().setNodeId("poller").setMaxOffloads(1)
                            .addUnstamped("a").build(),
                    io.tiffin.core.transport.proto.TaskPollReply.parser()))
                    .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.INVALID_PARAMS);
                        assertThat(e.getMessage()).contains("1 unstamped SSD copies and 0 versions");
                    });
        }
    }

    /** A disk around the real bucket backend that refuses what a test asks it to (see {@link RefusingDeletes}). */
    private RefusingDeletes refusingDisk() {
        return new RefusingDeletes(plugins.storageBackend("bucket"));
    }

    /** Starts node {@code refusing} on {@code disk}, its storage in the same directory every time (a restart). */
    private NodeServer startRefusingNode(RefusingDeletes disk) {
        NodeServer n = NodeServer.start(NodeOptions.builder(address()).nodeId("refusing").segmentSize(32 * MiB)
                .pingInterval(Duration.ofMillis(200)).build().withStorage(new NodeOptions.Storage(disk,
                new PluginContext(Map.of("path", dir.resolve("refusing").toString()), "refusing")),
                Duration.ofMillis(20)));
        open.add(n);
        return n;
    }

    /**
     * While a node copies an object to its SSD (its disk stalls here), the master refuses to remove or replace the
     * object ({@code OBJECT_HAS_REPLICATION_TASK}: the node reads its memory); the client asks again for about 0.6 s,
     * so a copy that ends meanwhile is never seen by the caller, and a longer one reaches it as that refusal.
     */
    @Test
    void aRemoveOrReplacementWhileANodeCopiesTheObjectToSsdWaitsForTheCopy() throws Exception {
        startMaster(Map.of("offload.mode", "write-through"));
        RefusingDeletes disk = refusingDisk();
        startRefusingNode(disk);
        TiffinClient c = client();
        PutOptions set = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
        try (var releaser = java.util.concurrent.Executors.newSingleThreadScheduledExecutor()) {
            for (String op : List.of("remove", "batch-remove", "replace")) {
                disk.stallWrites(true);
                c.put(op, ClusterEndToEndTest.bytes(31, 30_000)); // write-through: the node's copy stalls
                await("the copy of " + op).atMost(SSD_WAIT).pollInterval(POLL).until(() -> disk.stalledWrites() == 1);
                releaser.schedule(() -> disk.stallWrites(false), 150, java.util.concurrent.TimeUnit.MILLISECONDS);
                if (op.equals("remove")) {
                    c.remove(op, true);
                    assertThat(c.locate(op)).isEmpty();
                } else if (op.equals("batch-remove")) {
                    assertThat(c.batchRemove(List.of(op, "never-put"), true)).extracting(r -> r.code())
                            .containsExactly(io.tiffin.api.ErrorCode.OK, io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND);
                    assertThat(c.locate(op)).isEmpty();
                } else {
                    byte[] next = ClusterEndToEndTest.bytes(32, 30_000);
                    c.put(op, next, set);
                    assertThat(c.get(op)).isEqualTo(next);
                }
            }
        }
        disk.stallWrites(true);
        c.put("long", ClusterEndToEndTest.bytes(33, 30_000));
        await("the long copy").atMost(SSD_WAIT).pollInterval(POLL).until(() -> disk.stalledWrites() == 1);
        assertThatThrownBy(() -> c.remove("long", true)).isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_HAS_REPLICATION_TASK));
        assertThat(c.batchRemove(List.of("long", "never-put"), true)).extracting(r -> r.code())
                .containsExactly(io.tiffin.api.ErrorCode.OBJECT_HAS_REPLICATION_TASK,
                        io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND);
        disk.stallWrites(false);
        awaitSsdCopy(c, "long");
        c.remove("long", true);
        assertThat(c.locate("long")).isEmpty();
    }

    /**
     * A deletion of a removed object's SSD copy that the node's disk refuses is not counted as done: the node names it
     * in its next task poll and the master asks for it again, poll after poll, until the disk takes it. Before, the
     * node logged the failure and the master dropped the request at the poll that handed it out.
     */
    @Test
    void aDeletionTheNodesDiskRefusesIsAskedAgainUntilItIsDone() {
        startMaster(Map.of("offload.mode", "write-through"));
        RefusingDeletes disk = refusingDisk();
        NodeServer node = startRefusingNode(disk);
        TiffinClient c = client();
        c.put("gone", ClusterEndToEndTest.bytes(21, 30_000));
        awaitSsdCopy(c, "gone");
        disk.refuse(true);

        c.remove("gone", true);

        assertThat(c.locate("gone")).isEmpty();
        await("the node told the master twice").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().failedDiskDeletes() >= 2);
        assertThat(node.storageBackend().size("gone")).as("still on the refusing disk").isPresent();
        disk.refuse(false);
        await("deleted once the disk takes it").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> node.storageBackend().size("gone").isEmpty());
        assertThat(c.locate("gone")).isEmpty();
    }

    /**
     * A new deadline that the node's disk refuses to write into an SSD copy's stamp (failover off: the PERSIST or
     * EXPIRE has answered already) is sent again, poll after poll, until the disk takes it, and the stamp ends with
     * the last deadline set, not an earlier one. Before, the node logged the failure and the master dropped the
     * deadline at the poll that handed it out, so a restart of the node brought the object back with its old one.
     */
    @Test
    void aNewDeadlineTheNodesDiskRefusesIsSentAgainUntilItIsInTheStamp() {
        startMaster(Map.of("offload.mode", "write-through"));
        RefusingDeletes disk = refusingDisk();
        NodeServer node = startRefusingNode(disk);
        TiffinClient c = client();
        c.put("kept", ClusterEndToEndTest.bytes(24, 30_000), PutOptions.DEFAULT.withTtlMillis(120_000));
        awaitSsdCopy(c, "kept");
        long version = c.locate("kept").orElseThrow().version();
        disk.refuseStamps(true);

        assertThat(c.persist("kept")).isTrue();
        await("the node told the master twice").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().failedDiskStamps() >= 2);
        assertThat(node.storageBackend().stamp("kept").expireAtMs()).as("the put's deadline, on the refusing disk")
                .isPositive();
        assertThat(c.expire("kept", 90_000)).isTrue(); // moved again while the disk refuses: the last one must win
        long deadline = System.currentTimeMillis() + 90_000;
        disk.refuseStamps(false);

        await("the last deadline in the stamp").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> Math.abs(node.storageBackend().stamp("kept").expireAtMs() - deadline) < 2_000);
        assertThat(node.storageBackend().stamp("kept").version()).isEqualTo(version);
        await("no earlier deadline after it").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                .until(() -> Math.abs(node.storageBackend().stamp("kept").expireAtMs() - deadline) < 2_000);
        assertThat(c.ttlMillis("kept")).as("the master's time to live, from the same deadline")
                .isCloseTo(deadline - System.currentTimeMillis(), within(2_000L));
    }

    /**
     * A node that crashes while its disk refuses a removed object's deletion does not bring the object back when it
     * restarts with a working disk: the master still lists the deletion, so it deletes the copy its scan reports
     * instead of adopting it. The node's other copies come back.
     */
    @Test
    void aCopyWhoseDeletionTheDiskRefusedDoesNotComeBackAfterTheNodeRestarts() {
        startMaster(Map.of("offload.mode", "write-through", "master.node-ttl", "60s"));
        RefusingDeletes disk = refusingDisk();
        NodeServer node = startRefusingNode(disk);
        TiffinClient c = client();
        byte[] kept = ClusterEndToEndTest.bytes(22, 30_000);
        c.put("kept", kept);
        c.put("gone", ClusterEndToEndTest.bytes(23, 30_000));
        for (String key : List.of("kept", "gone")) {
            awaitSsdCopy(c, key);
        }
        disk.refuse(true);
        c.remove("gone", true);
        await("the node told the master").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().failedDiskDeletes() >= 1);
        node.crash();
        open.remove(node);
        disk.refuse(false);

        NodeServer back = startRefusingNode(disk);

        await("the removed object's copy is deleted").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> back.storageBackend().size("gone").isEmpty());
        assertThat(c.locate("gone")).as("not adopted from the restarted node's scan").isEmpty();
        await("kept is listed from the node's SSD").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> c.locate("kept").map(l -> has(l, ReplicaType.LOCAL_DISK)).orElse(false));
        assertThat(c.get("kept")).isEqualTo(kept);
    }

    /**
     * Rewrites racing offload and promotion ({@link ConcurrentRewrites}): the keys do not fit in memory, so objects
     * move to SSD and back (read twice) all along while one client rewrites them and two others read them; no read
     * returns an older generation than the last returned write, bytes of two generations, or nothing where a value
     * stands.
     */
    @Test
    void rewritesRacingOffloadAndPromotionNeverReadStaleTornOrMissing() throws Exception {
        startMaster(Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.3",
                "master.eviction-ratio", "0.5", "master.lease-ttl", "200ms"));
        startNode("race-node", 16 * MiB, "n1", Map.of());
        TiffinClient writer = client();
        TiffinClient plain = client();
        TiffinClient reusing = TiffinClient.connect(TestCluster.remoteOptions(address())
                .locationCache(new io.tiffin.core.client.LocationCache.Settings(Duration.ofSeconds(30), 1000)).build());
        open.add(reusing);
        ConcurrentRewrites race = new ConcurrentRewrites("race-", 30, 300_007); // 9 MB: past 0.3 of 16 MiB

        long rewrites = race.run(writer, List.of(plain, plain, reusing), Duration.ofSeconds(5));

        race.assertNoWrongAnswer(rewrites);
        assertThat(master.service().counters().offloads()).as("objects offloaded during the race").isPositive();
        assertThat(master.service().counters().promotions()).as("objects promoted during the race").isPositive();
    }

    @Test
    void aFullDiskFailsOffloadCleanlyAndKeepsTheMemoryCopy() throws Exception {
        startMaster(Map.of("offload.mode", "write-through"));
        startNode("full-node", 32 * MiB, "n1", Map.of("capacity", "256KiB"));
        TiffinClient c = client();
        byte[] big = ClusterEndToEndTest.bytes(5, (int) MiB);
        c.put("too-big-for-ssd", big);
        await("the failed offload").atMost(SSD_WAIT).pollInterval(POLL)
                .until(() -> master.service().counters().offloadFailures() > 0);
        ObjectLocation loc = c.locate("too-big-for-ssd").orElseThrow();
        assertThat(has(loc, ReplicaType.MEMORY)).isTrue();
        assertThat(has(loc, ReplicaType.LOCAL_DISK)).isFalse();
        assertThat(c.get("too-big-for-ssd")).isEqualTo(big);
        c.remove("too-big-for-ssd", true);
    }
}
