package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The client's check of a {@code DATA_READ_SSD} answer before it uses any of its bytes. */
class SsdReplyCheckTest {

    @Test
    void anAnswerWhoseSizesAddUpToItsBytesIsAccepted() {
        AsyncNodeReads.checkSsdReply("n:1", 3, List.of(100L, -1L, 28L), 128);
        AsyncNodeReads.checkSsdReply("n:1", 2, List.of(-1L, -1L), 0);
        AsyncNodeReads.checkSsdReply("n:1", 1, List.of(0L), 0);
    }

    @Test
    void anAnswerThatLeavesRoomForAKeyItDidNotReadIsRefused() {
        // the node's old answer: the failed key's 100 bytes still in the bulk
        assertThatThrownBy(() -> AsyncNodeReads.checkSsdReply("n:1", 3, List.of(-1L, 100L, 28L), 228))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.TRANSFER_FAIL);
                    assertThat(e.getMessage()).contains("node n:1").contains("adding up to 128 bytes and 228 bytes");
                });
    }

    @Test
    void anAnswerWithAnotherNumberOfSizesIsRefused() {
        assertThatThrownBy(() -> AsyncNodeReads.checkSsdReply("n:1", 3, List.of(100L, 28L), 128))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.getMessage()).contains("3 keys with 2 sizes"));
    }
}
