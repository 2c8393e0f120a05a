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
    }

    @Test
    void listsOfEqualLengthsPass() {
        assertThatCode(() -> ForgetRequests.checkParallel(ForgetRequest.newBuilder().addOffsets(64).addVersions(3)
                .addDeadlineOffsets(128).addDeadlineVersions(4).addDeadlines(1_900_000_000_000L)
                .addDiskDeadlineKeys("k").addDiskDeadlines(0).addDiskKeys("gone").build())).doesNotThrowAnyException();
    }
}
