package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.transport.proto.ErrorReply;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The {@link Responder} of one request received by a {@link TransportServer}: writes the response frame
 * with {@code channel.writeAndFlush} from whatever thread answers (Netty moves the write onto the
 * channel's event loop). Thread-safe; the first answer wins atomically. Takes ownership of the bulk
 * buffer given to {@link #ok(MessageLite, ByteBuf)}; the response frame is released by the encoder, or
 * by Netty if the channel has closed.
 */
final class ChannelResponder implements Responder {
    private static final Logger LOG = LogManager.getLogger(ChannelResponder.class);

    private final Channel channel;
    private final Opcode opcode;
    private final long requestId;
    private final AtomicBoolean answered = new AtomicBoolean();

    ChannelResponder(Channel channel, Opcode opcode, long requestId) {
        this.channel = channel;
        this.opcode = opcode;
        this.requestId = requestId;
    }

    @Override
    public void ok(MessageLite control) {
        ok(control, null);
    }

    @Override
    public void ok(MessageLite control, ByteBuf bulk) {
        if (!answered.compareAndSet(false, true)) {
            if (bulk != null) {
                bulk.release();
            }
            throw alreadyAnswered();
        }
        send(Frame.response(opcode, requestId, ErrorCode.OK, control, bulk));
    }

    @Override
    public void fail(ErrorCode code, String message) {
        if (code == null || code.isOk()) {
            throw new IllegalArgumentException("fail() needs a failure code, not " + code + "; use ok() to succeed");
        }
        if (!tryFail(code, message)) {
            throw alreadyAnswered();
        }
    }

    /** Answers with a failure unless already answered; returns whether this call answered. */
    boolean tryFail(ErrorCode code, String message) {
        if (!answered.compareAndSet(false, true)) {
            return false;
        }
        ErrorReply reply = ErrorReply.newBuilder()
                .setMessage(message == null || message.isEmpty() ? code.hint() : message)
                .build();
        send(Frame.response(opcode, requestId, code, reply, null));
        return true;
    }

    @Override
    public boolean isAnswered() {
        return answered.get();
    }

    /** The requester's address, for logs. */
    java.net.SocketAddress remoteAddress() {
        return channel.remoteAddress();
    }

    private IllegalStateException alreadyAnswered() {
        return new IllegalStateException("the " + opcode + " request " + requestId
                + " was already answered; a handler must answer exactly once");
    }

    private void send(Frame response) {
        channel.writeAndFlush(response).addListener(f -> {
            if (!f.isSuccess()) {
                LOG.debug("Dropped the {} response {} to {}: {}", opcode, requestId, channel.remoteAddress(),
                        f.cause().toString());
            }
        });
    }
}
