package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.plugin.allocation.RandomAllocationStrategy;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Master semantics, following the groups of Mooncake's master_service_test. */
class MasterServiceTest {
    private static final long MiB = 1L << 20;
    /** Offers segments in order: deterministic placement for tests. */
    static final AllocationStrategy IN_ORDER = (request, segments, sink) -> {
        for (var s : segments) {
            if (sink.remaining() == 0) {
                return;
            }
            if (s.status() == SegmentStatus.OK) {
                sink.tryPlace(s);
            }
        }
    };

    private ManualTicker ticker;
    private MasterService master;

    @BeforeEach
    void setUp() {
        ticker = new ManualTicker();
        master = new MasterService(MasterSettings.defaults(), IN_ORDER, ticker, null);
    }

    private void mount(String name, long capacity) {
        master.mountSegment(name, "node-" + name, "127.0.0.1:1", capacity);
    }

    private List<ReplicaDescriptor> put(String key, long size, PutOptions options) {
        KeyResult<List<ReplicaDescriptor>> r = master.putStart("c1", key, size, options);
        assertThat(r.code()).as("putStart %s", key).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("c1", key)).isEqualTo(ErrorCode.OK);
        return r.value();
    }

    private List<ReplicaDescriptor> put(String key, long size) {
        return put(key, size, PutOptions.DEFAULT);
    }

    @Nested
    class PutLifecycle {
        @Test
        void putStartThenEndMakesObjectReadableWithVersion() {
            mount("s1", 64 * MiB);
            KeyResult<List<ReplicaDescriptor>> start = master.putStart("c1", "k", 4096, PutOptions.DEFAULT);
            assertThat(start.isOk()).isTrue();
            assertThat(start.value()).hasSize(1);
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(master.existKey("k").value()).isFalse();

            assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
            KeyResult<ObjectLocation> loc = master.getReplicaList("k");
            assertThat(loc.isOk()).isTrue();
            assertThat(loc.value().size()).isEqualTo(4096);
            assertThat(loc.value().version()).isPositive();
            assertThat(loc.value().replicas()).singleElement()
                    .satisfies(d -> assertThat(d.segment()).isEqualTo("s1"));
            assertThat(master.putEnd("c1", "k")).as("PutEnd is idempotent").isEqualTo(ErrorCode.OK);
        }

        @Test
        void versionsGrowWhenAKeyIsRemovedAndPutAgain() {
            mount("s1", 64 * MiB);
            put("k", 100);
            long v1 = master.getReplicaList("k").value().version();
            assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
            put("k", 100);
            assertThat(master.getReplicaList("k").value().version()).isGreaterThan(v1);
        }

        @Test
        void putEndByAnotherClientIsIllegal() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 10, PutOptions.DEFAULT);
            assertThat(master.putEnd("c2", "k")).isEqualTo(ErrorCode.ILLEGAL_CLIENT);
            assertThat(master.putRevoke("c2", "k")).isEqualTo(ErrorCode.ILLEGAL_CLIENT);
            assertThat(master.putEnd("c1", "missing")).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }

        @Test
        void invalidKeysAndSizesAreRejected() {
            mount("s1", 64 * MiB);
            assertThat(master.putStart("c1", "", 10, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.INVALID_KEY);
            assertThat(master.putStart("c1", "x".repeat(4097), 10, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.INVALID_KEY);
            assertThat(master.putStart("c1", "k", -5, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            assertThat(master.getReplicaList("").code()).isEqualTo(ErrorCode.INVALID_KEY);
        }

        @Test
        void anEmptyObjectTakesOneAllocationUnitAndDescribesItselfAsZeroBytes() {
            mount("s1", MiB);
            List<ReplicaDescriptor> replicas = put("empty", 0);
            assertThat(replicas).singleElement().satisfies(r -> assertThat(r.size()).isZero());
            assertThat(master.getReplicaList("empty").value().size()).isZero();
            assertThat(master.segmentViews().getFirst().used()).isEqualTo(MountedSegment.ALIGNMENT);
            List<ReplicaDescriptor> next = put("next", 10);
            assertThat(next.getFirst().offset()).isGreaterThanOrEqualTo(replicas.getFirst().offset() + MountedSegment.ALIGNMENT);
            assertThat(master.remove("empty", true)).isEqualTo(ErrorCode.OK); // forced: the lookup leased it
        }

        @Test
        void noSegmentsMeansNoAvailableHandle() {
            assertThat(master.putStart("c1", "k", 10, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            mount("s1", MiB);
            assertThat(master.putStart("c1", "big", 2 * MiB, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            assertThat(master.counters().allocationFailures()).isEqualTo(2);
        }
    }

    @Nested
    class DuplicatePut {
        @Test
        void putOfACompleteKeyReportsAlreadyExistsAndKeepsTheOldObject() {
            mount("s1", 64 * MiB);
            List<ReplicaDescriptor> first = put("k", 100);
            assertThat(master.putStart("c2", "k", 200, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
            ObjectLocation loc = master.getReplicaList("k").value();
            assertThat(loc.size()).isEqualTo(100);
            assertThat(loc.replicas().get(0).offset()).isEqualTo(first.get(0).offset());
        }

        @Test
        void putOfAKeyBeingWrittenIsNotReadyUntilTheDiscardTimeout() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 100, PutOptions.DEFAULT);
            // not "exists": c1 may still revoke, and c2 would have reported a put with no bytes anywhere
            assertThat(master.putStart("c2", "k", 100, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(master.putStart("c2", "k", 100, PutOptions.DEFAULT, 77).code())
                    .isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            ticker.advance(Duration.ofSeconds(31));
            assertThat(master.putStart("c2", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
            assertThat(master.counters().putStartDiscards()).isEqualTo(1);
            assertThat(master.putEnd("c1", "k")).as("the pre-empted writer lost the key")
                    .isEqualTo(ErrorCode.ILLEGAL_CLIENT);
        }

        @Test
        void aRetriedPutStartOfTheSamePutGetsTheSameReplicasAndIsNeverDoubled() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            PutOptions two = PutOptions.DEFAULT.withReplicas(2);
            KeyResult<PutGrant> first = master.putStart("c1", "k", 1000, two, 42);
            assertThat(first.code()).isEqualTo(ErrorCode.OK);
            long used = master.usedBytes();
            KeyResult<PutGrant> again = master.putStart("c1", "k", 1000, two, 42);
            assertThat(again.code()).as("the same put, its answer lost").isEqualTo(ErrorCode.OK);
            assertThat(again.value()).isEqualTo(first.value());
            assertThat(master.usedBytes()).as("nothing allocated twice").isEqualTo(used);
            assertThat(master.batchPutStart("c1", List.of("k"), List.of(1000L), two, List.of(42L)).get(0).value())
                    .isEqualTo(first.value());
            assertThat(master.putStart("c1", "k", 1000, two, 43).code()).as("another put of the key")
                    .isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
            assertThat(master.putStart("c1", "k", 1000, two, 42).code()).as("done: its bytes are there")
                    .isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
            assertThat(master.getReplicaList("k").value().version()).isEqualTo(first.value().version());
            assertThat(master.keyCount()).isEqualTo(1);
        }

        @Test
        void aPutRevokedByItsWriterLetsTheWaitingPutIn() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 100, PutOptions.DEFAULT, 1);
            assertThat(master.putStart("c2", "k", 100, PutOptions.DEFAULT, 2).code())
                    .isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(master.putRevoke("c1", "k")).isEqualTo(ErrorCode.OK);
            assertThat(master.putStart("c2", "k", 100, PutOptions.DEFAULT, 2).code()).isEqualTo(ErrorCode.OK);
            assertThat(master.putEnd("c2", "k")).isEqualTo(ErrorCode.OK);
        }

        @Test
        void upsertReplacesAnUnleasedObject() {
            mount("s1", 64 * MiB);
            put("k", 100);
            long v1 = master.getReplicaList("k").value().version();
            assertThat(master.putStart("c1", "k", 300, PutOptions.DEFAULT.withUpsert(true)).code())
                    .as("leased by the read above").isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advance(Duration.ofSeconds(11));
            assertThat(master.putStart("c1", "k", 300, PutOptions.DEFAULT.withUpsert(true)).code()).isEqualTo(ErrorCode.OK);
            assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
            ObjectLocation loc = master.getReplicaList("k").value();
            assertThat(loc.size()).isEqualTo(300);
            assertThat(loc.version()).isGreaterThan(v1);
        }
    }

    @Nested
    class Revoke {
        @Test
        void revokeFreesTheBuffersAndForgetsTheKey() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 10 * MiB, PutOptions.DEFAULT);
            assertThat(master.usedBytes()).isGreaterThanOrEqualTo(10 * MiB);
            assertThat(master.putRevoke("c1", "k")).isEqualTo(ErrorCode.OK);
            assertThat(master.usedBytes()).isZero();
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(master.keyCount()).isZero();
        }

        @Test
        void revokeOfACompleteObjectIsInvalidWrite() {
            mount("s1", 64 * MiB);
            put("k", 10);
            assertThat(master.putRevoke("c1", "k")).isEqualTo(ErrorCode.INVALID_WRITE);
            assertThat(master.putRevoke("c1", "nope")).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }
    }

    @Nested
    class Replicas {
        @Test
        void replicasLandOnDistinctSegmentsBestEffort() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            List<ReplicaDescriptor> r = put("k", 100, PutOptions.replicas(3));
            assertThat(r).hasSize(2);
            assertThat(r.stream().map(ReplicaDescriptor::segment).distinct()).hasSize(2);
            assertThat(master.counters().partialAllocations()).isEqualTo(1);
        }

        @Test
        void randomStrategyKeepsReplicasDistinct() {
            MasterService m = new MasterService(MasterSettings.defaults(), new RandomAllocationStrategy(), ticker,
                    new SplittableRandom(7));
            for (int i = 0; i < 5; i++) {
                m.mountSegment("s" + i, "n" + i, "h:" + i, 64 * MiB);
            }
            for (int i = 0; i < 200; i++) {
                List<ReplicaDescriptor> r = m.putStart("c", "k" + i, 1000, PutOptions.replicas(3)).value();
                Set<String> segs = new HashSet<>();
                r.forEach(d -> segs.add(d.segment()));
                assertThat(segs).hasSize(3);
            }
        }

        @Test
        void preferredSegmentIsUsedWhenItFits() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            List<ReplicaDescriptor> r = put("k", 100, PutOptions.DEFAULT.withPreferredSegment("s2"));
            // IN_ORDER ignores preferences; the random strategy honours them:
            MasterService m = new MasterService(MasterSettings.defaults(), new RandomAllocationStrategy(), ticker, null);
            m.mountSegment("a", "n1", "h:1", 64 * MiB);
            m.mountSegment("b", "n2", "h:2", 64 * MiB);
            for (int i = 0; i < 20; i++) {
                assertThat(m.putStart("c", "p" + i, 100, PutOptions.DEFAULT.withPreferredSegment("b")).value())
                        .singleElement().satisfies(d -> assertThat(d.segment()).isEqualTo("b"));
            }
            assertThat(r).hasSize(1);
        }
    }

    @Nested
    class Leaving {
        @Test
        void aNodeThatLeavesEmptyTakesNoObjectAndOneWithObjectsTakesThem() {
            mount("s1-full", 64 * MiB);
            put("k1", 100);
            put("k2", 100);
            mount("s2-used", 64 * MiB);
            mount("s3-unused", 64 * MiB);
            master.unmountSegment("node-s1-full", "s1-full"); // k1, k2 go with it (no sweep skipped)
            put("k3", 100); // lands on s2-used (in order, by mount and by name)
            assertThat(master.getReplicaList("k1").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(master.getReplicaList("k2").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            master.unmountSegment("node-s3-unused", "s3-unused"); // held no allocation: k3 stays
            assertThat(master.getReplicaList("k3").code()).isEqualTo(ErrorCode.OK);
            assertThat(master.keyCount()).isEqualTo(1);
            master.unmountSegment("node-s2-used", "s2-used");
            assertThat(master.getReplicaList("k3").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(master.keyCount()).isZero();
        }
    }

    @Nested
    class Leases {
        @Test
        void readGrantsALeaseThatBlocksRemoveUntilItExpires() {
            mount("s1", 64 * MiB);
            put("k", 100);
            assertThat(master.remove("k", false)).as("PutEnd grants a 0 ms lease").isEqualTo(ErrorCode.OK);
            put("k", 100);
            assertThat(master.getReplicaList("k").value().leaseTtlMillis()).isEqualTo(10_000);
            assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advance(Duration.ofSeconds(9));
            assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advance(Duration.ofSeconds(2));
            assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OK);
        }

        @Test
        void existKeyGrantsALease() {
            mount("s1", 64 * MiB);
            put("k", 100);
            assertThat(master.existKey("k").value()).isTrue();
            assertThat(master.remove("k", false)).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            assertThat(master.existKey("absent").value()).isFalse();
        }

        @Test
        void forceRemovesALeasedObjectButKeepsItsBufferUntilTheLeaseEnds() {
            mount("s1", MiB);
            List<ReplicaDescriptor> first = put("k", 600 * 1024);
            master.getReplicaList("k");
            assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            // The reader may still be copying: a new object must not get the same bytes yet.
            assertThat(master.putStart("c1", "k2", 600 * 1024, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            ticker.advance(Duration.ofSeconds(10));
            master.releaseDiscarded();
            List<ReplicaDescriptor> second = put("k2", 600 * 1024);
            assertThat(second.get(0).offset()).isEqualTo(first.get(0).offset());
        }
    }

    /**
     * Lookups of clients with a location cache ({@code cache_for_ms}): a forced removal is reported only
     * once their reuse has ended, and the key is not put again before that.
     */
    @Nested
    class CachedLocations {
        @Test
        void aForcedRemovalOfACachedObjectWaitsForTheCacheWindowAndAQuarterMore() {
            mount("s1", 64 * MiB);
            put("k", 100);
            long start = ticker.millis();
            assertThat(master.getReplicaList("k", 2_000).isOk()).isTrue();
            CacheHold hold = new CacheHold();
            assertThat(master.remove("k", true, hold)).isEqualTo(ErrorCode.OK);
            assertThat(hold.untilMillis()).isEqualTo(start + 2_000 + 500 + 1);
            assertThat(master.millisUntil(hold.untilMillis())).isEqualTo(2_501);
            assertThat(master.getReplicaList("k").code()).as("gone for lookups at once")
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            ticker.advance(Duration.ofSeconds(1));
            assertThat(master.millisUntil(hold.untilMillis())).isEqualTo(1_501);
            ticker.advance(Duration.ofSeconds(2));
            assertThat(master.millisUntil(hold.untilMillis())).isZero();
        }

        @Test
        void theWindowIsAtMostHalfTheLeaseAndLaterLookupsExtendIt() {
            mount("s1", 64 * MiB);
            put("k", 100);
            long start = ticker.millis();
            master.getReplicaList("k", 60_000); // the lease is 10 s: at most 5 s of reuse
            ticker.advance(Duration.ofSeconds(1));
            master.batchGetReplicaList(List.of("k"), 5_000);
            ticker.advance(Duration.ofSeconds(1));
            master.getReplicaList("k", 100); // a shorter window never shortens the recorded one
            CacheHold hold = new CacheHold();
            assertThat(master.batchRemove(List.of("k"), true, hold)).containsExactly(ErrorCode.OK);
            assertThat(hold.untilMillis()).isEqualTo(start + 1_000 + 5_000 + 1_250 + 1);
        }

        @Test
        void noWindowOutlastsTheClientsBoundWhateverTheLease() {
            master = new MasterService(MasterSettings.defaults().withLeaseTtl(Duration.ofMinutes(5)), IN_ORDER, ticker,
                    null);
            mount("s1", 64 * MiB);
            put("k", 100);
            long start = ticker.millis();
            master.getReplicaList("k", 600_000);
            CacheHold hold = new CacheHold();
            assertThat(master.remove("k", true, hold)).isEqualTo(ErrorCode.OK);
            long bound = io.tiffin.core.client.LocationCache.MAX_REUSE_MILLIS;
            assertThat(hold.untilMillis()).isEqualTo(start + bound + bound / 4 + 1);
        }

        @Test
        void aRemovalByTheOnlyClientThatCachedTheObjectNeedNotWait() {
            mount("s1", 64 * MiB);
            put("k", 100);
            put("j", 100);
            put("x", 100);
            long start = ticker.millis();
            master.getReplicaList("k", 2_000, 7);
            master.batchGetReplicaList(List.of("k"), 2_000, 7);
            CacheHold own = new CacheHold(7);
            assertThat(master.remove("k", true, own)).isEqualTo(ErrorCode.OK);
            assertThat(own.untilMillis()).as("the remover drops its own entries").isZero();
            put("k", 100); // and no hold on puts either

            master.getReplicaList("j", 2_000, 7);
            master.batchGetReplicaList(List.of("j"), 2_000, 8);
            CacheHold shared = new CacheHold(7);
            assertThat(master.batchRemove(List.of("j"), true, shared)).containsExactly(ErrorCode.OK);
            assertThat(shared.untilMillis()).as("another cache holds it too").isEqualTo(start + 2_501);

            master.getReplicaList("x", 2_000, 0);
            CacheHold unknown = new CacheHold(0);
            assertThat(master.remove("x", true, unknown)).isEqualTo(ErrorCode.OK);
            assertThat(unknown.untilMillis()).as("0 names no cache").isEqualTo(start + 2_501);

            put("y", 100);
            master.getReplicaList("y", 2_000, 8);
            ticker.advanceMillis(2_600); // that window is over: the next one is 7's alone
            master.getReplicaList("y", 2_000, 7);
            CacheHold later = new CacheHold(7);
            assertThat(master.remove("y", true, later)).isEqualTo(ErrorCode.OK);
            assertThat(later.untilMillis()).isZero();
        }

        @Test
        void lookupsWithoutACacheAndUnforcedRemovalsHoldNothing() {
            mount("s1", 64 * MiB);
            put("a", 100);
            put("b", 100);
            master.getReplicaList("a");
            master.existKey("a");
            CacheHold hold = new CacheHold();
            assertThat(master.remove("a", true, hold)).isEqualTo(ErrorCode.OK);
            assertThat(hold.untilMillis()).isZero();
            put("a", 100);
            master.getReplicaList("b", 2_000);
            assertThat(master.remove("b", false, hold)).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advance(Duration.ofSeconds(11));
            assertThat(master.remove("b", false, hold)).isEqualTo(ErrorCode.OK);
            assertThat(hold.untilMillis()).as("the window ended with the lease").isZero();
        }

        @Test
        void theKeyCannotBePutAgainUntilTheWindowEnds() {
            mount("s1", 64 * MiB);
            put("k", 100);
            put("other", 100);
            master.getReplicaList("k", 2_000);
            assertThat(master.remove("k", true)).isEqualTo(ErrorCode.OK);
            assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            assertThat(master.batchPutStart("c1", List.of("k", "new"), List.of(100L, 100L), PutOptions.DEFAULT))
                    .extracting(KeyResult::code).containsExactly(ErrorCode.OBJECT_HAS_LEASE, ErrorCode.OK);
            ticker.advanceMillis(2_400);
            assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advanceMillis(102);
            put("k", 100);
            assertThat(master.getReplicaList("k").isOk()).isTrue();
        }

        @Test
        void regexAndRemoveAllHoldForTheLatestWindowOfWhatTheyRemoved() {
            mount("s1", 64 * MiB);
            put("t/1", 100);
            put("t/2", 100);
            put("u/1", 100);
            long start = ticker.millis();
            master.getReplicaList("t/1", 1_000);
            master.getReplicaList("u/1", 4_000);
            CacheHold hold = new CacheHold();
            assertThat(master.removeByRegex("^t/", true, hold)).isEqualTo(2);
            assertThat(hold.untilMillis()).isEqualTo(start + 1_000 + 250 + 1);
            CacheHold all = new CacheHold();
            assertThat(master.removeAll(true, all)).isEqualTo(1);
            assertThat(all.untilMillis()).isEqualTo(start + 4_000 + 1_000 + 1);
        }

        /**
         * A forced replacement's answer waits for the windows of the object it replaced. If a second write of the key
         * comes before that answer (another writer, or the first one after its answer was lost), the object it
         * replaces is the first replacement, which nobody cached: its answer must still wait for the windows of the
         * object before, or a client reading through such a window would read the old bytes after that write returned.
         */
        @Test
        void aWriteAfterAForcedReplacementWaitsForTheWindowsOfTheObjectItReplaced() {
            mount("s1", 64 * MiB);
            PutOptions forced = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
            put("k", 100);
            long start = ticker.millis();
            assertThat(master.getReplicaList("k", 2_000, 7).isOk()).isTrue();
            ticker.advanceMillis(10);
            assertThat(master.putStart("w1", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold first = new CacheHold(1);
            assertThat(master.putEnd("w1", "k", 0, first)).isEqualTo(ErrorCode.OK);
            assertThat(first.untilMillis()).isEqualTo(start + 2_501);

            assertThat(master.putStart("w2", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold second = new CacheHold(2);
            assertThat(master.putEnd("w2", "k", 0, second)).isEqualTo(ErrorCode.OK);
            assertThat(second.untilMillis()).as("the replacement's PutEnd").isEqualTo(start + 2_501);

            CacheHold removal = new CacheHold(2);
            assertThat(master.remove("k", true, removal)).isEqualTo(ErrorCode.OK);
            assertThat(removal.untilMillis()).as("a forced removal of the key").isEqualTo(start + 2_501);

            assertThat(master.putStart("w3", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold absent = new CacheHold(3);
            assertThat(master.putEnd("w3", "k", 0, absent)).isEqualTo(ErrorCode.OK);
            assertThat(absent.untilMillis()).as("a forced put of the key, gone meanwhile").isEqualTo(start + 2_501);

            ticker.advanceMillis(2_500);
            put("j", 100);
            assertThat(master.putStart("w4", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold later = new CacheHold(4);
            assertThat(master.putEnd("w4", "k", 0, later)).isEqualTo(ErrorCode.OK);
            assertThat(later.untilMillis()).as("once the windows have ended").isZero();
        }

        /** A replacement by the client whose cache alone holds the object waits for nothing, nor do later writes. */
        @Test
        void aReplacementByTheOnlyClientThatCachedTheObjectLeavesNoHoldOnTheKey() {
            mount("s1", 64 * MiB);
            PutOptions forced = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
            put("k", 100);
            master.getReplicaList("k", 2_000, 7);
            assertThat(master.putStart("w1", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold own = new CacheHold(7);
            assertThat(master.putEnd("w1", "k", 0, own)).isEqualTo(ErrorCode.OK);
            assertThat(own.untilMillis()).isZero();
            assertThat(master.putStart("w2", "k", 100, forced).code()).isEqualTo(ErrorCode.OK);
            CacheHold other = new CacheHold(8);
            assertThat(master.putEnd("w2", "k", 0, other)).isEqualTo(ErrorCode.OK);
            assertThat(other.untilMillis()).isZero();
        }

        @Test
        void aLaterRemovalOfAKeyThatIsGoneButStillCachedWaitsLikeTheFirst() {
            mount("s1", 64 * MiB);
            put("k", 100);
            long start = ticker.millis();
            master.getReplicaList("k", 2_000);
            CacheHold first = new CacheHold();
            assertThat(master.remove("k", true, first)).isEqualTo(ErrorCode.OK);
            assertThat(first.untilMillis()).isEqualTo(start + 2_501);
            ticker.advanceMillis(10);
            // "not found" only once the reader can no longer read it: as the first removal's answer
            CacheHold second = new CacheHold();
            assertThat(master.remove("k", false, second)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            CacheHold batch = new CacheHold();
            assertThat(master.batchRemove(List.of("k", "never"), true, batch))
                    .containsExactly(ErrorCode.OBJECT_NOT_FOUND, ErrorCode.OBJECT_NOT_FOUND);
            CacheHold all = new CacheHold();
            assertThat(master.removeAll(true, all)).isZero();
            CacheHold regex = new CacheHold();
            assertThat(master.removeByRegex("^k", true, regex)).isZero();
            CacheHold otherKeys = new CacheHold();
            assertThat(master.removeByRegex("^x", true, otherKeys)).isZero();
            assertThat(List.of(second, batch, all, regex)).extracting(CacheHold::untilMillis)
                    .containsOnly(start + 2_501);
            assertThat(otherKeys.untilMillis()).isZero();
            ticker.advanceMillis(2_500);
            CacheHold later = new CacheHold();
            assertThat(master.remove("k", true, later)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(later.untilMillis()).isZero();
        }

        @Test
        void aRestartedMasterCompletesPutsOnlyOnceLocationsCachedFromItsPreviousRunHaveExpired() {
            long start = ticker.millis();
            master.mountSegment("fresh", "node-fresh", "127.0.0.1:1", 64 * MiB, 1, 1);
            assertThat(master.restartGuardUntilMillis()).as("a first mount: no previous run").isZero();
            ticker.advanceMillis(300);
            master.mountSegment("old", "node-old", "127.0.0.1:2", 64 * MiB, 1, 3); // mounted to a previous run
            assertThat(master.restartGuardUntilMillis()).isEqualTo(start + 5_000 + 1_250 + 1);
            MasterService same = new MasterService(MasterSettings.defaults(), IN_ORDER, ticker, null);
            same.mountSegment("n", "node-n", "127.0.0.1:3", 64 * MiB, 1, 1);
            same.forgetNode("node-n");
            same.mountSegment("n", "node-n", "127.0.0.1:3", 64 * MiB, 1, 2); // re-mounts after this master forgot it
            assertThat(same.restartGuardUntilMillis()).as("not a restart: this master knew the node").isZero();

            // removals answer after it too, whatever they find: the previous run's objects are unknown here
            long guard = master.restartGuardUntilMillis();
            put("new", 100);
            CacheHold missing = new CacheHold();
            assertThat(master.remove("old-key", true, missing)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            CacheHold found = new CacheHold();
            assertThat(master.batchRemove(List.of("new"), true, found)).containsExactly(ErrorCode.OK);
            CacheHold all = new CacheHold();
            assertThat(master.removeAll(true, all)).isZero();
            assertThat(List.of(missing, found, all)).extracting(CacheHold::untilMillis).containsOnly(guard);
            ticker.advanceMillis(guard - ticker.millis());
            CacheHold after = new CacheHold();
            assertThat(master.remove("old-key", true, after)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(after.untilMillis()).isZero();

            MasterService late = new MasterService(MasterSettings.defaults(), IN_ORDER, ticker, null);
            ticker.advanceMillis(6_252);
            late.mountSegment("old", "node-old", "127.0.0.1:2", 64 * MiB, 1, 4); // a re-mount long after start
            assertThat(late.restartGuardUntilMillis()).as("nothing cached can be that old").isZero();
        }

        @Test
        void anObjectLostWithItsNodeIsNotReplacedWhileItMayStillBeReadThroughACache() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            put("k", 100, PutOptions.DEFAULT.withPreferredSegment("s1"));
            ticker.advance(Duration.ofSeconds(9));
            master.ping("node-s2");
            master.getReplicaList("k", 4_000); // cached until 9 s + 5 s + 1 ms
            ticker.advance(Duration.ofSeconds(2));
            master.ping("node-s2");
            assertThat(master.expireNodes()).containsExactly("node-s1");
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            // the silent node may still be serving the old bytes to a client that cached their location
            assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advanceMillis(3_000);
            assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            ticker.advanceMillis(500);
            master.ping("node-s2");
            assertThat(master.releaseStuckPuts()).isZero(); // also drops the passed hold
            put("k", 100);
        }
    }

    @Nested
    class Remove {
        @Test
        void removeOfAMissingKeyIsNotFound() {
            assertThat(master.remove("nope", false)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }

        @Test
        void removeOfAnObjectBeingWrittenIsNotReadyEvenWithForce() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 10, PutOptions.DEFAULT);
            assertThat(master.remove("k", false)).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
            assertThat(master.remove("k", true)).isEqualTo(ErrorCode.REPLICA_IS_NOT_READY);
        }

        @Test
        void removeAllSkipsLeasedObjectsUnlessForced() {
            mount("s1", 64 * MiB);
            for (int i = 0; i < 10; i++) {
                put("k" + i, 100);
            }
            master.getReplicaList("k3");
            master.getReplicaList("k4");
            assertThat(master.removeAll(false)).isEqualTo(8);
            assertThat(master.keyCount()).isEqualTo(2);
            long usedByTwo = master.usedBytes();
            assertThat(master.removeAll(true)).isEqualTo(2);
            assertThat(master.keyCount()).isZero();
            assertThat(master.usedBytes()).as("leased buffers stay quarantined until the lease ends")
                    .isEqualTo(usedByTwo);
            ticker.advance(Duration.ofSeconds(10));
            assertThat(master.releaseDiscarded()).isEqualTo(2);
            assertThat(master.usedBytes()).isZero();
        }

        @Test
        void batchRemoveReportsPerKeyCodesInOrder() {
            mount("s1", 64 * MiB);
            put("a", 1);
            put("b", 1);
            master.getReplicaList("b");
            master.putStart("c1", "c", 1, PutOptions.DEFAULT);
            assertThat(master.batchRemove(List.of("a", "b", "c", "d", ""), false)).containsExactly(
                    ErrorCode.OK, ErrorCode.OBJECT_HAS_LEASE, ErrorCode.REPLICA_IS_NOT_READY,
                    ErrorCode.OBJECT_NOT_FOUND, ErrorCode.INVALID_KEY);
        }
    }

    @Nested
    class Regex {
        @Test
        void removeByRegexRemovesOnlyMatchingUnleasedKeys() {
            mount("s1", 64 * MiB);
            for (int t = 0; t < 3; t++) {
                for (int i = 0; i < 5; i++) {
                    put("tenant_" + t + "/session_" + i, 10);
                }
            }
            master.getReplicaList("tenant_1/session_0");
            assertThat(master.removeByRegex("^tenant_1/", false)).isEqualTo(4);
            assertThat(master.removeByRegex("^tenant_1/", true)).isEqualTo(1);
            assertThat(master.keyCount()).isEqualTo(10);
            assertThat(master.getReplicaListByRegex("session_[34]$")).extracting(ObjectLocation::key)
                    .containsExactly("tenant_0/session_3", "tenant_0/session_4", "tenant_2/session_3",
                            "tenant_2/session_4");
        }

        @Test
        void invalidOrHugeRegexIsInvalidParams() {
            assertThatThrownBy(() -> master.removeByRegex("(unclosed", false))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
            assertThatThrownBy(() -> master.getReplicaListByRegex("a".repeat(5000)))
                    .isInstanceOf(TiffinException.class);
        }

        @Test
        void catastrophicBacktrackingPatternRunsInLinearTime() {
            mount("s1", 64 * MiB);
            put("a".repeat(3000) + "!", 10);
            long start = System.nanoTime();
            assertThat(master.getReplicaListByRegex("^(a+)+$")).isEmpty();
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        }
    }

    @Nested
    class Eviction {
        private MasterService evicting(double hw, double ratio) {
            return new MasterService(MasterSettings.defaults().withEviction(hw, ratio), IN_ORDER, ticker, null);
        }

        @Test
        void nothingIsEvictedBelowTheHighWatermark() {
            MasterService m = evicting(0.9, 0.05);
            m.mountSegment("s", "n", "h:1", 100 * MiB);
            for (int i = 0; i < 50; i++) {
                m.putStart("c", "k" + i, MiB, PutOptions.DEFAULT);
                m.putEnd("c", "k" + i);
            }
            assertThat(m.runEvictionOnce()).isZero();
        }

        @Test
        void aPutLargerThanEverySegmentEvictsNothing() {
            MasterService m = evicting(0.9, 0.05);
            m.mountSegment("s", "n", "h:1", 16 * MiB);
            m.mountSegment("t", "n2", "h:2", 32 * MiB);
            m.putStart("c", "small", 9, PutOptions.DEFAULT);
            m.putEnd("c", "small");
            ticker.advance(Duration.ofSeconds(11));
            // no eviction can make room for it: it must not cost the cluster its objects
            assertThat(m.putStart("c", "huge", 33 * MiB, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            assertThat(m.runEvictionOnce()).isZero();
            assertThat(m.getReplicaList("small").isOk()).isTrue();
            // one that fits a segment once others leave does trigger a pass
            m.putStart("c", "fill", 31 * MiB, PutOptions.DEFAULT);
            m.putEnd("c", "fill");
            ticker.advance(Duration.ofSeconds(11));
            assertThat(m.putStart("c", "big", 20 * MiB, PutOptions.DEFAULT).code())
                    .isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            assertThat(m.runEvictionOnce()).isPositive();
        }

        @Test
        void evictsTheOldestLeasesFirstAboveTheWatermark() {
            MasterService m = evicting(0.5, 0.2);
            m.mountSegment("s", "n", "h:1", 16 * MiB);
            for (int i = 0; i < 10; i++) {
                m.putStart("c", "k" + i, MiB, PutOptions.DEFAULT);
                m.putEnd("c", "k" + i);
                ticker.advanceMillis(1);
            }
            // Read k0..k4 later so they are the most recently used.
            ticker.advance(Duration.ofSeconds(20));
            for (int i = 0; i < 5; i++) {
                m.getReplicaList("k" + i);
                ticker.advanceMillis(1);
            }
            ticker.advance(Duration.ofSeconds(11)); // leases expired; order stays by lease time
            int evicted = m.runEvictionOnce();
            assertThat(evicted).isGreaterThan(0);
            for (int i = 5; i < 5 + evicted && i < 10; i++) {
                assertThat(m.getReplicaList("k" + i).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            }
            assertThat(m.getReplicaList("k0").isOk()).isTrue();
            assertThat(m.counters().evictedKeys()).isEqualTo(evicted);
        }

        @Test
        void leasedAndHardPinnedObjectsAreNeverEvicted() {
            MasterService m = evicting(0.1, 1.0);
            m.mountSegment("s", "n", "h:1", 16 * MiB);
            m.putStart("c", "pinned", MiB, PutOptions.DEFAULT.withHardPin(true));
            m.putEnd("c", "pinned");
            m.putStart("c", "leased", MiB, PutOptions.DEFAULT);
            m.putEnd("c", "leased");
            m.putStart("c", "plain", MiB, PutOptions.DEFAULT);
            m.putEnd("c", "plain");
            ticker.advanceMillis(1);
            m.getReplicaList("leased");
            assertThat(m.runEvictionOnce()).isEqualTo(1);
            assertThat(m.getReplicaList("plain").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(m.getReplicaList("pinned").isOk()).isTrue();
            assertThat(m.getReplicaList("leased").isOk()).isTrue();
        }

        @Test
        void softPinnedObjectsGoOnlyInTheSecondPass() {
            MasterService m = evicting(0.1, 0.5);
            m.mountSegment("s", "n", "h:1", 16 * MiB);
            for (int i = 0; i < 4; i++) {
                m.putStart("c", "soft" + i, MiB, PutOptions.DEFAULT.withSoftPin(true));
                m.putEnd("c", "soft" + i);
            }
            m.putStart("c", "plain", MiB, PutOptions.DEFAULT);
            m.putEnd("c", "plain");
            ticker.advanceMillis(1);
            // base 5, target max(0.5, used-hw+0.5) ~ 0.5: ideal 3 but only 1 plain candidate, lower bound
            // forces soft-pinned objects out in pass 2.
            int evicted = m.runEvictionOnce();
            assertThat(m.getReplicaList("plain").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(evicted).isGreaterThan(1);

            MasterService keep = new MasterService(MasterSettings.defaults().withEviction(0.1, 0.5)
                    .withAllowEvictSoftPinned(false), IN_ORDER, ticker, null);
            keep.mountSegment("s", "n", "h:1", 16 * MiB);
            for (int i = 0; i < 4; i++) {
                keep.putStart("c", "soft" + i, MiB, PutOptions.DEFAULT.withSoftPin(true));
                keep.putEnd("c", "soft" + i);
            }
            ticker.advanceMillis(1);
            assertThat(keep.runEvictionOnce()).isZero();
            assertThat(keep.keyCount()).isEqualTo(4);
        }

        @Test
        void aFailedAllocationTriggersEvictionBelowTheWatermark() {
            MasterService m = evicting(0.99, 0.5);
            m.mountSegment("s", "n", "h:1", 8 * MiB);
            for (int i = 0; i < 3; i++) {
                m.putStart("c", "k" + i, 2 * MiB, PutOptions.DEFAULT);
                m.putEnd("c", "k" + i);
            }
            ticker.advanceMillis(1);
            assertThat(m.runEvictionOnce()).isZero();
            assertThat(m.putStart("c", "big", 5 * MiB, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE);
            assertThat(m.runEvictionOnce()).isPositive();
        }
    }

    @Nested
    class Liveness {
        @Test
        void unknownNodeMustRemount() {
            assertThat(master.ping("ghost")).isFalse();
            mount("s1", MiB);
            assertThat(master.ping("node-s1")).isTrue();
        }

        @Test
        void silentNodeLosesItsSegmentsAndObjectsAfterTheTtl() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            put("both", 100, PutOptions.replicas(2));
            put("only1", 100, PutOptions.DEFAULT.withPreferredSegment("s1"));
            ticker.advance(Duration.ofSeconds(5));
            master.ping("node-s2");
            ticker.advance(Duration.ofSeconds(6));
            assertThat(master.expireNodes()).containsExactly("node-s1");
            assertThat(master.segmentViews()).extracting(v -> v.name()).containsExactly("s2");
            assertThat(master.getReplicaList("both").value().replicas()).singleElement()
                    .satisfies(d -> assertThat(d.segment()).isEqualTo("s2"));
            assertThat(master.getReplicaList("only1").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(master.ping("node-s1")).as("expired node must re-mount").isFalse();
        }

        @Test
        void remountAfterExpiryBringsAnEmptySegmentBack() {
            mount("s1", 64 * MiB);
            put("k", 100);
            ticker.advance(Duration.ofSeconds(11));
            master.expireNodes();
            assertThat(master.capacityBytes()).isZero();
            mount("s1", 64 * MiB);
            assertThat(master.ping("node-s1")).isTrue();
            assertThat(master.capacityBytes()).isEqualTo(64 * MiB);
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            put("k", 100);
        }

        @Test
        void descriptorsCarryTheEpochOfTheSegmentsLatestMount() {
            master.mountSegment("e1", "node-e1", "h:1", 64 * MiB, 7, 1);
            put("k", 100);
            assertThat(master.getReplicaList("k").value().replicas()).singleElement()
                    .satisfies(d -> assertThat(d.mountEpoch()).isEqualTo(1));
            // A repeated mount of a segment the master still knows keeps its objects, under the new epoch.
            master.mountSegment("e1", "node-e1", "h:1", 64 * MiB, 7, 2);
            assertThat(master.getReplicaList("k").value().replicas()).singleElement()
                    .satisfies(d -> assertThat(d.mountEpoch()).isEqualTo(2));
            master.mountSegment("e1", "node-e1", "h:1", 64 * MiB, 7, 0);
            assertThat(master.getReplicaList("k").value().replicas()).singleElement()
                    .as("0 (unknown) does not move the epoch").satisfies(d -> assertThat(d.mountEpoch()).isEqualTo(2));
        }

        @Test
        void mountIsIdempotentAndNamesAreOwned() {
            mount("s1", 64 * MiB);
            mount("s1", 64 * MiB);
            assertThat(master.segmentViews()).hasSize(1);
            assertThatThrownBy(() -> master.mountSegment("s1", "other", "h:2", MiB))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
            assertThatThrownBy(() -> master.mountSegment("s9", "n", "h:2", 0)).isInstanceOf(TiffinException.class);
        }

        @Test
        void aNodeThatUnmountsItsLastSegmentIsNoLongerLive() {
            mount("s1", 64 * MiB);
            mount("s2", 64 * MiB);
            master.unmountSegment("node-s1", "s1");
            assertThat(master.liveNodes()).containsExactly("node-s2");
            assertThat(master.ping("node-s1")).as("a node that left must mount again").isFalse();
        }

        @Test
        void unmountHidesReplicasAtOnce() {
            mount("s1", 64 * MiB);
            put("k", 100);
            master.unmountSegment("node-s1", "s1");
            assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            master.unmountSegment("node-s1", "s1"); // idempotent
        }
    }

    @Nested
    class StuckPuts {
        @Test
        void stuckPutIsReleasedAfterThePutTimeout() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 10 * MiB, PutOptions.DEFAULT);
            ticker.advance(Duration.ofSeconds(59)); // master.put-timeout: 60 s
            assertThat(master.releaseStuckPuts()).isZero();
            ticker.advance(Duration.ofSeconds(2));
            assertThat(master.releaseStuckPuts()).isEqualTo(1);
            assertThat(master.usedBytes()).isZero();
            assertThat(master.keyCount()).isZero();
        }

        @Test
        void preemptedPutKeepsItsBuffersUntilReleased() {
            mount("s1", 64 * MiB);
            master.putStart("c1", "k", 10 * MiB, PutOptions.DEFAULT);
            long usedByOne = master.usedBytes();
            ticker.advance(Duration.ofSeconds(31));
            assertThat(master.putStart("c2", "k", 10 * MiB, PutOptions.DEFAULT).isOk()).isTrue();
            assertThat(master.usedBytes()).isEqualTo(2 * usedByOne);
            ticker.advance(Duration.ofSeconds(570));
            master.putEnd("c2", "k");
            master.releaseStuckPuts();
            assertThat(master.usedBytes()).isEqualTo(usedByOne);
        }
    }

    @Nested
    class Batches {
        @Test
        void batchCallsKeepRequestOrderAcrossShards() {
            mount("s1", 64 * MiB);
            List<String> keys = new java.util.ArrayList<>();
            List<Long> sizes = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                keys.add("key-" + i);
                sizes.add(100L + i);
            }
            var starts = master.batchPutStart("c1", keys, sizes, PutOptions.DEFAULT);
            assertThat(starts).extracting(KeyResult::key).containsExactlyElementsOf(keys);
            assertThat(master.batchPutEnd("c1", keys)).containsOnly(ErrorCode.OK);
            var locs = master.batchGetReplicaList(keys);
            for (int i = 0; i < keys.size(); i++) {
                assertThat(locs.get(i).value().size()).isEqualTo(100L + i);
            }
            var mixed = master.batchExistKey(List.of("key-1", "absent", "key-99"));
            assertThat(mixed).extracting(KeyResult::value).containsExactly(true, false, true);
        }

        @Test
        void batchPutStartWithMismatchedSizesIsInvalid() {
            assertThatThrownBy(() -> master.batchPutStart("c", List.of("a"), List.of(), PutOptions.DEFAULT))
                    .isInstanceOf(TiffinException.class);
        }
    }
}
