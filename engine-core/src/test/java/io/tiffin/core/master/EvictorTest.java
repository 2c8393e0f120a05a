package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ReplicaStatus;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The {@link Evictor} alone on an {@link ObjectTable} filled by hand (no puts): the watermark, the census,
 * both passes in lease order, what is never a candidate, and what happens to a candidate with an SSD copy
 * or with on-evict offload.
 */
class EvictorTest {
    private static final long KiB = 1024;
    /** 16 objects of this size fill the segment. */
    private static final long OBJECT = 64 * KiB;

    private final ManualTicker ticker = new ManualTicker();
    private final MasterCounters counters = new MasterCounters();
    private final SegmentRegistry segments = new SegmentRegistry();
    private final ObjectTable table = new ObjectTable(ticker, 4096);
    private final ReplicaPlacement placement = new ReplicaPlacement(MasterServiceTest.IN_ORDER, segments, null);
    private final Quarantine quarantine = new Quarantine(ticker, 600_000);
    private final AtomicInteger stuckPutReleases = new AtomicInteger();
    private MountedSegment segment;
    private TierCoordinator tier;

    private Evictor evictor(MasterSettings settings) {
        segments.mount("s", "n", "ep", 16 * OBJECT, 0, 0, Long.MAX_VALUE);
        segment = segments.get("s");
        tier = new TierCoordinator(settings.tier(), table, segments, placement, quarantine, counters, ticker,
                new PutDeadlines(settings.putTimeout().toMillis(), settings.putStartReleaseTimeout().toMillis()),
                new DiskFloors(), settings.leaseTtl().toMillis());
        return new Evictor(settings, table, segments, placement, quarantine, tier, stuckPutReleases::incrementAndGet,
                counters, ticker);
    }

    private Evictor evictor() {
        return evictor(MasterSettings.defaults()); // high watermark 0.9, ratio 0.05
    }

    /** A complete object whose lease ended at {@code leaseEnd} (the census orders by it). */
    private ObjectMetadata object(String key, long leaseEnd) {
        return object(key, leaseEnd, false, 0);
    }

    private ObjectMetadata object(String key, long leaseEnd, boolean hardPin, long softPinDeadline) {
        return object(key, leaseEnd, hardPin, softPinDeadline, true);
    }

    /** An object as {@link #object(String, long, boolean, long)}, still being written unless {@code complete}. */
    private ObjectMetadata object(String key, long leaseEnd, boolean hardPin, long softPinDeadline, boolean complete) {
        long handle = segment.allocate(OBJECT, "k");
        assertThat(handle).as("room for %s", key).isNotNegative();
        ReplicaRecord r = new ReplicaRecord(table.nextReplicaId(), segment, handle, segment.offset(handle));
        r.status(ReplicaStatus.COMPLETE);
        ObjectMetadata m = new ObjectMetadata(key, "writer", OBJECT, 0, hardPin, softPinDeadline != 0, List.of(r));
        if (complete) {
            m.complete();
        }
        m.leaseTimeoutMillis = leaseEnd;
        m.softPinUntil(softPinDeadline);
        table.inShard(key, shard -> {
            table.insert(shard, m);
            return null;
        });
        return m;
    }

