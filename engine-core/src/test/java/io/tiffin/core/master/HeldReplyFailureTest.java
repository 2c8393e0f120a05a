package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A held call (a removal, an EXPIRE) whose nodes' work failed is answered with what the failure means for it: a node's
 * disk that refused the change ({@code FILE_WRITE_FAIL}) as such, a node that follows a newer master term as "may not
 * have taken effect; retry it at the leader". Whether the failure comes while the call waits (its FORGETs in flight,
 * the usual case: the collected futures hand it over wrapped in a {@code CompletionException}), was there before it
 * was sent, or reaches an in-process caller. Before, the first was answered as an internal error.
 */
class HeldReplyFailureTest {
    private final ScheduledExecutorService delays = Executors.newSingleThreadScheduledExecutor();
    private final HeldReplies held = new HeldReplies(new MasterService(MasterSettings.defaults(),
            MasterServiceTest.IN_ORDER, new ManualTicker(), null));

    @AfterEach
    void stop() {
        delays.shutdownNow();
    }

    /** What a responder was told. Not thread-safe: each test answers on its own thread. */
    private static final class Told implements Responder {
        ErrorCode code;
        String message;

        @Override
        public void ok(MessageLite control) {
            code = ErrorCode.OK;
        }

        @Override
        public void ok(MessageLite control, ByteBuf bulk) {
            code = ErrorCode.OK;
        }

        @Override
        public void fail(ErrorCode failed, String why) {
            code = failed;
            message = why;
        }

        @Override
        public boolean isAnswered() {
            return code != null;
        }
    }

    /** The answers to {@code failure}: arriving while the call waits, there when it is sent, and in process. */
    private List<TiffinException> answersTo(TiffinException failure) {
        List<TiffinException> answers = new ArrayList<>();
        CompletableFuture<Void> forgets = new CompletableFuture<>();
        Told waiting = new Told();
        held.send(Opcode.EXPIRE, new HeldReplies.Held(Empty.getDefaultInstance(), 0, CompletableFuture.allOf(forgets)),
                waiting, delays);
        assertThat(waiting.isAnswered()).as("held while its forgets are in flight").isFalse();
        forgets.completeExceptionally(failure);
        answers.add(new TiffinException(waiting.code, waiting.message));

        Told sent = new Told();
        held.send(Opcode.EXPIRE, new HeldReplies.Held(Empty.getDefaultInstance(), 0, CompletableFuture.allOf(forgets)),
                sent, delays);
        answers.add(new TiffinException(sent.code, sent.message));

        answers.add(catchThrowableOfType(TiffinException.class, () -> held.await(Opcode.EXPIRE,
                new HeldReplies.Held(Empty.getDefaultInstance(), 0, CompletableFuture.allOf(forgets)))));
        return answers;
    }

    @Test
    void aDeadlineTheNodesDiskRefusedIsAnsweredAsAFailedWrite() {
        List<TiffinException> answers = answersTo(new TiffinException(ErrorCode.FILE_WRITE_FAIL, "node ssd could not"
                + " write the new expiry deadline of its SSD copy of k to its disk"));

        assertThat(answers).hasSize(3).allSatisfy(e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.FILE_WRITE_FAIL);
            assertThat(e.getMessage()).startsWith("EXPIRE failed: ").contains("could not write the new expiry"
                    + " deadline");
        });
    }

    @Test
    void aNodeFollowingANewerTermIsAnsweredAsMaybeNotTakenEffect() {
        List<TiffinException> answers = answersTo(new TiffinException(ErrorCode.INVALID_VERSION, "FORGET from a master"
                + " of term 1; this node follows term 2"));

        assertThat(answers).hasSize(3).allSatisfy(e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
            assertThat(e.getMessage()).contains("EXPIRE may not have taken effect", "this node follows term 2",
                    "retry it at the leader");
        });
    }
}
