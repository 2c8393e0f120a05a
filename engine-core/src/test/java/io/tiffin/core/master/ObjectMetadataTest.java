package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ReplicaStatus;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ObjectMetadata}'s compact layout: the fields few objects need live in a side object that exists only while
 * one of them is set (a complete plain object holds none), and the memory replicas sit in a slot of the object.
 */
class ObjectMetadataTest {
    private final MountedSegment segment = new MountedSegment("s", "n", "ep", 1 << 20, 0, 0);

    private ReplicaRecord replica() {
        long handle = segment.allocate(4096, "k");
        return new ReplicaRecord(handle, segment, handle, segment.offset(handle));
    }

    private ObjectMetadata object(boolean softPin, List<ReplicaRecord> replicas) {
        return new ObjectMetadata("k", "writer", 4096, 1_000, false, softPin, replicas);
    }

    @Test
    void aPutInProgressHoldsItsFieldsAndACompleteObjectNone() {
        ObjectMetadata m = object(false, List.of(replica()));
        m.replaceOptions(true, true, 7);
        assertThat(m.processing()).isTrue();
        assertThat(m.putStartMillis()).isEqualTo(1_000);
        assertThat(m.upsert()).isTrue();
        assertThat(m.keepTtl()).isTrue();
        assertThat(m.expectedVersion()).isEqualTo(7);
        assertThat(m.holdsRareFields()).isTrue();

        m.complete();
        assertThat(m.processing()).isFalse();
        assertThat(m.putStartMillis()).isZero();
        assertThat(m.upsert()).isFalse();
        assertThat(m.keepTtl()).isFalse();
        assertThat(m.expectedVersion()).isZero();
        assertThat(m.holdsRareFields()).as("a complete plain object keeps no side object").isFalse();
    }

    @Test
    void theSizeAndTheFourFlagsShareOneLongWithoutDisturbingEachOther() {
        ObjectMetadata big = new ObjectMetadata("k", "w", ObjectMetadata.MAX_SIZE, 0, true, true, List.of());
        assertThat(big.size()).isEqualTo((1L << 56) - 1);
        assertThat(big.hardPinned()).isTrue();
        assertThat(big.softPinRequested()).isTrue();
        assertThat(big.processing()).isTrue();
        assertThat(big.recovered()).isFalse();
        big.markRecovered();
        big.complete();
        assertThat(big.size()).isEqualTo(ObjectMetadata.MAX_SIZE);
        assertThat(big.recovered()).isTrue();
        assertThat(big.processing()).isFalse();
        assertThat(big.hardPinned()).isTrue();

        ObjectMetadata empty = new ObjectMetadata("k", "w", 0, 0, false, false, List.of());
        assertThat(empty.size()).isZero();
        assertThat(empty.hardPinned()).isFalse();
        assertThat(empty.softPinRequested()).isFalse();
        assertThat(empty.processing()).isTrue();
        empty.markRecovered();
        assertThat(empty.size()).isZero();
        assertThat(empty.hardPinned()).isFalse();
    }

