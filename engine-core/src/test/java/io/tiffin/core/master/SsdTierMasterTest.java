package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The master's side of the SSD tier when things go wrong: offloads and promotions whose node never
 * reports, dies or restarts, upserts and reads racing a task, and deletes owed to a node that was away.
 * Each case is a sequence of the RPCs a node and a client would send, driven on a manual clock.
 */
class SsdTierMasterTest {
    private static final long MiB = 1L << 20;
    /** Preferred segments first, then the others in order: deterministic placement. */
    private static final AllocationStrategy IN_ORDER = (request, segments, sink) -> {
        for (String preferred : request.preferredSegments()) {
            for (var s : segments) {
                if (sink.remaining() > 0 && s.name().equals(preferred) && s.status() == SegmentStatus.OK) {
                    sink.tryPlace(s);
                }
            }
        }
        for (var s : segments) {
            if (sink.remaining() > 0 && s.status() == SegmentStatus.OK) {
                sink.tryPlace(s);
            }
        }
    };

    private final ManualTicker ticker = new ManualTicker();
    private final Duration release = MasterSettings.defaults().putStartReleaseTimeout();

    private MasterService master(TierSettings.OffloadMode mode, int offloadLimit) {
        return new MasterService(MasterSettings.defaults().withTier(new TierSettings(mode, 2, 50_000, offloadLimit)),
                IN_ORDER, ticker, null);
    }

    /** A master with one node {@code nodeId} (segment {@code "s-" + nodeId}, 64 MiB) that has an SSD tier. */
    private MasterService withSsdNode(TierSettings.OffloadMode mode, int offloadLimit, String nodeId) {
        MasterService m = master(mode, offloadLimit);
        m.mountSegment("s-" + nodeId, nodeId, "ep-" + nodeId, 64 * MiB);
        m.ssdTier().registerStorage(nodeId, 1L << 30);
        return m;
    }

    private static void put(MasterService m, String key, long size, PutOptions options) {
        assertThat(m.putStart("writer", key, size, options).code()).isEqualTo(ErrorCode.OK);
        assertThat(m.putEnd("writer", key)).isEqualTo(ErrorCode.OK);
    }

    private static boolean onSsd(MasterService m, String key) {
        KeyResult<io.tiffin.api.ObjectLocation> loc = m.getReplicaList(key);
        return loc.isOk() && loc.value().replicas().stream().anyMatch(r -> r.type() == ReplicaType.LOCAL_DISK);
    }

