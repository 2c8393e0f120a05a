package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import org.junit.jupiter.api.Test;

/** {@link BriefRefusals}: which refusals are asked again, and a pause that is interrupted. */
class BriefRefusalsTest {
    @Test
    void anInterruptedPauseGivesTheRefusalItWasWaitingOnAndKeepsTheInterrupt() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> BriefRefusals.pause(4, ErrorCode.OBJECT_HAS_REPLICATION_TASK, "remove of k"))
                    .isInstanceOfSatisfying(TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_HAS_REPLICATION_TASK);
                        assertThat(e.getMessage()).contains("interrupted while waiting to retry remove of k");
                        assertThat(e.getCause()).isInstanceOf(InterruptedException.class);
                    });
            assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the caller").isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aPauseDoublesFromTwentyMilliseconds() {
        long start = System.nanoTime();
        BriefRefusals.pause(1, ErrorCode.NO_AVAILABLE_HANDLE, "put of k");
        assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(40);
    }

    @Test
    void onlyRefusalsThatEndOnTheirOwnAreAskedAgain() {
        assertThat(BriefRefusals.ofPut(ErrorCode.NO_AVAILABLE_HANDLE)).isTrue();
        assertThat(BriefRefusals.ofPut(ErrorCode.REPLICA_IS_NOT_READY)).isTrue();
        assertThat(BriefRefusals.ofPut(ErrorCode.OBJECT_HAS_REPLICATION_TASK)).isTrue();
        assertThat(BriefRefusals.ofPut(ErrorCode.OBJECT_ALREADY_EXISTS)).isFalse();
        assertThat(BriefRefusals.ofBatchPut(ErrorCode.REPLICA_IS_NOT_READY)).isTrue();
        assertThat(BriefRefusals.ofBatchPut(ErrorCode.OBJECT_HAS_REPLICATION_TASK)).isTrue();
        assertThat(BriefRefusals.ofBatchPut(ErrorCode.NO_AVAILABLE_HANDLE)).as("the caller sees the pressure").isFalse();
        assertThat(BriefRefusals.ofRemove(ErrorCode.OBJECT_HAS_REPLICATION_TASK)).isTrue();
        assertThat(BriefRefusals.ofRemove(ErrorCode.OBJECT_HAS_LEASE)).isFalse();
        assertThat(BriefRefusals.ofRemove(ErrorCode.OBJECT_NOT_FOUND)).isFalse();
    }
}
