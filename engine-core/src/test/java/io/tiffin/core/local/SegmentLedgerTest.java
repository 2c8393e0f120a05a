package io.tiffin.core.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import org.junit.jupiter.api.Test;

class SegmentLedgerTest {
    private static SegmentLedger.Entry entry(String key, long offset, long size, long version) {
        return new SegmentLedger.Entry(key, offset, size, version, 1, false, false);
    }

    @Test
    void aCommitDropsTheRecordsWhoseBytesItOverwrites() {
        SegmentLedger ledger = new SegmentLedger();
        ledger.commit(entry("a", 0, 100, 1));
        ledger.commit(entry("b", 128, 100, 2));
        ledger.commit(entry("c", 256, 64, 3));
        ledger.commit(entry("d", 64, 100, 4)); // overlaps a (0..100) and b (128..228)
        assertThat(ledger.snapshot()).extracting(SegmentLedger.Entry::key).containsExactly("d", "c");
    }

    @Test
    void forgetDropsOnlyTheVersionItNames() {
        SegmentLedger ledger = new SegmentLedger();
        ledger.commit(entry("a", 0, 100, 5));
        assertThat(ledger.forget(0, 4)).isFalse();
        assertThat(ledger.size()).isEqualTo(1);
        assertThat(ledger.forget(0, 5)).isTrue();
        assertThat(ledger.size()).isZero();
    }

    @Test
    void aDeadlineChangesOnlyOnTheVersionItNames() {
        SegmentLedger ledger = new SegmentLedger();
        ledger.commit(new SegmentLedger.Entry("a", 0, 100, 5, 9, true, false, 0xBEEF, false, 1_000));
        assertThat(ledger.setDeadline(0, 4, 2_000)).as("an older version's").isFalse();
        assertThat(ledger.setDeadline(64, 5, 2_000)).as("no record there").isFalse();
        assertThat(ledger.snapshot().getFirst().expireAtMillis()).isEqualTo(1_000);
        assertThat(ledger.setDeadline(0, 5, 2_000)).isTrue();
        assertThat(ledger.snapshot()).containsExactly(
                new SegmentLedger.Entry("a", 0, 100, 5, 9, true, false, 0xBEEF, false, 2_000));
        assertThat(ledger.setDeadline(0, 5, 0)).as("PERSIST").isTrue();
        assertThat(ledger.snapshot().getFirst().expireAtMillis()).isZero();
    }

    @Test
    void aCommitOfAnEarlierMountIsRefusedAndAnEpochMoveSnapshotsOrClears() {
        try (LocalSegment segment = new LocalSegment("s", 1 << 16)) {
            segment.setMountEpoch(3);
            segment.commit(3, entry("a", 0, 100, 1));
            assertThat(segment.moveMountEpoch(4, true)).extracting(SegmentLedger.Entry::key).containsExactly("a");
            assertThatThrownBy(() -> segment.commit(3, entry("b", 128, 100, 2))).isInstanceOfSatisfying(
                    TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.REPLICA_IS_GONE));
            assertThat(segment.moveMountEpoch(5, false)).isEmpty();
            assertThat(segment.ledger().size()).isZero();
        }
    }
}
