package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ReplicaStatus;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicaRecord}'s 32-byte layout: the status shares an int with the allocator handle, and the offset is kept
 * in units of the segment's allocation granularity; neither may disturb the other, on small and on large segments.
 */
class ReplicaRecordTest {
    private static final long GIB = 1L << 30;

    @Test
    void everyStatusSurvivesBesideTheHandleAndAfterTheBufferIsFreed() {
        MountedSegment segment = new MountedSegment("s", "n", "ep", 1 << 20, 0, 0);
        long handle = segment.allocate(4096, "k");
        ReplicaRecord r = new ReplicaRecord(7, segment, handle, segment.offset(handle));
        assertThat(r.status()).isEqualTo(ReplicaStatus.PROCESSING);
        for (ReplicaStatus s : ReplicaStatus.values()) {
            r.status(s);
            assertThat(r.status()).isEqualTo(s);
            assertThat(r.offset()).isEqualTo(segment.offset(handle));
        }
        r.status(ReplicaStatus.COMPLETE);
        assertThat(segment.used()).isEqualTo(4096);
        r.free(1);
        assertThat(segment.used()).as("the buffer went back").isZero();
        assertThat(r.status()).isEqualTo(ReplicaStatus.COMPLETE);
        segment.allocate(4096, "k2");
        r.free(1); // idempotent: the handle, maybe another allocation's by now, is not freed again
        assertThat(segment.used()).isEqualTo(4096);
    }

    @Test
    void offsetsOfASegmentAbove4GiBRoundTripThroughItsGranularity() {
        MountedSegment segment = new MountedSegment("big", "n", "ep", 64 * GIB, 0, 0);
        assertThat(segment.offsetShift()).isPositive();
        long unit = 1L << segment.offsetShift();
        long offset = 63 * GIB + 5 * unit;
        ReplicaRecord r = new ReplicaRecord(1, segment, (1 << 26) - 1, offset);
        assertThat(r.offset()).isEqualTo(offset);
        r.status(ReplicaStatus.FAILED);
        assertThat(r.offset()).isEqualTo(offset);
        assertThat(r.toDescriptor(4096, DataGrant.READ, 0).offset()).isEqualTo(offset);
    }

    @Test
    void aHandleOrOffsetItCannotHoldIsRefused() {
        MountedSegment small = new MountedSegment("s", "n", "ep", 1 << 20, 0, 0);
        assertThatThrownBy(() -> new ReplicaRecord(1, small, 1 << 26, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not an allocator handle");
        assertThatThrownBy(() -> new ReplicaRecord(1, small, -1, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReplicaRecord(1, small, 0, -64)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ReplicaRecord(1, small, 0, 1L << 32))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allocation offsets");
        MountedSegment big = new MountedSegment("big", "n", "ep", 64 * GIB, 0, 0);
        long unit = 1L << big.offsetShift();
        assertThatThrownBy(() -> new ReplicaRecord(1, big, 0, unit + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiples of " + unit);
    }
}