    @Test
    void aSizeBeyondFiftySixBitsOrBelowZeroIsRefused() {
        assertThatThrownBy(() -> new ObjectMetadata("k", "w", ObjectMetadata.MAX_SIZE + 1, 0, false, false, List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sizes run from 0 to");
        assertThatThrownBy(() -> new ObjectMetadata("k", "w", -1, 0, false, false, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theLargestObjectSizeTheConfigurationAcceptsIsTheLargestTheMasterKeeps() {
        var key = io.tiffin.core.config.TiffinConfigKeys.MASTER_MAX_OBJECT_SIZE;
        assertThat(key.parse(Long.toString(ObjectMetadata.MAX_SIZE))).isEqualTo(ObjectMetadata.MAX_SIZE);
        assertThatThrownBy(() -> key.parse(Long.toString(ObjectMetadata.MAX_SIZE + 1)))
                .hasMessageContaining(Long.toString(ObjectMetadata.MAX_SIZE));
    }

    @Test
    void aSoftPinKeepsTheSideObjectUntilItEnds() {
        ObjectMetadata m = object(true, List.of(replica()));
        m.complete();
        m.softPinUntil(5_000);
        assertThat(m.isSoftPinned(4_999)).isTrue();
        assertThat(m.isSoftPinned(5_000)).isFalse();
        assertThat(m.holdsRareFields()).isTrue();
        m.softPinUntil(0);
        assertThat(m.softPinDeadlineMillis()).isZero();
        assertThat(m.holdsRareFields()).isFalse();
    }

    @Test
    void tierTasksAndDiskCopiesHoldTheSideObjectWhileTheyLast() {
        ObjectMetadata m = object(false, List.of(replica()));
        m.complete();
        m.startOffload("node-a", 2_000);
        assertThat(m.offloadPending()).isTrue();
        assertThat(m.taskNode()).isEqualTo("node-a");
        assertThat(m.taskStartMillis()).isEqualTo(2_000);
        m.clearTask();
        assertThat(m.offloadPending()).isFalse();
        assertThat(m.taskNode()).isNull();
        assertThat(m.holdsRareFields()).isFalse();

        m.startOffload("node-a", 2_500);
        m.endPromotion();
        assertThat(m.offloadPending()).as("ending a promotion leaves an offload's flag").isTrue();
        m.endOffload();
        assertThat(m.offloadPending()).isFalse();
        assertThat(m.holdsRareFields()).isFalse();

        m.startOffload("node-a", 3_000);
        m.offloadFailedNow();
        assertThat(m.offloadPending()).isFalse();
        assertThat(m.offloadFailed()).as("remembered: eviction drops it rather than retry").isTrue();
        assertThat(m.holdsRareFields()).isTrue();

        ObjectMetadata d = object(false, List.of());
        d.complete();
        d.addDiskReplica(new DiskReplica(1, "node-b", "ep", 4096));
        d.startPromotion("node-b", 4_000);
        assertThat(d.promotionQueued()).isTrue();
        assertThat(d.hasDiskReplicaOn("node-b")).isTrue();
        assertThat(d.hasReadableReplica()).isTrue();
        d.clearTask();
        assertThat(d.holdsRareFields()).as("the disk copy is still there").isTrue();
        assertThat(d.removeDiskReplicasIf(r -> true)).isEqualTo(1);
        assertThat(d.isEmpty()).isTrue();
        assertThat(d.holdsRareFields()).isFalse();
    }

    @Test
    void replicasLiveInTheObjectsSlotThroughEveryView() {
        ReplicaRecord a = replica();
        ReplicaRecord b = replica();
        ObjectMetadata m = object(false, List.of(a));
        m.replicas().add(b);
        assertThat(m.replicas()).containsExactly(a, b);
        a.status(ReplicaStatus.COMPLETE);
        b.status(ReplicaStatus.COMPLETE);
        assertThat(m.allComplete()).isTrue();
        m.replicas().remove(a);
        assertThat(m.replicas()).containsExactly(b);
        assertThat(segment.used()).isEqualTo(2 * 4096);
        m.freeAll();
        assertThat(m.replicas()).isEmpty();
        assertThat(segment.used()).as("b's buffer went back; a's is its remover's").isEqualTo(4096);
        assertThat(m.isEmpty()).isTrue();
    }

    /** Ending a promotion that was never queued (a late node message) leaves the object's pending offload whole. */
    @Test
    void endingATaskOfTheOtherKindLeavesThePendingOneWhole() {
        ObjectMetadata m = object(false, List.of(replica()));
        m.complete();
        m.startOffload("n1", 2_000);

        m.endPromotion();
        assertThat(m.offloadPending()).isTrue();
        assertThat(m.taskNode()).isEqualTo("n1");
        assertThat(m.taskStartMillis()).isEqualTo(2_000);
        assertThat(m.offloadAsksFor("n1", m.version)).isTrue();

        m.endOffload();
        assertThat(m.taskNode()).isNull();
        assertThat(m.holdsRareFields()).isFalse();
        m.startPromotion("n1", 3_000);
        m.endOffload();
        assertThat(m.promotionQueued()).isTrue();
        assertThat(m.taskNode()).isEqualTo("n1");
    }
}
