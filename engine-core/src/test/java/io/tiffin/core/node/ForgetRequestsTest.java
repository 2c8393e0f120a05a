package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.ForgetRequest;
import org.junit.jupiter.api.Test;

/** A FORGET whose parallel lists differ in length is refused, naming them, before any of it is applied. */
class ForgetRequestsTest {
    private static void assertRefused(ForgetRequest req, String names) {
        assertThatThrownBy(() -> ForgetRequests.checkParallel(req)).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            assertThat(e.getMessage()).contains("FORGET names " + names,
                    "nothing of it was applied");
        });
    }

    @Test
    void listsOfUnequalLengthsAreRefused() {
        assertRefused(ForgetRequest.newBuilder().addOffsets(64).addOffsets(128).addVersions(3).build(),
                "2 offsets and 1 versions");
        assertRefused(ForgetRequest.newBuilder().addDeadlineOffsets(64).addDeadlineVersions(3).build(),
                "1 deadline offsets, 1 deadline versions and 0 deadlines");
        assertRefused(ForgetRequest.newBuilder().addDiskDeadlineKeys("a").addDiskDeadlineKeys("b").addDiskDeadlines(5)
                .build(), "2 SSD copies and 1 deadlines");
        assertRefused(ForgetRequest.newBuilder().addDiskKeys("a").addDiskKeys("b").addDiskKeyVersions(3).build(),
                "2 SSD copies to delete and 1 versions");
        assertRefused(ForgetRequest.newBuilder().addDiskDeadlineKeys("a").addDiskDeadlines(5)
                .addDiskDeadlineVersions(3).addDiskDeadlineVersions(4).build(),
                "1 SSD copies and 2 versions of their deadlines");
    }

    @Test
    void listsOfEqualLengthsPass() {
        assertThatCode(() -> ForgetRequests.checkParallel(ForgetRequest.newBuilder().addOffsets(64).addVersions(3)
                .addDeadlineOffsets(128).addDeadlineVersions(4).addDeadlines(1_900_000_000_000L)
                .addDiskDeadlineKeys("k").addDiskDeadlines(0).addDiskKeys("gone").build())).doesNotThrowAnyException();
        assertThatCode(() -> ForgetRequests.checkParallel(ForgetRequest.newBuilder().addDiskKeys("gone")
                .addDiskKeyVersions(3).addDiskDeadlineKeys("k").addDiskDeadlines(0).addDiskDeadlineVersions(7).build()))
                .as("with versions").doesNotThrowAnyException();
    }

    /**
     * A FORGET from a master of an older term than the node follows (a deposed leader's EXPIRE or removal) is refused
     * with INVALID_VERSION, and neither its forgets nor its deadlines reach the records; the current term's passes.
     */
    @Test
    void aForgetOfADeposedMastersTermIsRefusedAndAppliesNothing() {
        try (io.tiffin.core.local.LocalSegment segment = new io.tiffin.core.local.LocalSegment("s", 1 << 16)) {
            segment.setMountEpoch(1);
            segment.commit(1, new io.tiffin.core.local.SegmentLedger.Entry("a", 0, 100, 5, 1, false, false));
            segment.commit(1, new io.tiffin.core.local.SegmentLedger.Entry("b", 128, 100, 6, 2, false, false));
            ForgetRequest deposed = ForgetRequest.newBuilder().setTerm(2).setSegment("s").addOffsets(0).addVersions(5)
                    .addDeadlineOffsets(128).addDeadlineVersions(6).addDeadlines(1_900_000_000_000L).build();

            assertThatThrownBy(() -> ForgetRequests.apply(deposed, segment, null, 3)).isInstanceOfSatisfying(
                    TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_VERSION);
                        assertThat(e.getMessage()).contains("term 2", "follows term 3");
                    });
            assertThat(segment.ledger().snapshot()).extracting(r -> r.key() + "@" + r.expireAtMillis())
                    .containsExactly("a@0", "b@0");

            assertThat(ForgetRequests.apply(deposed.toBuilder().setTerm(3).build(), segment, null, 3)).isDone();
            assertThat(segment.ledger().snapshot()).extracting(r -> r.key() + "@" + r.expireAtMillis())
                    .containsExactly("b@1900000000000");
        }
    }
}