    /** Fills the segment with k0..k15, k0's lease the oldest. */
    private List<ObjectMetadata> fill() {
        List<ObjectMetadata> all = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            all.add(object("k" + i, i));
        }
        return all;
    }

    private boolean present(String key) {
        return table.inShard(key, shard -> shard.objects.containsKey(key));
    }

    @Test
    void belowTheWatermarkNothingGoesButDueQuarantinedBuffersAreFreed() {
        Evictor evictor = evictor();
        ObjectMetadata gone = object("gone", 0);
        for (int i = 0; i < 13; i++) {
            object("k" + i, 0);
        }
        quarantine.addAll(gone.replicas(), gone.version, ticker.millis());
        assertThat(segment.used()).isEqualTo(14 * OBJECT); // 87.5 %

        assertThat(evictor.runEvictionOnce()).isZero();

        assertThat(segment.used()).as("the quarantined buffer was due").isEqualTo(13 * OBJECT);
        assertThat(table.keyCount()).isEqualTo(14);
        assertThat(stuckPutReleases).as("no pass ran").hasValue(0);
        assertThat(counters.evictionRuns()).isZero();
    }

    @Test
    void aFullSegmentLosesTheTargetShareOfItsObjectsOldestLeaseFirst() {
        Evictor evictor = evictor();
        fill();
        // used 1.0: target = max(0.05, 1.0 - 0.9 + 0.05) = 0.15 of 16 objects, rounded up: 3
        assertThat(evictor.runEvictionOnce()).isEqualTo(3);

        assertThat(List.of("k0", "k1", "k2")).noneMatch(this::present);
        assertThat(present("k3")).isTrue();
        assertThat(segment.used()).isEqualTo(13 * OBJECT);
        assertThat(stuckPutReleases).as("stuck puts go first in a pass that evicts").hasValue(1);
        assertThat(counters.evictionRuns()).isEqualTo(1);
        assertThat(counters.evictedKeys()).isEqualTo(3);
        assertThat(counters.evictedBytes()).isEqualTo(3 * OBJECT);
    }

    @Test
    void theOldestGoFirstAcrossAgeBucketsAndInLeaseOrderWithinTheBoundaryOne() {
        Evictor evictor = evictor();
        long now = ticker.millis();
        object("a", now - 400_000); // far older than the rest: buckets of their own
        object("b", now - 200_000);
        object("c", now - 100_003); // c, d, e: one bucket (ages within 1/32 of each other), c's lease the oldest
        object("d", now - 100_002);
        object("e", now - 100_001);
        for (int i = 0; i < 11; i++) {
            object("young" + i, now - 1_000 - i);
        }
        // used 1.0: 3 of 16 go
        assertThat(evictor.runEvictionOnce()).isEqualTo(3);
        assertThat(List.of("a", "b", "c")).noneMatch(this::present);
        assertThat(List.of("d", "e", "young0", "young10")).allMatch(this::present);
    }

    @Test
    void leasedObjectsCountInTheCensusButAreNotCandidates() {
        Evictor evictor = evictor();
        List<ObjectMetadata> all = fill();
        for (int i = 0; i < 3; i++) {
            all.get(i).leaseTimeoutMillis = ticker.millis() + 1; // being read
        }
        assertThat(evictor.runEvictionOnce()).isEqualTo(3);
        assertThat(List.of("k0", "k1", "k2")).allMatch(this::present);
        assertThat(List.of("k3", "k4", "k5")).noneMatch(this::present);
    }

    @Test
    void hardPinnedUnfinishedAndOffloadingObjectsAreLeftOutOfTheCensus() {
        Evictor evictor = evictor();
        object("pinned", 0, true, 0);
        object("writing", 0, false, 0, false);
        object("offloading", 0, false, 0).startOffload("node", 0);
        for (int i = 3; i < 16; i++) {
            object("k" + i, i);
        }
        // a census of 13: 0.15 of them, rounded up, is 2
        assertThat(evictor.runEvictionOnce()).isEqualTo(2);
        assertThat(List.of("pinned", "writing", "offloading", "k5")).allMatch(this::present);
        assertThat(List.of("k3", "k4")).noneMatch(this::present);
    }

    @Test
    void softPinnedObjectsGoInASecondPassOnlyWhenTheFirstFellShortOfTheLowerBound() {
        Evictor evictor = evictor();
        softPinnedFill();
        // 16 in the census: the first pass finds 1 of the 3 it wants; the lower bound, 0.1 of 16 rounded
        // up, is 2, so the second pass takes the soft-pinned object with the oldest lease
        assertThat(evictor.runEvictionOnce()).isEqualTo(2);
        assertThat(List.of("plain", "soft0")).noneMatch(this::present);
        assertThat(present("soft1")).isTrue();
    }

    @Test
    void softPinnedObjectsStayWhenSettingsSaySo() {
        Evictor evictor = evictor(MasterSettings.defaults().withAllowEvictSoftPinned(false));
        softPinnedFill();
        assertThat(evictor.runEvictionOnce()).isEqualTo(1);
        assertThat(present("plain")).isFalse();
        assertThat(table.keyCount()).isEqualTo(15);
    }

    @Test
    void anEndedSoftPinIsForgottenByTheNextCensus() {
        Evictor evictor = evictor();
        softPinnedFill();
        ticker.advanceMillis(60_000); // every pin is over
        evictor.runEvictionOnce();
        List<ObjectMetadata> left = new ArrayList<>();
        for (int i = 0; i < 15; i++) {
            String key = "soft" + i;
            table.inShard(key, shard -> {
                ObjectMetadata m = shard.objects.get(key);
                if (m != null) {
                    left.add(m);
                }
                return null;
            });
        }
        assertThat(left).isNotEmpty().allSatisfy(m -> {
            assertThat(m.softPinDeadlineMillis()).isZero();
            assertThat(m.holdsRareFields()).as("no side object once its pin is over").isFalse();
        });
    }

    /** plain (lease ended at 100) and soft0..soft14 (leases ended at 0..14, pinned for a while). */
    private void softPinnedFill() {
        object("plain", 100);
        for (int i = 0; i < 15; i++) {
            object("soft" + i, i, false, ticker.millis() + 60_000);
        }
    }

    @Test
    void aFailedAllocationAsksForOnePassBelowTheWatermark() {
        Evictor evictor = evictor();
        for (int i = 0; i < 8; i++) {
            object("k" + i, i);
        }
        placement.noteAllocationFailure(17 * OBJECT); // no segment could ever hold it: no pass
        assertThat(evictor.runEvictionOnce()).isZero();

        placement.noteAllocationFailure(2 * OBJECT);
        // used 0.5: target = max(0.05, 0.5 - 0.9 + 0.05) = 0.05 of 8, rounded up: 1
        assertThat(evictor.runEvictionOnce()).isEqualTo(1);
        assertThat(present("k0")).isFalse();
        assertThat(evictor.runEvictionOnce()).as("the failure was taken by the pass").isZero();
    }

    @Test
    void anObjectWithAnSsdCopyLosesOnlyItsMemoryReplica() {
        Evictor evictor = evictor();
        ObjectMetadata k0 = fill().get(0);
        k0.addDiskReplica(new DiskReplica(table.nextReplicaId(), "n", "ep", OBJECT));

        assertThat(evictor.runEvictionOnce()).isEqualTo(3);

        assertThat(present("k0")).isTrue();
        assertThat(k0.replicas()).isEmpty();
        assertThat(k0.diskReplicas()).hasSize(1);
        assertThat(List.of("k1", "k2")).noneMatch(this::present);
        assertThat(segment.used()).isEqualTo(13 * OBJECT);
    }

    @Test
    void withOnEvictOffloadCandidatesAreOffloadedInsteadOfDropped() {
        Evictor evictor = evictor(MasterSettings.defaults()
                .withTier(TierSettings.defaults().withOffloadMode(TierSettings.OffloadMode.ON_EVICT)));
        tier.registerStorage("n", 1L << 30);
        List<ObjectMetadata> all = fill();

        assertThat(evictor.runEvictionOnce()).isEqualTo(3);

        assertThat(segment.used()).as("memory is freed when the node reports the copy").isEqualTo(16 * OBJECT);
        assertThat(all.subList(0, 3)).allMatch(m -> m.offloadPending() && "n".equals(m.taskNode()));
        assertThat(counters.evictedBytes()).isZero();
        assertThat(tier.pollTasks("n", 10, 0, List.of(), List.of()).offloads()).extracting(t -> t.getKey())
                .containsExactly("k0", "k1", "k2");
    }

    @Test
    void aPassSaysWhetherTheNextShouldComeSoon() {
        Evictor evictor = evictor(); // high watermark 0.9: near from 0.8 on
        for (int i = 0; i < 12; i++) {
            object("k" + i, i); // 12 of 16: 0.75
        }
        evictor.runEvictionOnce();
        assertThat(evictor.pressed()).as("at 0.75").isFalse();
        object("k12", 12); // 0.8125
        evictor.runEvictionOnce();
        assertThat(evictor.pressed()).as("at 0.81").isTrue();
        assertThat(present("k0")).as("nothing evicted below the watermark").isTrue();
    }

    @Test
    void aFailedAllocationCallsItsListenerOnceUntilAPassTakesIt() {
        Evictor evictor = evictor();
        AtomicInteger calls = new AtomicInteger();
        placement.onAllocationFailure(calls::incrementAndGet);
        evictor.runEvictionOnce();
        assertThat(evictor.pressed()).isFalse();

        placement.noteAllocationFailure(OBJECT);
        placement.noteAllocationFailure(OBJECT);
        assertThat(calls).hasValue(1);
        assertThat(placement.allocationFailedPending()).isTrue();
        evictor.runEvictionOnce();
        assertThat(evictor.pressed()).as("the pass after a failure").isTrue();
        assertThat(placement.allocationFailedPending()).isFalse();

        placement.noteAllocationFailure(OBJECT);
        assertThat(calls).as("a failure after the pass took the flag").hasValue(2);
        placement.noteAllocationFailure(32 * OBJECT); // larger than any segment: evicting would not help
        assertThat(calls).hasValue(2);
        evictor.runEvictionOnce();
        evictor.runEvictionOnce();
        assertThat(evictor.pressed()).as("no failure since, an empty pool").isFalse();
    }
}
