package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.FailoverSettings;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.CommitRecord;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.DiskFloor;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.Replica;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single master with {@code master.state-dir} (servers on loopback in this JVM): stopped and started again, it
 * gets every object back from its nodes' commit records — written over the socket and through a shared-memory
 * mapping — with its version and expiry deadline (its put's or a later EXPIRE's), and the objects only its nodes' SSD
 * tiers hold with their versions; what was removed stays
 * removed. A node that lists a master that is down before the
 * one that runs finds the running one; nodes serve reads of the locations clients hold while no master runs. And a
 * put of a key another writer is writing is not reported done.
 */
class MasterRecoveryTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private static int freePort() throws IOException {
        return TestCluster.freeFixedPort();
    }

    private MasterServer startMaster(int port) {
        return startMaster(port, Map.of());
    }

    private MasterServer startMaster(int port, Map<String, String> settings) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.port", Integer.toString(port))
                .set("master.admin-port", "0").set("master.state-dir", dir.resolve("state").toString());
        settings.forEach(b::set);
        var injector = Tiffin.injector(b.build());
        return MasterServer.start(injector.getInstance(MasterServer.Options.class),
                injector.getInstance(FailoverSettings.class), Ticker.SYSTEM);
    }

    private static byte[] value(String key) {
        return TestCluster.randomBytes(1000 + Math.floorMod(key.hashCode(), 200_000), key.hashCode());
    }

    @Test
    void aRestartedMasterGetsEveryObjectBackFromItsNodesCommitRecords() throws IOException, InterruptedException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        String nobody = "127.0.0.1:" + freePort();
        java.nio.file.Files.createDirectories(dir.resolve("shm"));
        MasterServer master = startMaster(port);
        List<NodeServer> nodes = new ArrayList<>();
        try {
            // the first listed master is down: the node asks every listed master and follows the one that leads
            nodes.add(NodeServer.start(NodeOptions.builder(nobody + "," + address).nodeId("shm")
                    .segmentSize(32 * MiB).pingInterval(Duration.ofMillis(200)).sharedMemoryDir(dir.resolve("shm"))
                    .build()));
            nodes.add(NodeServer.start(NodeOptions.builder(address).nodeId("tcp").segmentSize(32 * MiB)
                    .pingInterval(Duration.ofMillis(200)).build()));
            MasterServer first = master;
            await().atMost(Duration.ofSeconds(30)).until(() -> first.service().liveNodes().size() == 2);
            Map<String, Long> versions = new HashMap<>();
            PutOptions two = PutOptions.DEFAULT.withReplicas(2);
            try (TiffinClient shm = TiffinClient.connect(TestCluster.remoteOptions(address).sharedMemory(true)
                    .sliceSize(64 * 1024).build());
                 TiffinClient tcp = TiffinClient.connect(TestCluster.remoteOptions(address)
                         .sliceSize(64 * 1024).build())) {
                for (int i = 0; i < 10; i++) {
                    shm.put("shm/" + i, value("shm/" + i), i % 3 == 0 ? two.withHardPin(true) : two);
                }
                shm.put("shm/empty", new byte[0], two); // 0-byte objects: their records alone
                tcp.put("tcp/empty", new byte[0], two);
                List<String> batch = new ArrayList<>();
                List<java.lang.foreign.MemorySegment> values = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    batch.add("tcp/" + i);
                    values.add(java.lang.foreign.MemorySegment.ofArray(value("tcp/" + i)));
                }
                assertThat(tcp.batchPutFrom(batch, values, two)).allMatch(r -> r.isOk());
                for (String k : List.of("shm/0", "shm/5", "tcp/0", "tcp/9")) {
                    versions.put(k, tcp.locate(k).orElseThrow().version());
                }
                tcp.remove("tcp/1");
                assertThat(tcp.get("tcp/2")).isEqualTo(value("tcp/2")); // read: leased for master.lease-ttl
                tcp.remove("tcp/2", true); // forced: the key goes now, the buffers stay until the lease ends
                assertThat(tcp.get("tcp/3")).isEqualTo(value("tcp/3")); // read: leased
                // a forced replacement (the gateway's SET): the old object's records go with it, the new one's stay
                tcp.put("tcp/3", value("tcp/3 again"), two.withUpsert(true).withReplaceLeased(true));
                tcp.put("tcp/ttl", value("tcp/ttl"), two.withUpsert(true).withTtlMillis(600_000));
                shm.put("shm/ttl", value("shm/ttl"), two.withTtlMillis(600_000)); // its records written in this JVM
                assertThat(tcp.ttlMillis("tcp/ttl")).isPositive();
                tcp.put("tcp/short", value("tcp/short"), two.withTtlMillis(300));
                shm.put("shm/short", value("shm/short"), two.withTtlMillis(300));
                assertThat(tcp.expire("tcp/0", 600_000)).isTrue(); // answered once the nodes' records have it
                tcp.put("tcp/persisted", value("tcp/persisted"), two.withTtlMillis(1_000));
                assertThat(tcp.persist("tcp/persisted")).isTrue(); // and its records lose their deadline
            }
            Thread.sleep(400); // the short-lived objects' deadlines pass while no master knows them
            master.close(); // its heap is gone; the state directory and the nodes' records stay
            master = startMaster(port);
            MasterServer second = master;
            assertThat(second.term()).isEqualTo(2);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                // ended by the nodes' attach (within a few heartbeats), not by its bound (the node TTL, 10 s): nodes
                // without an SSD tier announce no scan
                await().atMost(Duration.ofSeconds(5)).until(() -> !second.service().recovering());
                // the expiry sweep reclaims the two whose deadline passed while no master ran, before anyone asks
                // for them: tcp/ttl, shm/ttl and tcp/0 keep deadlines
                await().atMost(Duration.ofSeconds(10)).until(() -> second.service().expiringKeyCount() == 3);
                for (int i = 0; i < 10; i++) {
                    assertThat(c.get("shm/" + i)).as("shm/%d", i).isEqualTo(value("shm/" + i));
                    if (i != 1 && i != 2 && i != 3) {
                        assertThat(c.get("tcp/" + i)).as("tcp/%d", i).isEqualTo(value("tcp/" + i));
                    }
                }
                versions.forEach((k, v) -> assertThat(c.locate(k).orElseThrow().version()).as(k).isEqualTo(v));
                assertThat(c.get("tcp/3")).isEqualTo(value("tcp/3 again"));
                assertThat(c.get("tcp/ttl")).isEqualTo(value("tcp/ttl"));
                for (String k : List.of("tcp/ttl", "shm/ttl")) {
                    assertThat(c.get(k)).as(k).isEqualTo(value(k));
                    assertThat(c.ttlMillis(k)).as("%s: the put's deadline, from the records", k)
                            .isPositive().isLessThanOrEqualTo(600_000);
                }
                for (String expired : List.of("tcp/short", "shm/short")) {
                    assertThatThrownBy(() -> c.get(expired)).as("%s: its deadline passed meanwhile", expired)
                            .isInstanceOfSatisfying(TiffinException.class,
                                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
                }
                assertThat(c.ttlMillis("tcp/0")).as("a deadline set after the put, from the records")
                        .isPositive().isLessThanOrEqualTo(600_000);
                assertThat(c.ttlMillis("tcp/persisted")).as("a deadline dropped after the put").isEqualTo(-1);
                assertThat(c.get("tcp/persisted")).isEqualTo(value("tcp/persisted"));
                for (String empty : List.of("shm/empty", "tcp/empty")) {
                    assertThat(c.get(empty)).as(empty).isEmpty();
                    assertThat(c.locate(empty).orElseThrow().replicas()).as(empty).hasSize(2);
                }
                assertThat(c.locate("shm/3").orElseThrow().replicas()).hasSize(2);
                for (String removed : List.of("tcp/1", "tcp/2")) {
                    assertThatThrownBy(() -> c.get(removed)).as(removed).isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
                }
                c.put("after", value("after"), two);
                assertThat(c.get("after")).isEqualTo(value("after"));
                assertThat(c.locate("after").orElseThrow().version()).isGreaterThan(versions.get("tcp/9"));
            }
        } finally {
            nodes.forEach(NodeServer::close);
            master.close();
        }
    }

    /**
     * Even keys are put with a time to live, and some odd ones get one from an EXPIRE once on SSD: objects known only
     * from their SSD copies come back with their deadlines too. Objects removed with an SSD copy do not come back:
     * the removal answered once the node had deleted the copy.
     */
    /** The keys the cluster facts list as removed while {@code nodeId}'s SSD copies could not be deleted. */
    private java.util.List<String> lostDeletionsOn(String nodeId) throws IOException {
        var facts = io.tiffin.core.transport.proto.ClusterStateMsg.parseFrom(
                java.nio.file.Files.readAllBytes(dir.resolve("state").resolve("cluster-state.pb")));
        return facts.getDiskFloorsList().stream().filter(f -> f.getNodeId().equals(nodeId)).findFirst()
                .<java.util.List<String>>map(io.tiffin.core.transport.proto.DiskFloor::getKeysList)
                .orElse(java.util.List.of());
    }

    private NodeServer startSsdNode(String address, io.tiffin.core.plugin.PluginRegistry plugins) {
        return startSsdNode(address, plugins.storageBackend("bucket"));
    }

    private NodeServer startSsdNode(String address, io.tiffin.api.spi.storage.StorageBackendFactory backend) {
        return NodeServer.start(NodeOptions.builder(address).nodeId("ssd").segmentSize(16 * MiB)
                .pingInterval(Duration.ofMillis(200)).build().withStorage(new NodeOptions.Storage(
                        backend, new io.tiffin.api.spi.PluginContext(
                                Map.of("path", dir.resolve("ssd").toString()), "ssd")), Duration.ofMillis(20)));
    }

    /** Puts each of {@code keys} (its {@link #value}) and waits until every one has an SSD copy. */
    private static void putOnSsd(TiffinClient c, String... keys) {
        for (String key : keys) {
            c.put(key, value(key));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> java.util.Arrays.stream(keys).allMatch(k -> onSsd(c, k)));
    }

    private static boolean onSsd(TiffinClient c, String key) {
        return c.locate(key).map(l -> l.replicas().stream()
                .anyMatch(r -> r.type() == io.tiffin.api.ReplicaType.LOCAL_DISK)).orElse(false);
    }

    /**
     * An object removed while the node of its SSD copy is down (its process gone: the FORGET's connection refused)
     * must not come back from that copy when a master takes over before the node is back: the removal answers only
     * once the cluster facts list its key for that node, and the next master deletes the node's copy instead of
     * adopting it; the node's other copies come back. Once the node's scan is in and the deletion done, the list is
     * cleared.
     */
    @Test
    void anObjectRemovedWhileItsSsdNodeWasDownStaysGoneAfterATakeover() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        Map<String, String> tier = Map.of("offload.mode", "write-through");
        MasterServer master = startMaster(port, tier);
        try (io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            NodeServer node = startSsdNode(address, plugins);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                putOnSsd(c, "gone", "kept");
                node.crash();
                assertThat(lostDeletionsOn("ssd")).isEmpty();

                c.remove("gone", true); // the node refuses the FORGET: done without it, once the facts list it

                assertThat(lostDeletionsOn("ssd")).as("in the facts when the removal answers").containsExactly("gone");
            }
            master.close();
            takeOverAndSeeTheRemovalHold(port, tier, plugins.storageBackend("bucket"));
        } finally {
            master.close();
        }
    }

    /**
     * A master takes over on {@code port} ({@code tier} settings) and the node "ssd" comes back on {@code backend}:
     * its copy of "gone" is deleted rather than adopted, "kept" comes back from its SSD copy, and the facts' list of
     * the node's lost deletions is cleared.
     */
    private void takeOverAndSeeTheRemovalHold(int port, Map<String, String> tier,
                                              io.tiffin.api.spi.storage.StorageBackendFactory backend) {
        String address = "127.0.0.1:" + port;
        MasterServer second = startMaster(port, tier);
        try {
            NodeServer back = startSsdNode(address, backend);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                await().atMost(Duration.ofSeconds(30)).until(() -> !second.service().recovering());
                await("the removed object's copy deleted").atMost(Duration.ofSeconds(30))
                        .until(() -> back.storageBackend().size("gone").isEmpty());
                assertThat(c.locate("gone")).as("removed before the takeover").isEmpty();
                await("kept comes back from its SSD copy").atMost(Duration.ofSeconds(30)).until(() -> onSsd(c, "kept"));
                assertThat(c.get("kept")).isEqualTo(value("kept"));
                await("the list cleared").atMost(Duration.ofSeconds(30)).until(() -> lostDeletionsOn("ssd").isEmpty());
            } finally {
                back.close();
            }
        } finally {
            second.close();
        }
    }

    /**
     * A removal whose SSD copy the node's disk refuses to delete (FORGET answered naming it) answers once the cluster
     * facts list the deletion: a master that takes over deletes the copy the restarted node reports instead of
     * adopting it. Before, the node logged the failure and answered as if the copy were gone.
     */
    @Test
    void aCopyWhoseDeletionTheDiskRefusedStaysGoneAfterATakeover() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        Map<String, String> tier = Map.of("offload.mode", "write-through");
        MasterServer master = startMaster(port, tier);
        try (io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            RefusingDeletes disk = new RefusingDeletes(plugins.storageBackend("bucket"));
            NodeServer node = startSsdNode(address, disk);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                putOnSsd(c, "gone", "kept");
                disk.refuse(true);

                c.remove("gone", true);

                assertThat(lostDeletionsOn("ssd")).as("in the facts when the removal answers").containsExactly("gone");
                assertThat(disk.refused()).isPositive();
                assertThat(node.storageBackend().size("gone")).as("still on the refusing disk").isPresent();
                node.crash();
            }
            master.close();
            disk.refuse(false);
            takeOverAndSeeTheRemovalHold(port, tier, disk);
        } finally {
            master.close();
        }
    }

    /**
     * With failover on, an EXPIRE answers once the nodes of the object's SSD copies have the new deadline in their
     * stamps, so a master that takes over finds it. A deadline the node's disk refuses to write fails the EXPIRE with
     * an error that says what to check, and the stamp keeps the deadline it had; once the disk takes writes again, the
     * same EXPIRE succeeds and reaches the stamp. Before, the node logged the failure and the EXPIRE answered as if
     * the deadline were on the disk.
     */
    @Test
    void anExpireWhoseDeadlineTheNodesDiskRefusesFailsAndTheStampKeepsItsDeadline() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        MasterServer master = startMaster(port, Map.of("offload.mode", "write-through"));
        try (io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            RefusingDeletes disk = new RefusingDeletes(plugins.storageBackend("bucket"));
            NodeServer node = startSsdNode(address, disk);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                putOnSsd(c, "k");
                assertThat(node.storageBackend().stamp("k").expireAtMs()).isZero();
                disk.refuseStamps(true);

                Throwable e = catchThrowable(() -> c.expire("k", Duration.ofHours(1).toMillis()));

                assertThat(e).isInstanceOfSatisfying(TiffinException.class, t -> {
                    assertThat(t.code()).as(t.getMessage()).isEqualTo(ErrorCode.FILE_WRITE_FAIL);
                    assertThat(t.getMessage()).contains("node ssd could not write the new expiry deadline of its SSD"
                            + " copy of k", "free space");
                });
                assertThat(node.storageBackend().stamp("k").expireAtMs()).as("the stamp as it was").isZero();

                disk.refuseStamps(false);
                assertThat(c.expire("k", Duration.ofHours(1).toMillis())).isTrue();
                assertThat(node.storageBackend().stamp("k").expireAtMs()).as("the stamp once the disk takes it")
                        .isPositive();
            } finally {
                node.close();
            }
        } finally {
            master.close();
        }
    }

    private DiskFloor diskFloorOf(String nodeId) throws IOException {
        var facts = io.tiffin.core.transport.proto.ClusterStateMsg.parseFrom(
                java.nio.file.Files.readAllBytes(dir.resolve("state").resolve("cluster-state.pb")));
        return facts.getDiskFloorsList().stream().filter(f -> f.getNodeId().equals(nodeId)).findFirst().orElse(null);
    }

    /**
     * A node that stops gracefully leaves an away floor in the cluster facts. The master it left keeps the keys of
     * its SSD-only objects and does not apply the floor: the node's return brings them back. A master that takes over
     * while the node is away knows none of those keys, so a removal it answers OBJECT_NOT_FOUND must still not be
     * undone by the node's return: it deletes the copies at or under the floor instead of adopting them (the kept
     * object too: a cache miss, never a removed object served). Before, the removed object came back.
     */
    @Test
    void anAwayNodesCopiesDoNotBringBackWhatATakingOverMasterRemoved() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        Map<String, String> tier = Map.of("offload.mode", "write-through");
        MasterServer master = startMaster(port, tier);
        try (io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            NodeServer node = startSsdNode(address, plugins);
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                putOnSsd(c, "gone", "kept");
                node.close(); // a graceful stop: unmounted at once
                assertThat(diskFloorOf("ssd")).isNotNull();
                assertThat(diskFloorOf("ssd").getAwayFloor()).isPositive();
                assertThat(c.locate("kept")).as("missing while its node is away").isEmpty();

                node = startSsdNode(address, plugins); // back to the master it left: its own floor is not for it
                await("kept back from the same master").atMost(Duration.ofSeconds(30)).until(() -> onSsd(c, "kept"));
                assertThat(onSsd(c, "gone")).isTrue();
                await("the entry cleared").atMost(Duration.ofSeconds(30)).until(() -> diskFloorOf("ssd") == null);
                node.close();
                assertThat(diskFloorOf("ssd").getAwayFloor()).isPositive();
            }
            master.close();
            master = startMaster(port, tier);
            MasterServer second = master;
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                await().atMost(Duration.ofSeconds(30)).until(() -> !second.service().recovering());
                assertThatThrownBy(() -> c.remove("gone", true)).as("unknown to the master that took over")
                        .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                                e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.OBJECT_NOT_FOUND));
                node = startSsdNode(address, plugins);
                NodeServer back = node;
                await("the node's old copies deleted").atMost(Duration.ofSeconds(30))
                        .until(() -> back.storageBackend().size("gone").isEmpty()
                                && back.storageBackend().size("kept").isEmpty());
                assertThat(c.locate("gone")).as("removed while its node was away").isEmpty();
                assertThat(c.locate("kept")).isEmpty();
                await("the entry cleared").atMost(Duration.ofSeconds(30)).until(() -> diskFloorOf("ssd") == null);
            } finally {
                node.close();
            }
        } finally {
            master.close();
        }
    }

    @Test
    void objectsKnownOnlyFromSsdComeBackWithTheirVersionsAndDeadlines() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        Map<String, String> tier = Map.of("offload.mode", "on-evict", "master.eviction-high-watermark", "0.5",
                "master.eviction-ratio", "0.2");
        MasterServer master = startMaster(port, tier);
        try (io.tiffin.core.plugin.PluginRegistry plugins = io.tiffin.core.plugin.PluginRegistry.classPathOnly()) {
            RefusingDeletes disk = new RefusingDeletes(plugins.storageBackend("bucket"));
            NodeServer node = startSsdNode(address, disk);
            try {
                Map<String, Long> versions = new HashMap<>();
                java.util.List<String> removed = new java.util.ArrayList<>();
                try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                    for (int i = 0; i < 40; i++) {
                        c.put("obj-" + i, TestCluster.randomBytes((int) MiB / 2 + i, i),
                                i % 2 == 0 ? PutOptions.DEFAULT.withTtlMillis(600_000) : PutOptions.DEFAULT);
                    }
                    MasterServer first = master;
                    await().atMost(Duration.ofSeconds(30)).until(() -> first.service().counters().offloads() > 10);
                    for (int i = 0; i < 40; i++) {
                        versions.put("obj-" + i, c.locate("obj-" + i).orElseThrow().version());
                    }
                    for (int i = 1; i < 12; i += 2) { // the first puts: on SSD only by now, most of them
                        assertThat(c.expire("obj-" + i, 60_000)).isTrue(); // answered once the node has it too
                    }
                    // removed: answered once the node has deleted the SSD copy, so no takeover brings it back
                    for (int i = 12; i < 40 && removed.size() < 3; i++) {
                        String key = "obj-" + i;
                        if (c.locate(key).orElseThrow().replicas().stream()
                                .anyMatch(r -> r.type() == io.tiffin.api.ReplicaType.LOCAL_DISK)) {
                            c.remove(key, true); // forced: the locate above leased it
                            removed.add(key);
                            assertThat(node.storageBackend().size(key)).as("%s's SSD copy once removed", key).isEmpty();
                        }
                    }
                    assertThat(removed).as("objects removed with an SSD copy").hasSize(3);
                }
                master.close();
                disk.delayScans(Duration.ofMillis(500)); // the node's scan reaches the new master well after its attach
                master = startMaster(port, tier);
                MasterServer second = master;
                try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                    await().atMost(Duration.ofSeconds(30)).until(() -> !second.service().recovering());
                    int ssdOnly = 0;
                    int ssdOnlyWithDeadline = 0;
                    for (int i = 0; i < 40; i++) {
                        String key = "obj-" + i;
                        if (removed.contains(key)) {
                            continue;
                        }
                        // an object only on SSD is back once the recovery has ended: the node's attach said its scan
                        // follows, and the recovery waited for it
                        var loc = c.locate(key).orElseThrow(() -> new AssertionError(key + " missing"));
                        assertThat(loc.version()).as(key).isEqualTo(versions.get(key));
                        assertThat(c.get(key)).as(key).isEqualTo(TestCluster.randomBytes((int) MiB / 2 + i, i));
                        long ttl = c.ttlMillis(key);
                        if (i % 2 == 0) {
                            assertThat(ttl).as("%s: its put's deadline", key).isPositive().isLessThanOrEqualTo(600_000);
                        } else if (i < 12) {
                            assertThat(ttl).as("%s: the EXPIRE's deadline", key).isPositive().isLessThanOrEqualTo(60_000);
                        } else {
                            assertThat(ttl).as("%s: no deadline", key).isEqualTo(-1);
                        }
                        if (loc.replicas().stream().noneMatch(r -> r.type() == io.tiffin.api.ReplicaType.MEMORY)) {
                            ssdOnly++;
                            ssdOnlyWithDeadline += ttl > 0 ? 1 : 0;
                        }
                    }
                    for (String key : removed) { // the node has registered its tier by now: the others are back
                        assertThat(c.locate(key)).as("%s, removed before the takeover", key).isEmpty();
                    }
                    assertThat(ssdOnly).as("objects known only from their SSD copies").isPositive();
                    assertThat(ssdOnlyWithDeadline).as("of them, objects with a deadline").isPositive();
                }
            } finally {
                node.close();
            }
        } finally {
            master.close();
        }
    }

    /**
     * A put made while the restarted master still waits for a node (here one that died with it) is recorded on its
     * node as yielding, so a later takeover prefers any other record of its key; puts after the recovery are not.
     * Its object comes back all the same when it is its key's only record.
     */
    @Test
    void aPutMadeWhileTheMasterRecoversIsRecordedAsYielding() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        Map<String, String> settings = Map.of("master.node-ttl", "5s");
        MasterServer master = startMaster(port, settings);
        NodeServer gone = null;
        NodeServer stays = null;
        try {
            gone = NodeServer.start(NodeOptions.builder(address).nodeId("gone").segmentSize(16 * MiB)
                    .pingInterval(Duration.ofMillis(200)).build());
            stays = NodeServer.start(NodeOptions.builder(address).nodeId("stays").segmentSize(16 * MiB)
                    .pingInterval(Duration.ofMillis(200)).build());
            MasterServer first = master;
            await().atMost(Duration.ofSeconds(30)).until(() -> first.service().liveNodes().size() == 2);
            PutOptions onStays = PutOptions.DEFAULT.withPreferredSegment(stays.segmentName());
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                c.put("before", value("before"), onStays);
            }
            master.close();
            gone.close(); // its segment stays in the facts: the next master waits for it, up to the node TTL
            gone = null;
            master = startMaster(port, settings);
            MasterServer second = master;
            NodeServer node = stays;
            await().atMost(Duration.ofSeconds(30)).until(() -> node.attaches() == 1);
            assertThat(second.service().recovering()).as("still waiting for the node that died").isTrue();
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                c.put("during", value("during"), PutOptions.DEFAULT); // answered when the recovery ends
                assertThat(second.service().recovering()).isFalse();
                c.put("after", value("after"), PutOptions.DEFAULT);
            }
            Map<String, Boolean> yields = new HashMap<>();
            stays.records().forEach(e -> yields.put(e.key(), e.yields()));
            assertThat(yields).containsExactlyInAnyOrderEntriesOf(Map.of("before", false, "during", true,
                    "after", false));
            master.close();
            master = startMaster(port, settings);
            MasterServer third = master;
            await().atMost(Duration.ofSeconds(30)).until(() -> !third.service().recovering());
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                assertThat(c.get("during")).as("its key's only record").isEqualTo(value("during"));
                assertThat(c.get("before")).isEqualTo(value("before"));
            }
        } finally {
            if (gone != null) {
                gone.close();
            }
            if (stays != null) {
                stays.close();
            }
            master.close();
        }
    }

    @Test
    void aKeptDeadlineThatAnExpireMovedDuringTheReplacementComesBackFromTheRecords() throws IOException {
        int port = freePort();
        String address = "127.0.0.1:" + port;
        MasterServer master = startMaster(port);
        NodeServer node = null;
        try (TransportClientPool writer = new TransportClientPool("keepttl-writer", TransportSettings.defaults(),
                "keepttl-writer")) {
            node = NodeServer.start(NodeOptions.builder(address).nodeId("n").segmentSize(16 * MiB)
                    .pingInterval(Duration.ofMillis(200)).build());
            MasterServer first = master;
            await().atMost(Duration.ofSeconds(30)).until(() -> first.service().liveNodes().size() == 1);
            byte[] replacement = value("kept again");
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                c.put("kept", value("kept"), PutOptions.DEFAULT.withTtlMillis(600_000));
                // a writer in the middle of a KEEPTTL replacement (the gateway's SET ... KEEPTTL): granted, not ended
                PutStartReply grant = writer.get(address).callSync(Opcode.PUT_START, PutStartRequest.newBuilder()
                        .setClientId("keepttl-writer").setKey("kept").setSize(replacement.length).setPutId(7)
                        .setOptions(Messages.toMsg(PutOptions.DEFAULT.withUpsert(true).withKeepTtl(true))).build(),
                        PutStartReply.parser());
                assertThat(grant.getCommitOnNodes()).isTrue();
                assertThat(grant.getExpireAtMs()).as("the replaced object's deadline, as it is at PutStart")
                        .isGreaterThan(System.currentTimeMillis() + 500_000);
                assertThat(c.expire("kept", 60_000)).isTrue(); // moves the deadline the replacement keeps
                // the writer records what it was granted with the bytes, then ends the put
                int crc = io.tiffin.core.util.Crc32c.of(java.lang.foreign.MemorySegment.ofArray(replacement));
                for (Replica r : grant.getReplicasList()) {
                    CommitRecord commit = CommitRecord.newBuilder().setKey("kept").setSize(replacement.length)
                            .setVersion(grant.getVersion()).setPutId(7).setOffset(r.getOffset()).setCrc32C(crc)
                            .setExpireAtMs(grant.getExpireAtMs()).build();
                    writer.get(r.getEndpoint()).call(Opcode.DATA_WRITE, Messages.withGrant(DataRequest.newBuilder()
                            .setSegment(r.getSegment()).setOffset(r.getOffset()).setLength(replacement.length)
                            .setMountEpoch(r.getMountEpoch()).setCommit(commit), Messages.fromMsg(r)).build(),
                            Unpooled.wrappedBuffer(replacement)).join().release();
                }
                writer.get(address).callSync(Opcode.PUT_END, KeyRequest.newBuilder().setClientId("keepttl-writer")
                        .setKey("kept").setCrc32C(crc).build(), Empty.parser());
                assertThat(c.ttlMillis("kept")).isPositive().isLessThanOrEqualTo(60_000);
            }
            master.close();
            master = startMaster(port);
            MasterServer second = master;
            await().atMost(Duration.ofSeconds(30)).until(() -> !second.service().recovering());
            try (TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(address).build())) {
                assertThat(c.get("kept")).isEqualTo(replacement);
                assertThat(c.ttlMillis("kept")).as("the deadline the EXPIRE set, not the one granted at PutStart")
                        .isPositive().isLessThanOrEqualTo(60_000);
            }
        } finally {
            if (node != null) {
                node.close();
            }
            master.close();
        }
    }

    @Test
    void aNodeServesReadsOfLocationsClientsHoldWhileNoMasterRuns() {
        TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
        try {
            TiffinClient c = cluster.locationCachingClient(Duration.ofSeconds(30));
            byte[] v = TestCluster.randomBytes(5000, 3);
            c.put("k", v);
            assertThat(c.get("k")).isEqualTo(v); // looked up: the location is cached for the lease
            cluster.master.close();
            assertThat(c.get("k")).as("read from the node, no master running").isEqualTo(v);
            assertThatThrownBy(() -> c.get("never-looked-up")).isInstanceOf(TiffinException.class);
        } finally {
            cluster.close();
        }
    }

    @Test
    void aPutOfAKeyAnotherWriterIsWritingIsNotReportedDone() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            assertThat(cluster.master.service().putStart("other-writer", "k", 100, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.OK);
            // the other writer may still fail: "exists" would report a put with no bytes anywhere
            assertThatThrownBy(() -> c.put("k", new byte[100])).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY));
            assertThat(c.batchPutFrom(List.of("k"), List.of(java.lang.foreign.MemorySegment.ofArray(new byte[100])),
                    PutOptions.DEFAULT).get(0).code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(cluster.master.service().putRevoke("other-writer", "k")).isEqualTo(ErrorCode.OK);
            byte[] mine = TestCluster.randomBytes(100, 1);
            c.put("k", mine);
            assertThat(c.get("k")).isEqualTo(mine);
            // a key given twice in one batch is written once: the second shares the first's outcome
            byte[] first = TestCluster.randomBytes(300, 2);
            assertThat(c.batchPutFrom(List.of("twice", "twice"), List.of(java.lang.foreign.MemorySegment.ofArray(first),
                    java.lang.foreign.MemorySegment.ofArray(new byte[50])), PutOptions.DEFAULT))
                    .extracting(r -> r.code()).containsExactly(ErrorCode.OK, ErrorCode.OK);
            assertThat(c.get("twice")).isEqualTo(first);
        }
    }
}
