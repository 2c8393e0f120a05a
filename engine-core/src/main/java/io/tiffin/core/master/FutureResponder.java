package io.tiffin.core.master;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Responder;
import java.util.concurrent.CompletableFuture;

/**
 * An answer given as a future, for an in-process caller that must not wait for a held reply
 * ({@link MasterRpcService#callWithoutWaiting}): OK completes it with the control message (a bulk part is
 * released: master replies carry none), a failure completes it with the {@link TiffinException} a connection
 * would have carried.
 *
 * <p>Thread-safe (the future is).
 */
final class FutureResponder implements Responder {
    private final CompletableFuture<MessageLite> reply = new CompletableFuture<>();

    /** Completes with the answer. */
    CompletableFuture<MessageLite> reply() {
        return reply;
    }

    @Override
    public void ok(MessageLite control) {
        reply.complete(control);
    }

    @Override
    public void ok(MessageLite control, ByteBuf bulk) {
        if (bulk != null) {
            bulk.release();
        }
        reply.complete(control);
    }

    @Override
    public void fail(ErrorCode code, String message) {
        reply.completeExceptionally(new TiffinException(code, message));
    }

    @Override
    public boolean isAnswered() {
        return reply.isDone();
    }
}
