package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.coordination.FileStateStore;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.CommitRecord;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.util.ManualTicker;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master that takes over (term 2) from one that died (term 1), with the cluster facts in a state directory: the
 * segment of term 1 awaits its node, which attaches with the commit records its writers left; what the new master
 * rebuilds from them, and how puts started during the recovery meet the recovered objects. The node's data plane is
 * a port nobody listens on (its FORGETs are refused: no process holds records there).
 */
class SegmentAttachmentTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private final ManualTicker ticker = new ManualTicker();
    private final List<AutoCloseable> open = new ArrayList<>();
    private String deadEndpoint;

    @BeforeEach
    void pickAnEndpointNobodyListensOn() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            deadEndpoint = "127.0.0.1:" + s.getLocalPort();
        }
    }

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
    }

    /** A master of the next term over the facts in {@code dir}, recovering what the previous term left. */
    private MasterService takeOver(String self) {
        FileStateStore store = new FileStateStore(dir.resolve("state"));
        open.add(store);
        // eviction (run by the test only) of everything evictable, whenever anything is used
        MasterService master = new MasterService(MasterSettings.defaults().withEviction(0.0, 1.0),
                MasterServiceTest.IN_ORDER, ticker, null);
        TransportClientPool pool = new TransportClientPool("attach-test", TransportSettings.defaults()
                .withHandshakeTimeout(Duration.ofSeconds(1)).withRpcTimeout(Duration.ofSeconds(1)).withIoThreads(1),
                "attach-test", ticker);
        open.add(pool);
        NodeForgets forgets = new NodeForgets(pool, master::term, (n, k, v) -> { });
        open.add(forgets);
        ClusterFacts facts = new ClusterFacts(store, () -> { });
        master.enableFailover(facts, forgets);
        long[] ids = master.idsSoFar();
        master.restore(facts.claim(self, ids[0], ids[1]), 10_000);
        return master;
    }

    /** The term-1 master's death: its state file is let go (the process is gone). */
    private void dies() throws Exception {
        for (AutoCloseable c : open.reversed()) {
            c.close();
        }
        open.clear();
    }

    private static CommitRecord record(String key, ReplicaDescriptor d, long version, long putId, boolean hardPin) {
        return CommitRecord.newBuilder().setKey(key).setOffset(d.offset()).setSize(d.size()).setVersion(version)
                .setPutId(putId).setHardPin(hardPin).build();
    }

    private static Segment segment(long mountEpoch) {
        return segment("s1", "n1", 7, mountEpoch);
    }

    private static Segment segment(String name, String nodeId, long incarnation, long mountEpoch) {
        return Segment.newBuilder().setName(name).setNodeId(nodeId).setCapacity(64 * MiB).setIncarnation(incarnation)
                .setMountEpoch(mountEpoch).build();
    }

    /** Asserts that {@code lookup} is refused for its client to retry: a node may still bring its object back. */
    private static void refusedWhileRecovering(org.assertj.core.api.ThrowableAssert.ThrowingCallable lookup) {
        assertThatThrownBy(lookup).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
            assertThat(e.getMessage()).contains("this master took over moments ago");
        });
    }

    @Test
    void theAttachingNodesRecordsComeBackAndPutsStartedMeanwhileMeetThem() throws Exception {
        MasterService first = takeOver("m1");
        assertThat(first.term()).isEqualTo(1);
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        List<CommitRecord> records = new ArrayList<>();
        for (String key : List.of("kept", "plain", "upserted", "pinned", "revoked")) {
            KeyResult<PutGrant> g = first.putStart("w1", key, 1000, PutOptions.DEFAULT.withHardPin(key.equals("pinned")),
                    key.hashCode());
            assertThat(first.putEnd("w1", key, key.hashCode() | 1)).isEqualTo(ErrorCode.OK);
            records.add(record(key, g.value().replicas().get(0), g.value().version(), key.hashCode(),
                    key.equals("pinned")).toBuilder().setCrc32C(key.hashCode() | 1).build());
        }
        long keptVersion = records.get(0).getVersion();
        ReplicaDescriptor plainReplica = first.getReplicaList("plain").value().replicas().get(0);
        // a record overlapping "kept"'s bytes (an object whose space was reused: never both on one node)
        records.add(records.get(0).toBuilder().setKey("overlapping").setOffset(records.get(0).getOffset() + 64)
                .setVersion(keptVersion + 100).build());
        // written (its record is on the node) but its PutEnd never reached this master
        KeyResult<PutGrant> unended = first.putStart("w1", "unended", 500, PutOptions.DEFAULT, 77);
        records.add(record("unended", unended.value().replicas().get(0), unended.value().version(), 77, false));
        dies();

        MasterService second = takeOver("m2");
        assertThat(second.term()).isEqualTo(2);
        assertThat(second.recovering()).isTrue();
        refusedWhileRecovering(() -> second.getReplicaList("kept")); // its node has not attached yet
        second.mountSegment("s2", "n2", deadEndpoint, 64 * MiB, 9, 1);
        // puts of the same keys while the recovery runs: one still being written, one written and ended (its PutEnd
        // is answered at the recovery's end), and a new key's; upserts wait for the recovery's end, as removals do
        assertThat(second.putStart("w2", "plain", 2000, PutOptions.DEFAULT, 5).code()).isEqualTo(ErrorCode.OK);
        assertThat(second.putStart("w4", "revoked", 2000, PutOptions.DEFAULT, 11).code()).isEqualTo(ErrorCode.OK);
        KeyResult<PutGrant> ended = second.putStart("w3", "upserted", 3000, PutOptions.DEFAULT, 6);
        assertThat(ended.code()).isEqualTo(ErrorCode.OK);
        assertThat(ended.value().version()).as("versions continue above the previous term's")
                .isGreaterThan(keptVersion);
        assertThat(ended.value().yields()).as("granted during the recovery: its records yield").isTrue();
        assertThat(second.putEnd("w3", "upserted")).isEqualTo(ErrorCode.OK);
        assertThat(second.putStart("w3", "fresh", 100, PutOptions.DEFAULT, 8).code()).isEqualTo(ErrorCode.OK);
        assertThat(second.putEnd("w3", "fresh")).isEqualTo(ErrorCode.OK);
        // a put made during the recovery is read after it
        refusedWhileRecovering(() -> second.getReplicaList("upserted"));
        refusedWhileRecovering(() -> second.getReplicaList("fresh"));
        assertThatThrownBy(() -> second.putStart("w2", "kept", 3000, PutOptions.DEFAULT.withUpsert(true), 9))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));
        assertThatThrownBy(() -> second.batchPutStart("w2", List.of("kept"), List.of(3000L),
                PutOptions.DEFAULT.withUpsert(true), List.of(9L)))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));

        assertThatThrownBy(() -> second.putEnd("w1", "unended")).as("its writer's PutEnd, repeated at the new master")
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));
        assertThatThrownBy(() -> second.batchPutEnd("w1", List.of("fresh", "unended"))).as("in a batch too")
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));
        assertThatThrownBy(() -> second.attachSegment(segment(2), 1, records, true, true))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_VERSION));
        int recovered = second.attachSegment(segment(2), 2, records, true, true);
        assertThat(recovered).as("kept, plain, upserted, pinned, revoked, unended").isEqualTo(6);
        assertThat(second.putEnd("w1", "unended")).as("once its record is back").isEqualTo(ErrorCode.OK);
        assertThat(second.recovering()).isFalse();

        ObjectLocation kept = second.getReplicaList("kept").value();
        assertThat(kept.version()).isEqualTo(keptVersion);
        assertThat(kept.crc32c()).as("the checksum comes back with the record").isEqualTo("kept".hashCode() | 1);
        assertThat(kept.replicas()).singleElement().satisfies(d -> {
            assertThat(d.segment()).isEqualTo("s1");
            assertThat(d.offset()).isEqualTo(records.get(0).getOffset());
            assertThat(d.mountEpoch()).as("descriptors of the new mount only").isEqualTo(2);
        });
        assertThat(second.getReplicaList("overlapping").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        // both puts were puts of an existing key: successful no-ops, and the acknowledged objects stay; the one
        // still being written keeps its buffers (and its records on the node) only until its writer ends it
        long used = second.usedBytes();
        assertThat(second.putEnd("w2", "plain")).isEqualTo(ErrorCode.OK);
        await().atMost(Duration.ofSeconds(10)).until(() -> second.usedBytes() < used);
        long usedBeforeRevoke = second.usedBytes();
        assertThat(second.putRevoke("w4", "revoked")).as("a revoke of a yielded put").isEqualTo(ErrorCode.OK);
        await().atMost(Duration.ofSeconds(10)).until(() -> second.usedBytes() < usedBeforeRevoke);
        assertThat(second.getReplicaList("revoked").value().size()).isEqualTo(1000);
        ObjectLocation plain = second.getReplicaList("plain").value();
        assertThat(plain.size()).isEqualTo(1000);
        assertThat(plain.replicas().get(0).offset()).isEqualTo(plainReplica.offset());
        ObjectLocation upserted = second.getReplicaList("upserted").value();
        assertThat(upserted.size()).as("the put ended during the recovery yielded").isEqualTo(1000);
        assertThat(upserted.version()).isEqualTo(records.get(2).getVersion());
        assertThat(second.getReplicaList("fresh").value().size()).isEqualTo(100);
        // upserts are taken again
        KeyResult<PutGrant> upsert = second.putStart("w2", "upserted", 3000, PutOptions.DEFAULT.withUpsert(true)
                .withReplaceLeased(true), 10);
        assertThat(upsert.code()).isEqualTo(ErrorCode.OK);
        assertThat(upsert.value().yields()).isFalse();
        assertThat(second.putEnd("w2", "upserted")).isEqualTo(ErrorCode.OK);
        assertThat(second.getReplicaList("upserted").value().size()).isEqualTo(3000);
        assertThat(second.putStart("w2", "kept", 10, PutOptions.DEFAULT, 7).code())
                .isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
        // a node that attaches late (the recovery is over) must re-mount empty
        assertThatThrownBy(() -> second.attachSegment(segment(3), 2, records, true, true))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));
        // the hard pin travelled with the record: once the leases are over, an eviction of everything leaves it
        ticker.advance(Duration.ofSeconds(11));
        assertThat(second.runEvictionOnce()).isPositive();
        assertThat(second.getReplicaList("pinned").code()).isEqualTo(ErrorCode.OK);
        assertThat(second.getReplicaList("kept").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
    }

    /**
     * For the first {@code master.recovery-read-wait} (2 s) of a recovery, a lookup that needs an object a node may
     * still bring back (a key the master does not know, or one put during the recovery) is refused for the client to
     * retry, in a batch as a whole; lookups of recovered objects are answered. Later in the recovery such lookups
     * answer "not ready" (exist: false), and once the last node has attached, its objects are read.
     */
    @Test
    void lookupsOfObjectsNotBackYetAreRefusedForTheFirstMomentsOfTheRecoveryThenAnsweredNotReady() throws Exception {
        MasterService first = takeOver("m1");
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        first.mountSegment("s3", "n3", deadEndpoint, 64 * MiB, 5, 1);
        String away = "k-away";
        String back = "k-back";
        List<CommitRecord> ofN1 = List.of(CommitRecord.newBuilder().setKey(away).setOffset(0).setSize(1000)
                .setVersion(3).setPutId(1).build());
        List<CommitRecord> ofN3 = List.of(CommitRecord.newBuilder().setKey(back).setOffset(0).setSize(1000)
                .setVersion(4).setPutId(2).build());
        dies();

        MasterService second = takeOver("m2");
        assertThat(second.attachSegment(segment("s3", "n3", 5, 2), 2, ofN3, true, true)).isEqualTo(ofN3.size());
        assertThat(second.recovering()).as("n1 has not attached").isTrue();
        assertThat(second.getReplicaList(back).code()).isEqualTo(ErrorCode.OK);
        assertThat(second.existKey(back).value()).isTrue();
        refusedWhileRecovering(() -> second.getReplicaList(away));
        refusedWhileRecovering(() -> second.existKey(away));
        refusedWhileRecovering(() -> second.batchGetReplicaList(List.of(back, away)));
        refusedWhileRecovering(() -> second.batchExistKey(List.of(back, away)));
        refusedWhileRecovering(() -> second.getReplicaListByRegex("k.*"));
        refusedWhileRecovering(() -> second.getReplicaList("never-written"));
        assertThat(second.putStart("w2", "fresh", 100, PutOptions.DEFAULT, 9).code()).isEqualTo(ErrorCode.OK);
        assertThat(second.putEnd("w2", "fresh")).isEqualTo(ErrorCode.OK);
        refusedWhileRecovering(() -> second.batchGetReplicaList(List.of("fresh")));

        ticker.advance(MasterSettings.defaults().recoveryReadWait());
        assertThat(second.recovering()).as("the recovery itself lasts up to the node TTL").isTrue();
        assertThat(second.getReplicaList(away).code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
        assertThat(second.existKey(away).value()).isFalse();
        assertThat(second.batchGetReplicaList(List.of(back, away, "fresh"))).extracting(KeyResult::code)
                .containsExactly(ErrorCode.OK, ErrorCode.REPLICA_IS_NOT_READY, ErrorCode.REPLICA_IS_NOT_READY);
        assertThat(second.getReplicaListByRegex("k.*")).extracting(ObjectLocation::key).containsExactly(back);

        assertThat(second.attachSegment(segment(2), 2, ofN1, true, true)).isEqualTo(ofN1.size());
        assertThat(second.recovering()).isFalse();
        assertThat(second.getReplicaList(away).value().version()).isEqualTo(3);
        assertThat(second.batchExistKey(List.of(back, away, "fresh", "never-written"))).extracting(KeyResult::value)
                .containsExactly(true, true, true, false);
    }

    /**
     * The previous master may have let clients cache the location of an object it knew; the new one cannot know
     * which. So a forced removal (or replacement) of a recovered object answers only once the longest such reuse
     * has ended, counted from the object's recovery, as if an unknown client had looked it up then.
     */
    @Test
    void aForcedRemovalOfARecoveredObjectWaitsOutWhatThePreviousMasterMayHaveLetClientsCache() throws Exception {
        MasterService first = takeOver("m1");
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        List<CommitRecord> records = List.of(CommitRecord.newBuilder().setKey("k").setOffset(0).setSize(1000)
                .setVersion(3).setPutId(1).build());
        dies();

        MasterService second = takeOver("m2");
        assertThat(second.attachSegment(segment(2), 2, records, true, true)).isEqualTo(1);
        assertThat(second.recovering()).as("its only node is back").isFalse();
        long recovered = ticker.millis();
        CacheHold hold = new CacheHold(42); // even the client that removes it: its cache may hold a location of m1's
        assertThat(second.remove("k", true, hold)).isEqualTo(ErrorCode.OK);
        long window = MasterSettings.defaults().leaseTtl().toMillis() / 2;
        assertThat(hold.untilMillis()).isEqualTo(recovered + window + window / 4 + 1);
    }

    /**
     * The same for an object a new master adopts from a node's SSD scan: the previous master may have let clients
     * cache the copy's location, so a removal (forced or not: the copy's lease ended with that master) waits as long
     * as such a reuse may last, whoever removes it.
     */
    @Test
    void aRemovalOfAnObjectAdoptedFromAnSsdScanWaitsOutWhatThePreviousMasterMayHaveLetClientsCache() throws Exception {
        MasterService second = attachedSayingAScanFollows();
        second.ssdTier().registerStorage("n1", 1L << 30);
        second.ssdTier().reportDiskObjects("n1", List.of(
                io.tiffin.core.transport.proto.DiskObject.newBuilder().setKey("k").setSize(1000).setVersion(20).build(),
                io.tiffin.core.transport.proto.DiskObject.newBuilder().setKey("j").setSize(1000).setVersion(21).build()),
                true);
        long adopted = ticker.millis();
        assertThat(second.recovering()).as("the scan was its only node's last report").isFalse();
        long window = MasterSettings.defaults().leaseTtl().toMillis() / 2;

        CacheHold forced = new CacheHold(42);
        assertThat(second.remove("k", true, forced)).isEqualTo(ErrorCode.OK);
        assertThat(forced.untilMillis()).isEqualTo(adopted + window + window / 4 + 1);
        CacheHold plain = new CacheHold(43);
        assertThat(second.remove("j", false, plain)).isEqualTo(ErrorCode.OK);
        assertThat(plain.untilMillis()).isEqualTo(adopted + window + window / 4 + 1);
    }

    /**
     * A record of a put granted during a recovery ({@code yields}) may be a put of a key whose object a node had not
     * reported yet: at a later takeover it loses to any other record of the key, whatever the versions, in whichever
     * order the nodes attach; of two such records the older put's wins.
     */
    /**
     * After a takeover the attaching node brings a commit record of "k" at version 10 (the promoted replica of an
     * object replaced since, whose FORGET the failed master had not delivered) and its SSD tier a copy of "k" at
     * version 20, the object that replaced it: the newer wins, as between two records; the recovered older object
     * and its memory replica go.
     */
    @Test
    void anSsdCopyNewerThanTheRecoveredObjectReplacesIt() throws Exception {
        MasterService first = takeOver("m1");
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        ReplicaDescriptor space = first.putStart("w1", "space", 1000, PutOptions.DEFAULT, 1).value().replicas().get(0);
        List<CommitRecord> records = List.of(record("k", space, 10, 2, false));
        dies();

        MasterService second = takeOver("m2");
        assertThat(second.attachSegment(segment(2), 2, records, true, true)).isEqualTo(1);
        assertThat(second.getReplicaList("k").value().version()).isEqualTo(10);
        long used = second.usedBytes();
        second.ssdTier().registerStorage("n1", 1L << 30);
        second.ssdTier().reportDiskObjects("n1", List.of(io.tiffin.core.transport.proto.DiskObject.newBuilder()
                .setKey("k").setSize(1000).setVersion(20).build()), true);

        ObjectLocation k = second.getReplicaList("k").value();
        assertThat(k.version()).as("the newer object, from its SSD copy").isEqualTo(20);
        assertThat(k.replicas()).singleElement().satisfies(d -> assertThat(d.type())
                .isEqualTo(io.tiffin.api.ReplicaType.LOCAL_DISK));
        ticker.advance(Duration.ofMinutes(1)); // past the recovered object's lease
        second.releaseDiscarded();
        await().atMost(Duration.ofSeconds(10)).until(() -> second.usedBytes() < used); // once its FORGET is tried
    }

    /** The master of term 2, to which node n1 attached its segment, empty, saying the scan of its SSD tier follows. */
    private MasterService attachedSayingAScanFollows() throws Exception {
        MasterService first = takeOver("m1");
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        dies();
        MasterService second = takeOver("m2");
        assertThat(second.attachSegment(segment(2), 2, List.of(), true, true, true, null)).isZero();
        return second;
    }

    /**
     * A node with an SSD tier attaches and says its scan follows: until the scan's last report, a key only its SSD
     * holds reads "not ready" (retry), not "not found", and the recovery (with its refusals) goes on; the report
     * ends it and the key reads from its copy. Without the flag the recovery ends at the attach, as for an older node.
     */
    @Test
    void theRecoveryWaitsForTheScanOfANodeWhoseAttachSaysOneFollows() throws Exception {
        MasterService second = attachedSayingAScanFollows();
        assertThat(second.recovering()).as("the scan of n1 is awaited").isTrue();
        refusedWhileRecovering(() -> second.getReplicaList("on-ssd"));
        assertThat(second.recoveryEnded()).isNotDone();

        second.ssdTier().registerStorage("n1", 1L << 30);
        second.ssdTier().reportDiskObjects("n1", List.of(io.tiffin.core.transport.proto.DiskObject.newBuilder()
                .setKey("on-ssd").setSize(1000).setVersion(5).build()), false);
        assertThat(second.recovering()).as("a report that is not the scan's last").isTrue();
        second.ssdTier().reportDiskObjects("n1", List.of(), true);

        assertThat(second.recovering()).isFalse();
        assertThat(second.recoveryEnded()).isDone();
        assertThat(second.getReplicaList("on-ssd").value().version()).isEqualTo(5);
        assertThat(second.getReplicaList("nowhere").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
    }

    /** A node that attached saying its scan follows and never sends it holds the recovery no longer than its window. */
    @Test
    void aScanThatNeverComesHoldsTheRecoveryOnlyUntilItsWindowEnds() throws Exception {
        MasterService second = attachedSayingAScanFollows();
        ticker.advance(Duration.ofMillis(9_999));
        assertThat(second.recovering()).isTrue();
        ticker.advance(Duration.ofMillis(1));
        assertThat(second.recovering()).as("the window of 10 s has passed").isFalse();
        assertThat(second.getReplicaList("nowhere").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
    }

    /** The scan awaited of a node whose segment goes meanwhile (unmounted, or its node expired) is not awaited. */
    @Test
    void theScanOfANodeWhoseSegmentWentIsNotAwaited() throws Exception {
        MasterService second = attachedSayingAScanFollows();
        assertThat(second.recovering()).isTrue();
        second.unmountSegment("n1", "s1");
        assertThat(second.recovering()).isFalse();
    }

    @Test
    void aYieldingRecordLosesToAnyOtherRecordOfItsKey() throws Exception {
        MasterService first = takeOver("m1");
        first.mountSegment("s1", "n1", deadEndpoint, 64 * MiB, 7, 1);
        List<ReplicaDescriptor> space = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            KeyResult<PutGrant> g = first.putStart("w1", "space-" + i, 1000, PutOptions.DEFAULT, i + 1);
            space.add(g.value().replicas().get(0)); // six places for the records below (never ended)
        }
        // attached in this order: the yielding record first, then the other (higher, then lower version)
        List<CommitRecord> records = List.of(
                record("a", space.get(0), 50, 1, false).toBuilder().setYields(true).build(),
                record("a", space.get(1), 10, 2, false),
                record("b", space.get(2), 20, 3, false),
                record("b", space.get(3), 60, 4, false).toBuilder().setYields(true).build(),
                record("c", space.get(4), 70, 5, false).toBuilder().setYields(true).build(),
                record("c", space.get(5), 30, 6, false).toBuilder().setYields(true).build());
        dies();

        MasterService second = takeOver("m2");
        assertThat(second.attachSegment(segment(2), 2, records, true, true)).as("a, a, b, c, c").isEqualTo(5);
        assertThat(second.getReplicaList("a").value().version()).as("the yielding record gave way").isEqualTo(10);
        assertThat(second.getReplicaList("b").value().version()).as("the yielding record was dropped").isEqualTo(20);
        assertThat(second.getReplicaList("c").value().version()).as("of two yielding, the older put's")
                .isEqualTo(30);
        assertThat(second.getReplicaList("a").value().replicas()).singleElement()
                .satisfies(d -> assertThat(d.offset()).isEqualTo(space.get(1).offset()));
    }
}