    /**
     * A node that stops asks for its sole copies to go to its SSD first (its polls name its segment): the segment
     * takes no new puts, the objects only it holds are offloaded as the queue allows, and the count reaches 0 once the
     * node has reported every copy. An object with a replica on another node, one already on SSD and one still being
     * written are not waited for.
     */
    @Test
    void aStoppingNodesSoleCopiesAreOffloadedBeforeItGoes() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.OFF, 2, "n1");
        for (int i = 0; i < 3; i++) {
            put(m, "only-here-" + i, 4096, PutOptions.DEFAULT);
        }
        m.mountSegment("s-n2", "n2", "ep-n2", 64 * MiB);
        put(m, "also-on-n2", 4096, PutOptions.DEFAULT.withReplicas(2));
        assertThat(m.putStart("writer", "being-written", 4096, PutOptions.DEFAULT.withPreferredSegment("s-n1")).code())
                .isEqualTo(ErrorCode.OK);
        assertThatThrownBy(() -> m.ssdTier().drain("n2", "s-n1")).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND));

        assertThat(m.ssdTier().drain("n1", "s-n1").remaining()).isEqualTo(3);
        assertThat(m.segmentViews()).filteredOn(v -> v.name().equals("s-n1")).singleElement()
                .satisfies(v -> assertThat(v.status()).isEqualTo(SegmentStatus.DRAINING));
        assertThat(m.putStart("writer", "new", 4096, PutOptions.DEFAULT.withPreferredSegment("s-n1")).value())
                .as("placed on the other node").allSatisfy(d -> assertThat(d.segment()).isEqualTo("s-n2"));
        List<io.tiffin.core.transport.proto.OffloadTask> first = m.ssdTier().pollTasks("n1", 10, 0).offloads();
        assertThat(first).as("as many as the queue takes").hasSize(2);
        assertThat(m.ssdTier().drain("n1", "s-n1").remaining()).as("queued offloads still count").isEqualTo(3);
        m.ssdTier().reportDiskObjects("n1", first.stream().map(t -> t.getKey()).toList(), List.of(4096L, 4096L));
        assertThat(m.ssdTier().drain("n1", "s-n1").remaining()).isEqualTo(1);
        List<io.tiffin.core.transport.proto.OffloadTask> second = m.ssdTier().pollTasks("n1", 10, 0).offloads();
        assertThat(second).hasSize(1);
        m.ssdTier().reportDiskObjects("n1", List.of(second.get(0).getKey()), List.of(4096L));
        assertThat(m.ssdTier().drain("n1", "s-n1").remaining()).isZero();
        for (int i = 0; i < 3; i++) {
            assertThat(onSsd(m, "only-here-" + i)).as("only-here-%d", i).isTrue();
        }
        assertThat(onSsd(m, "also-on-n2")).isFalse();
    }

    /**
     * An object whose offload failed (a full disk) is not waited for by a stopping node, and is counted apart: the
     * node then says that much is lost instead of that it copied what only its memory held.
     */
    @Test
    void aStoppingNodesObjectsWhoseOffloadFailedAreCountedApart() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.OFF, 10, "n1");
        put(m, "copied", 4096, PutOptions.DEFAULT);
        put(m, "failed", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().drain("n1", "s-n1")).isEqualTo(new SsdTierService.Drain(2, 0));
        List<io.tiffin.core.transport.proto.OffloadTask> tasks = m.ssdTier().pollTasks("n1", 10, 0).offloads();
        assertThat(tasks).hasSize(2);
        m.ssdTier().offloadFailed("n1", List.of("failed"), List.of());
        m.ssdTier().reportDiskObjects("n1", List.of("copied"), List.of(4096L));
        assertThat(m.ssdTier().drain("n1", "s-n1")).isEqualTo(new SsdTierService.Drain(0, 1));
    }

    @Test
    void anUpsertIsRefusedWhileANodeOffloadsTheObject() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1); // the node now reads the memory replica

        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);
        assertThat(m.putStart("other", "k", 4096, PutOptions.DEFAULT.withUpsert(true)).code())
                .as("an upsert would hand the buffer the node reads to a new writer")
                .isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);

        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        put(m, "k", 4096, PutOptions.DEFAULT.withUpsert(true));
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1);
        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(onSsd(m, "k")).isTrue();
    }

    /**
     * A node's late PROMOTION_END of an older object of the key (its replica long gone) arrives while the key's object
     * is being offloaded to that node: it ends no promotion and leaves the offload alone, which the node's report then
     * completes. Before, it took the offload's task node, so the report was deleted as a stray copy and the object
     * refused every write for good ({@code OBJECT_HAS_REPLICATION_TASK}), the release timeout included.
     */
    @Test
    void aLatePromotionEndLeavesTheOffloadOfTheKeysObjectAlone() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1);

        assertThat(m.ssdTier().promotionEnd("n1", "k", 12345, false)).isEqualTo(ErrorCode.REPLICA_NOT_FOUND);
        assertThat(m.ssdTier().promotionStart("n1", "k").code()).as("no copy on n1 yet")
                .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);

        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(m.counters().offloads()).isEqualTo(1);
        assertThat(onSsd(m, "k")).isTrue();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
    }

    /**
     * Master {@code m} on node n1 (on-evict offload, eviction above half of a 64 MiB segment): a forced replacement of
     * k gives up the offload that eviction started for the old object while the new one was written, and then eviction
     * offloads the new object to the same node. Returns the old and the new version; both offloads were polled.
     */
    private long[] replacedDuringItsOffload(MasterService m) {
        long oldVersion = offloadGivenUpByAReplacement(m);
        long newVersion = m.getReplicaList("k").value().version();
        ticker.advance(Duration.ofMinutes(1));
        m.runEvictionOnce();                                                    // the old buffers are still held
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).extracting(t -> t.getVersion())
                .containsExactly(newVersion);
        return new long[] {oldVersion, newVersion};
    }

    /**
     * "k" of 20 MiB on node n1's 64 MiB, its offload to n1's SSD handed to the node, then a forced replacement of it
     * ends: the offload is given up while the node copies the old bytes. Returns the old object's version.
     */
    private long offloadGivenUpByAReplacement(MasterService m) {
        m.mountSegment("s-n1", "n1", "ep-n1", 64 * MiB);
        m.ssdTier().registerStorage("n1", 1L << 30);
        put(m, "k", 20 * MiB, PutOptions.DEFAULT);
        long oldVersion = m.getReplicaList("k").value().version();
        ticker.advance(Duration.ofMinutes(1)); // past the lease that lookup granted
        PutOptions set = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
        assertThat(m.putStart("writer", "k", 20 * MiB, set).code()).isEqualTo(ErrorCode.OK);
        m.runEvictionOnce();                                                    // 40 of 64 MiB used: the old k goes
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).extracting(t -> t.getVersion())
                .containsExactly(oldVersion);                                   // the node copies the old bytes
        assertThat(m.putEnd("writer", "k")).isEqualTo(ErrorCode.OK);           // that offload is given up
        return oldVersion;
    }

    /**
     * The copy of an offload a replacement gave up, reported once the key is gone (its new object removed): it holds
     * bytes no client wrote last, so it is deleted, not adopted as an SSD-only object, which would serve the old
     * bytes after a removal (and after a write of the key that ends up lost).
     */
    @Test
    void aCopyOfAnOffloadAReplacementGaveUpIsNotAdoptedOnceTheKeyIsGone() {
        MasterService m = onEvictWithEvictionAboveHalf();
        long oldVersion = offloadGivenUpByAReplacement(m);
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);

        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(oldVersion), 20 * MiB));

        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        StorageTier.Tasks tasks = m.ssdTier().pollTasks("n1", 10, 0);
        assertThat(tasks.deletes()).containsExactly("k");
        assertThat(tasks.deleteVersions()).containsExactly(oldVersion);
    }

    /**
     * As above, the node killed before it reported the copy: when it returns, its scan reports the copy, which is
     * not adopted either; once that scan is complete the master no longer waits for the copy.
     */
    @Test
    void aCopyOfAnOffloadAReplacementGaveUpIsNotAdoptedFromTheScanOfTheRestartedNode() {
        MasterService m = onEvictWithEvictionAboveHalf();
        long oldVersion = offloadGivenUpByAReplacement(m);
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
        m.ssdTier().registerStorage("n1", 1L << 30); // the node restarted

        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(oldVersion), 20 * MiB), true);

        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deleteVersions()).containsExactly(oldVersion);
    }

    private MasterService onEvictWithEvictionAboveHalf() {
        return new MasterService(MasterSettings.defaults().withEviction(0.5, 0.2)
                .withTier(new TierSettings(TierSettings.OffloadMode.ON_EVICT, 2, 50_000, 25_000)),
                IN_ORDER, ticker, null);
    }

    /**
     * The node's report of the copy it made for the offload a replacement gave up ({@link #replacedDuringItsOffload})
     * arrives while the new object's offload is pending: the copy holds the old bytes, so it is not taken for the new
     * object (which would end the new offload and free the only copy of the new bytes); it is deleted, and the new
     * offload stays pending until its own copy is reported.
     */
    @Test
    void aCopyOfTheVersionAForcedReplacementGaveUpDoesNotCompleteTheNewVersionsOffload() {
        MasterService m = onEvictWithEvictionAboveHalf();
        long[] versions = replacedDuringItsOffload(m);

        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(versions[0]), 20 * MiB));

        assertThat(onSsd(m, "k")).as("the old bytes listed as the new object's SSD copy").isFalse();
        assertThat(m.getReplicaList("k").value().replicas()).as("the new bytes' memory replica")
                .extracting(r -> r.type()).containsExactly(ReplicaType.MEMORY);
        assertThat(m.ssdTier().offloadsInFlight()).as("the new object's offload").isEqualTo(1);
        StorageTier.Tasks tasks = m.ssdTier().pollTasks("n1", 10, 0);
        assertThat(tasks.deletes()).containsExactly("k");
        assertThat(tasks.deleteVersions()).as("that version only: the node keeps a newer copy")
                .containsExactly(versions[0]);

        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(versions[1]), 20 * MiB));
        assertThat(onSsd(m, "k")).isTrue();
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
    }

    /**
     * As above, the given-up offload failing instead (a full disk): its failure does not end the new object's offload,
     * which is still to be reported; a failure of the new object's own offload ends it.
     */
    @Test
    void aFailureOfTheOffloadAReplacementGaveUpDoesNotEndTheNewVersionsOffload() {
        MasterService m = onEvictWithEvictionAboveHalf();
        long[] versions = replacedDuringItsOffload(m);

        m.ssdTier().offloadFailed("n1", List.of("k"), List.of(versions[0]));

        assertThat(m.ssdTier().offloadsInFlight()).as("the new object's offload").isEqualTo(1);
        assertThat(m.counters().offloadFailures()).isZero();
        m.ssdTier().offloadFailed("n1", List.of("k"), List.of(versions[1]));
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(m.counters().offloadFailures()).isEqualTo(1);
        assertThat(m.getReplicaList("k").value().replicas()).as("the memory copy stays")
                .extracting(r -> r.type()).containsExactly(ReplicaType.MEMORY);
    }

    /**
     * A failure report whose versions do not pair with its keys (a list of another length: a broken or hostile node)
     * is taken as one without versions: the pending offload of the key on that node ends as failed.
     */
    @Test
    void aFailureReportWithVersionsThatDoNotPairWithItsKeysNamesNoVersion() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1);

        m.ssdTier().offloadFailed("n1", List.of("k"), List.of(1L, 2L));

        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(m.counters().offloadFailures()).isEqualTo(1);
    }

    /**
     * A node's scan that reports sizes no object can have (none, negative, beyond the 56 bits the master keeps: a
     * corrupt stamp or a hostile peer) adopts nothing for them, and the other copies of the same report are adopted.
     */
    @Test
    void copiesOfSizesNoObjectCanHaveAreNotAdopted() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        m.ssdTier().reportDiskObjects("n1", List.of("empty", "negative", "huge", "fine"),
                List.of(0L, -1L, ObjectMetadata.MAX_SIZE + 1, 4096L));
        assertThat(m.getReplicaList("empty").isOk()).isFalse();
        assertThat(m.getReplicaList("negative").isOk()).isFalse();
        assertThat(m.getReplicaList("huge").isOk()).isFalse();
        assertThat(onSsd(m, "fine")).isTrue();
        assertThat(m.getReplicaList("fine").value().size()).isEqualTo(4096);
    }

    /**
     * A delete handed out with a poll stays pending until the node's next poll: done then, unless that poll names it
     * as failed (asked again); a node that registers its tier again before that poll (it restarted) is asked again,
     * and meanwhile a copy of the key it reports is not adopted.
     */
    @Test
    void aHandedOutDeleteStaysPendingUntilTheNodesNextPollSaysItIsDone() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1);
        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        long version = m.getReplicaList("k").value().version();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);

        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).containsExactly("k");
        StorageTier.Tasks again = m.ssdTier().pollTasks("n1", 10, 0, List.of("k"), List.of(version));
        assertThat(again.deletes()).as("the node's disk failed it: asked again").containsExactly("k");
        assertThat(again.deleteVersions()).containsExactly(version);
        assertThat(m.counters().failedDiskDeletes()).isEqualTo(1);

        m.ssdTier().registerStorage("n1", 1L << 30); // restarted before it polled again
        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(m.getReplicaList("k").isOk()).as("its scan's copy is not adopted").isFalse();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).as("asked again after the restart")
                .containsExactly("k");
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).as("done: acknowledged by this poll").isEmpty();
        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(m.getReplicaList("k").isOk()).as("a copy reported after the deletion was acknowledged").isTrue();
    }

    /**
     * A new deadline the node's disk failed to write into its copy's stamp (its poll names the copy) is sent with the
     * next poll again, as the object's current deadline, not the one that failed; a copy of an older version, or of
     * an object removed meanwhile, gets none.
     */
    @Test
    void aDeadlineTheNodesDiskRefusedIsSentAgainAsTheObjectsCurrentOne() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        List<Long> versions = putOnSsd(m, "n1", List.of("k", "gone"));
        long version = versions.getFirst();
        assertThat(m.expire("k", Expiry.SET, 60_000).isOk()).isTrue();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deadlines()).extracting(d -> d.getKey()).containsExactly("k");
        assertThat(m.expire("k", Expiry.SET, 90_000).isOk()).isTrue(); // moved again before the node says it failed
        assertThat(m.remove("gone", true)).isEqualTo(ErrorCode.OK);

        m.ssdTier().unstamped("n1", List.of("k", "gone", "k"), List.of(version, versions.get(1), version - 1));
        List<io.tiffin.core.transport.proto.DiskObject> again = m.ssdTier().pollTasks("n1", 10, 0).deadlines();

        assertThat(again).as("k's current deadline once; nothing for the removed object or the older version")
                .hasSize(1);
        assertThat(again.getFirst().getKey()).isEqualTo("k");
        assertThat(again.getFirst().getVersion()).isEqualTo(version);
        assertThat(again.getFirst().getExpireAtMs()).isEqualTo(ticker.millis() + 90_000);
        assertThat(m.counters().failedDiskStamps()).isEqualTo(3);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deadlines()).as("sent once per failure").isEmpty();
    }

    /** Puts {@code keys} of 4 KiB and lists their write-through copies on {@code nodeId}'s SSD; returns versions. */
    private static List<Long> putOnSsd(MasterService m, String nodeId, List<String> keys) {
        List<Long> versions = new java.util.ArrayList<>();
        for (String k : keys) {
            put(m, k, 4096, PutOptions.DEFAULT);
        }
        assertThat(m.ssdTier().pollTasks(nodeId, 100, 0).offloads()).hasSize(keys.size());
        for (String k : keys) {
            m.ssdTier().reportDiskObjects(nodeId, List.of(k), List.of(4096L));
            versions.add(m.getReplicaList(k).value().version());
        }
        return versions;
    }

    private static List<io.tiffin.core.transport.proto.DiskObject> copies(List<String> keys, List<Long> versions) {
        return copies(keys, versions, 4096);
    }

    private static List<io.tiffin.core.transport.proto.DiskObject> copies(List<String> keys, List<Long> versions,
                                                                        long size) {
        List<io.tiffin.core.transport.proto.DiskObject> out = new java.util.ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            out.add(io.tiffin.core.transport.proto.DiskObject.newBuilder().setKey(keys.get(i)).setSize(size)
                    .setVersion(versions.get(i)).build());
        }
        return out;
    }

    /** The node is back: mounts, registers its tier and reports its whole scan. */
    private static void comeBack(MasterService m, String nodeId, List<String> keys, List<Long> versions) {
        m.mountSegment("s2-" + nodeId, nodeId, "ep-" + nodeId, 64 * MiB);
        m.ssdTier().registerStorage(nodeId, 1L << 30);
        m.ssdTier().reportDiskObjects(nodeId, copies(keys, versions), true);
    }

    /**
     * After a graceful stop the node's SSD-only objects are missing; a regex removal and a removal of all keys reach
     * the keys the master kept for them, so the node's return brings back only what neither matched.
     */
    @Test
    void removalsByRegexAndOfAllReachTheCopiesOfANodeThatStopped() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        List<String> keys = List.of("a-1", "a-2", "b-1");
        List<Long> versions = putOnSsd(m, "n1", keys);
        m.unmountSegment("n1", "s-n1");
        assertThat(m.getReplicaList("a-1").isOk()).isFalse();
        assertThat(m.ssdTier().awayCopies()).isEqualTo(3);

        assertThat(m.removeByRegex("^a-", true)).as("none of them is listed").isZero();
        assertThat(m.ssdTier().awayCopies()).isEqualTo(1);
        comeBack(m, "n1", keys, versions);

        assertThat(m.getReplicaList("a-1").isOk()).isFalse();
        assertThat(m.getReplicaList("a-2").isOk()).isFalse();
        assertThat(m.getReplicaList("b-1").isOk()).isTrue();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).containsExactlyInAnyOrder("a-1", "a-2");
        assertThat(m.ssdTier().awayCopies()).isZero();

        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).as("the deletes acknowledged").isEmpty();
        m.unmountSegment("n1", "s2-n1");
        assertThat(m.ssdTier().awayCopies()).isEqualTo(1);
        m.removeAll(true);
        assertThat(m.ssdTier().awayCopies()).as("a floor for the node instead of a delete per key").isZero();
        comeBack(m, "n1", List.of("b-1"), List.of(versions.get(2)));
        assertThat(m.getReplicaList("b-1").isOk()).as("removed with all keys while away").isFalse();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).containsExactly("b-1");
    }

    /**
     * A node away for longer than offload.away-ttl: the master drops the keys it kept and deletes whatever the node's
     * scan reports of that time when it returns; a node back within it gets its objects back.
     */
    @Test
    void aNodeAwayForLongerThanTheAwayTtlHasItsOldCopiesDeletedOnReturn() {
        MasterService m = new MasterService(MasterSettings.defaults().withTier(new TierSettings(
                TierSettings.OffloadMode.WRITE_THROUGH, 2, 50_000, 25_000).withAwayTtl(Duration.ofHours(1))),
                IN_ORDER, ticker, null);
        for (String n : List.of("n1", "n2")) {
            m.mountSegment("s-" + n, n, "ep-" + n, 64 * MiB);
            m.ssdTier().registerStorage(n, 1L << 30);
        }
        List<Long> v1 = putOnSsd(m, "n1", List.of("k1"));
        m.unmountSegment("n1", "s-n1");
        ticker.advance(Duration.ofMinutes(59));
        List<Long> v2 = putOnSsd(m, "n2", List.of("k2"));
        m.unmountSegment("n2", "s-n2");
        ticker.advance(Duration.ofMinutes(2));

        m.expireNodes();

        assertThat(m.ssdTier().awayCopies()).as("n1's key dropped, n2's kept").isEqualTo(1);
        comeBack(m, "n1", List.of("k1"), v1);
        comeBack(m, "n2", List.of("k2"), v2);
        assertThat(m.getReplicaList("k1").isOk()).as("away for longer than the TTL").isFalse();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).containsExactly("k1");
        assertThat(m.getReplicaList("k2").isOk()).as("back within the TTL").isTrue();
    }

    @Test
    void anOffloadWhoseNodeNeverReportsIsAbandonedAfterTheReleaseTimeout() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1); // and the node's report is lost

        ticker.advance(release.minusSeconds(1));
        m.releaseStuckPuts();
        assertThat(m.remove("k", true)).as("still within the timeout").isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);

        ticker.advance(Duration.ofSeconds(2));
        m.releaseStuckPuts();
        assertThat(m.counters().abandonedTasks()).isEqualTo(1);
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        // a report that comes after all is a copy the master no longer expects: deleted, not listed
        m.ssdTier().reportDiskObjects("n1", List.of("k"), List.of(4096L));
        assertThat(onSsd(m, "k")).isFalse();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).containsExactly("k");
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
    }

    /**
     * An offload that timed out is given up; eviction then offloads the same object again, and the node's report of
     * that version is the new task's copy: the offload completes (the note of the given-up task does not turn it into
     * a stale copy, which would keep the object refusing writes until the new task timed out too).
     */
    @Test
    void anObjectOffloadedAgainAfterItsOffloadTimedOutTakesTheCopyOfThatVersion() {
        MasterService m = onEvictWithEvictionAboveHalf();
        m.mountSegment("s-n1", "n1", "ep-n1", 64 * MiB);
        m.ssdTier().registerStorage("n1", 1L << 30);
        put(m, "k", 40 * MiB, PutOptions.DEFAULT);
        long version = m.getReplicaList("k").value().version();
        ticker.advance(Duration.ofMinutes(1)); // past the lease that lookup granted
        m.runEvictionOnce();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1); // and the node's report is lost
        ticker.advance(release.plusSeconds(1));
        m.releaseStuckPuts();
        assertThat(m.counters().abandonedTasks()).isEqualTo(1);

        m.runEvictionOnce();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).extracting(t -> t.getVersion())
                .containsExactly(version);
        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(version), 40 * MiB));

        assertThat(onSsd(m, "k")).isTrue();
        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
    }

    @Test
    void aNodeThatDiesAfterTakingOffloadsGivesTheirSlotsBack() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 1, "n1");
        put(m, "a", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(1);

        m.forgetNode("n1");

        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        m.mountSegment("s2", "n2", "ep2", 64 * MiB);
        m.ssdTier().registerStorage("n2", 1L << 30);
        put(m, "b", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n2", 10, 0).offloads()).as("the only slot is free again").hasSize(1);
    }

    /**
     * A node's SSD holds the copy of a removed object, its deletion not yet acknowledged, when the key is put again and
     * the new object's offload to the same node is queued. Then the node dies before it wrote the new copy (a SIGKILL)
     * and comes back: the new object, held only in the lost memory, is gone, and the old copy its scan reports must not
     * come back as the key's object. The new offload keeps the deletion, capped under its own version, so the copy it
     * writes stays. Whether the deletion had been handed to the node or was still waiting makes no difference.
     */
    @ParameterizedTest(name = "deletion handed out before the put: {0}")
    @ValueSource(booleans = {false, true})
    void theOldCopyOfAKeyPutAgainDoesNotComeBackWhenTheNodeDiesBeforeItWroteTheNewOne(boolean handed) {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        long old = putOnSsd(m, "n1", List.of("k")).getFirst();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
        if (handed) {
            assertThat(m.ssdTier().pollTasks("n1", 0, 0).deletes()).containsExactly("k");
        }
        put(m, "k", 4096, PutOptions.DEFAULT); // its write-through offload is queued for n1
        long current = m.getReplicaList("k").value().version();
        assertThat(current).isGreaterThan(old);

        m.mountSegment("s-n1-2", "n1", "ep-n1", 64 * MiB, 2); // killed before it polled, and restarted
        m.ssdTier().registerStorage("n1", 1L << 30);
        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(old)), true);

        assertThat(m.getReplicaList("k").code()).as("the removed object's copy, not adopted")
                .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        StorageTier.Tasks tasks = m.ssdTier().pollTasks("n1", 10, 0);
        assertThat(tasks.deletes()).containsExactly("k");
        assertThat(tasks.deleteVersions()).singleElement().satisfies(v -> assertThat(v).isGreaterThanOrEqualTo(old));
    }

    /**
     * The other order of the case above: the node writes the new object's copy before it takes the old copy's
     * deletion. The deletion names the versions under the new one, so the node keeps the new copy, and the master
     * adopts it when the node reports it.
     */
    @Test
    void theDeletionOfAnOldCopyKeptByANewOffloadSparesTheNewCopy() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        long old = putOnSsd(m, "n1", List.of("k")).getFirst();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
        put(m, "k", 4096, PutOptions.DEFAULT);
        long current = m.getReplicaList("k").value().version();

        StorageTier.Tasks tasks = m.ssdTier().pollTasks("n1", 10, 0);
        assertThat(tasks.offloads()).extracting(t -> t.getVersion()).containsExactly(current);
        assertThat(tasks.deleteVersions()).as("under the new copy's version").containsExactly(current - 1);
        m.ssdTier().reportDiskObjects("n1", copies(List.of("k"), List.of(current)));
        assertThat(onSsd(m, "k")).isTrue();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deletes()).isEmpty();
        assertThat(old).isLessThan(current);
    }

    @Test
    void aRestartedNodesOffloadsAreGivenUp() {
        MasterService m = master(TierSettings.OffloadMode.WRITE_THROUGH, 25_000);
        m.mountSegment("sM", "nM", "epM", 64 * MiB, 1);
        m.mountSegment("sN-1", "nN", "epN", 64 * MiB, 1);
        m.ssdTier().registerStorage("nN", 1L << 30);
        put(m, "k", 4096, PutOptions.DEFAULT.withReplicas(2));
        assertThat(m.ssdTier().pollTasks("nN", 10, 0).offloads()).hasSize(1);

        m.mountSegment("sN-2", "nN", "epN", 64 * MiB, 2); // crashed and restarted within its TTL
        m.ssdTier().registerStorage("nN", 1L << 30);

        assertThat(m.ssdTier().offloadsInFlight()).isZero();
        assertThat(m.getReplicaList("k").isOk()).as("the replica on nM").isTrue();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);
    }

    /**
     * An object that lives on after its SSD node expired (a memory replica elsewhere) and is removed later must not
     * come back from that node's copy when the node returns: the copy, listed nowhere any more, was adopted as an
     * object of its own. Its deletion is queued for the node when the node expires.
     */
    @Test
    void anObjectRemovedAfterItsSsdNodeExpiredDoesNotComeBackWithTheNode() {
        MasterService m = master(TierSettings.OffloadMode.WRITE_THROUGH, 25_000);
        m.mountSegment("sM", "nM", "epM", 64 * MiB, 1);
        m.mountSegment("sN", "nN", "epN", 64 * MiB, 1);
        m.ssdTier().registerStorage("nN", 1L << 30);
        put(m, "k", 4096, PutOptions.DEFAULT.withReplicas(2));
        var task = m.ssdTier().pollTasks("nN", 10, 0).offloads().getFirst();
        m.ssdTier().reportDiskObjects("nN", List.of(io.tiffin.core.transport.proto.DiskObject.newBuilder()
                .setKey("k").setSize(4096).setVersion(task.getVersion()).build()));
        assertThat(onSsd(m, "k")).isTrue();

        Duration ttl = MasterSettings.defaults().nodeTtl();
        ticker.advance(ttl.dividedBy(2));
        m.ping("nM", 1);
        ticker.advance(ttl.dividedBy(2).plusSeconds(1));
        assertThat(m.expireNodes()).containsExactly("nN");       // nN gone; k lives on in nM's memory
        assertThat(m.getReplicaList("k").isOk()).isTrue();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OK);

        m.mountSegment("sN-2", "nN", "epN", 64 * MiB, 2);          // back: mount, register, report its scan
        m.ssdTier().registerStorage("nN", 1L << 30);
        m.ssdTier().reportDiskObjects("nN", List.of(io.tiffin.core.transport.proto.DiskObject.newBuilder()
                .setKey("k").setSize(4096).setVersion(task.getVersion()).build()));

        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(m.ssdTier().pollTasks("nN", 10, 0).deletes()).containsExactly("k");
    }

    @Test
    void aPromotionThatNeverEndsIsReapedAfterTheReleaseTimeout() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.ON_EVICT, 25_000, "nA");
        m.ssdTier().reportDiskObjects("nA", List.of("k"), List.of(4096L));
        assertThat(m.ssdTier().promotionStart("nA", "k").code()).isEqualTo(ErrorCode.OK); // PROMOTION_END never comes
        assertThat(m.usedBytes()).isPositive();

        ticker.advance(release.plusSeconds(1));
        m.releaseStuckPuts();

        assertThat(m.counters().abandonedTasks()).isEqualTo(1);
        assertThat(m.usedBytes()).as("the promotion's buffer").isZero();
        assertThat(m.getReplicaList("k").isOk()).as("still readable from SSD").isTrue();
        assertThat(m.ssdTier().promotionStart("nA", "k").code()).as("may be promoted again").isEqualTo(ErrorCode.OK);
        m.releaseStuckPuts();
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK); // the new promotion writes
    }

    @Test
    void aPromotersDeathLeavesItsBufferOnAnotherNodeInQuarantine() {
        MasterService m = master(TierSettings.OffloadMode.ON_EVICT, 25_000);
        m.mountSegment("sA", "nA", "epA", MiB);
        m.mountSegment("sB", "nB", "epB", 64 * MiB);
        m.ssdTier().registerStorage("nA", 1L << 30);
        m.ssdTier().reportDiskObjects("nA", List.of("k"), List.of(2 * MiB)); // does not fit in nA's own segment
        ReplicaDescriptor target = m.ssdTier().promotionStart("nA", "k").value();
        assertThat(target.segment()).isEqualTo("sB");

        m.forgetNode("nA");

        assertThat(m.keyCount()).as("nothing of k is left").isZero();
        assertThat(m.usedBytes()).as("nA may still be copying into sB").isGreaterThanOrEqualTo(2 * MiB);
        ticker.advance(release.plusSeconds(1));
        m.releaseStuckPuts();
        assertThat(m.usedBytes()).isZero();
    }

    @Test
    void aReadThatFindsNothingKeepsAPromotionsBufferFromNewPuts() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.ON_EVICT, 25_000, "nA");
        m.ssdTier().reportDiskObjects("nA", List.of("k"), List.of(4096L));
        ReplicaDescriptor target = m.ssdTier().promotionStart("nA", "k").value(); // nA copies SSD -> target
        m.ssdTier().evictDiskReplicas("nA", List.of("k"));                         // its backend drops the file meanwhile

        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        KeyResult<List<ReplicaDescriptor>> other = m.putStart("writer", "other", 4096, PutOptions.DEFAULT);

        assertThat(other.value().getFirst().offset()).as("the promotion may still write there")
                .isNotEqualTo(target.offset());
    }

    @Test
    void anUpsertIsRefusedWhileAPromotionWritesTheObject() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.ON_EVICT, 25_000, "nA");
        m.ssdTier().reportDiskObjects("nA", List.of("k"), List.of(4096L));
        ReplicaDescriptor target = m.ssdTier().promotionStart("nA", "k").value();

        assertThat(m.putStart("writer", "k", 4096, PutOptions.DEFAULT.withUpsert(true)).code())
                .as("a node's task, not a put in progress").isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);
        assertThat(m.remove("k", true)).isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);

        assertThat(m.ssdTier().promotionEnd("nA", "k", target.replicaId(), true)).isEqualTo(ErrorCode.OK);
        put(m, "k", 4096, PutOptions.DEFAULT.withUpsert(true));
    }

    @Test
    void aKeyRemovedWhileItsSsdNodeWasAwayDoesNotComeBack() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.ON_EVICT, 25_000, "nN");
        m.ssdTier().reportDiskObjects("nN", List.of("k"), List.of(4096L));
        assertThat(m.remove("k", false)).isEqualTo(ErrorCode.OK); // the delete waits for nN's next poll
        ticker.advance(MasterSettings.defaults().nodeTtl().plusSeconds(1));
        assertThat(m.expireNodes()).containsExactly("nN");         // before it polled

        m.mountSegment("sN2", "nN", "epN", 64 * MiB);              // back: mount, register, report its scan
        m.ssdTier().registerStorage("nN", 1L << 30);
        m.ssdTier().reportDiskObjects("nN", List.of("k"), List.of(4096L));

        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(m.ssdTier().pollTasks("nN", 10, 0).deletes()).containsExactly("k");
        assertThat(m.putStart("writer", "k", 4096, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
    }

    /**
     * An object recovered from node n2's SSD and promoted into n1's memory: when n2 stops gracefully the master drops
     * n2's copy and owes n2 its deletion (the object lives on in n1's memory). When n2 comes back its scan reports the
     * copy: it is not listed again, since the deletion goes out at n2's next poll. It was listed (a recovered object's
     * copy of its own version) and then deleted by n2 anyway, so that once n1 stopped too the object was lost though
     * n1 would have moved its memory copy to SSD had it known the object had no other.
     */
    @Test
    void aCopyWhoseDeletionIsOwedIsNotListedAgainFromTheNodesScan() {
        MasterService m = master(TierSettings.OffloadMode.ON_EVICT, 25_000);
        m.mountSegment("s-n1", "n1", "ep-n1", 64 * MiB);
        m.mountSegment("s-n2", "n2", "ep-n2", 1024); // too small for k: its promotion goes to n1
        m.ssdTier().registerStorage("n2", 1L << 30);
        m.ssdTier().reportDiskObjects("n2", copies(List.of("k"), List.of(7L)), true); // recovered, version 7
        KeyResult<ReplicaDescriptor> promoted = m.ssdTier().promotionStart("n2", "k");
        assertThat(promoted.code()).isEqualTo(ErrorCode.OK);
        assertThat(promoted.value().segment()).as("IN_ORDER places it on n1's segment").isEqualTo("s-n1");
        assertThat(m.ssdTier().promotionEnd("n2", "k", promoted.value().replicaId(), true)).isEqualTo(ErrorCode.OK);
        assertThat(m.getReplicaList("k").value().replicas()).extracting(ReplicaDescriptor::type)
                .containsExactly(ReplicaType.MEMORY, ReplicaType.LOCAL_DISK);

        m.unmountSegment("n2", "s-n2"); // n2 stops gracefully: k lives on in n1's memory
        assertThat(m.getReplicaList("k").value().replicas()).extracting(ReplicaDescriptor::type)
                .containsExactly(ReplicaType.MEMORY);
        m.mountSegment("s-n2b", "n2", "ep-n2", 1024); // back: its scan reports the copy
        m.ssdTier().registerStorage("n2", 1L << 30);
        m.ssdTier().reportDiskObjects("n2", copies(List.of("k"), List.of(7L)), true);

        assertThat(m.getReplicaList("k").value().replicas()).extracting(ReplicaDescriptor::type)
                .as("not listed again: its deletion is owed").containsExactly(ReplicaType.MEMORY);
        assertThat(m.ssdTier().pollTasks("n2", 10, 0).deletes()).containsExactly("k");
    }

    @Test
    void aNodeBackOnAnotherAddressServesItsSsdCopiesThere() {
        MasterService m = master(TierSettings.OffloadMode.ON_EVICT, 25_000);
        m.mountSegment("s-nN", "nN", "ep-nN", 64 * MiB, 1);
        m.ssdTier().registerStorage("nN", 1L << 30);
        m.ssdTier().reportDiskObjects("nN", List.of("k", "lost"), List.of(4096L, 4096L));
        long replicaId = m.getReplicaList("k").value().replicas().getFirst().replicaId();

        m.mountSegment("sN2", "nN", "ep-nN-2", 64 * MiB, 2);      // restarted before node-ttl, on another port
        m.ssdTier().registerStorage("nN", 1L << 30);
        m.ssdTier().reportDiskObjects("nN", List.of("k"), List.of(4096L)); // "lost"'s file went meanwhile

        assertThat(m.getReplicaList("k").value().replicas()).singleElement().satisfies(r -> {
            assertThat(r.type()).isEqualTo(ReplicaType.LOCAL_DISK);
            assertThat(r.endpoint()).isEqualTo("ep-nN-2");
            assertThat(r.replicaId()).isEqualTo(replicaId);
        });
        // a read of it reaches the node, which reports the copy gone (not a dead port until the node expires)
        assertThat(m.getReplicaList("lost").value().replicas().getFirst().endpoint()).isEqualTo("ep-nN-2");
    }

    @Test
    void aRepeatedEvictionNoticeDropsAndCountsOnce() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.ON_EVICT, 25_000, "n1");
        m.ssdTier().reportDiskObjects("n1", List.of("k", "j"), List.of(4096L, 4096L));

        m.ssdTier().evictDiskReplicas("n1", List.of("k"));
        m.ssdTier().evictDiskReplicas("n1", List.of("k", "unknown")); // retried, and a key the master never had

        assertThat(m.counters().diskEvictions()).isEqualTo(1);
        assertThat(m.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(onSsd(m, "j")).isTrue();
    }

    /**
     * Without failover an EXPIRE after the offload reaches the copy's node with its next task poll (version and
     * deadline, for the copy's stamp); a later EXPIRE replaces one not yet polled, and a removal drops it.
     */
    @Test
    void aDeadlineMovedAfterTheOffloadGoesToTheNodeWithItsNextPoll() {
        MasterService m = withSsdNode(TierSettings.OffloadMode.WRITE_THROUGH, 25_000, "n1");
        put(m, "k", 4096, PutOptions.DEFAULT.withTtlMillis(60_000));
        put(m, "gone", 4096, PutOptions.DEFAULT);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).offloads()).hasSize(2);
        m.ssdTier().reportDiskObjects("n1", List.of("k", "gone"), List.of(4096L, 4096L));
        long version = m.getReplicaList("k").value().version();
        long goneVersion = m.getReplicaList("gone").value().version();

        assertThat(m.expire("k", Expiry.SET, 5_000).isOk()).isTrue();
        assertThat(m.expire("k", Expiry.SET, 7_000).isOk()).isTrue();
        assertThat(m.expire("gone", Expiry.SET, 9_000).isOk()).isTrue();
        assertThat(m.remove("gone", true)).isEqualTo(ErrorCode.OK); // forced: the lookup above leased it

        StorageTier.Tasks tasks = m.ssdTier().pollTasks("n1", 10, 0);
        assertThat(tasks.deadlines()).hasSize(1);
        assertThat(tasks.deadlines().getFirst().getKey()).isEqualTo("k");
        assertThat(tasks.deadlines().getFirst().getVersion()).isEqualTo(version);
        assertThat(tasks.deadlines().getFirst().getExpireAtMs()).isEqualTo(ticker.millis() + 7_000);
        assertThat(tasks.deletes()).containsExactly("gone");
        assertThat(tasks.deleteVersions()).as("the removed object's version").containsExactly(goneVersion);
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deadlines()).as("handed out once").isEmpty();

        assertThat(m.expire("k", Expiry.PERSIST, 0).isOk()).isTrue();
        assertThat(m.ssdTier().pollTasks("n1", 10, 0).deadlines()).extracting(d -> d.getExpireAtMs())
                .containsExactly(0L);
    }
}
