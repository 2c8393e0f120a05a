package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.netty.handler.codec.redis.RedisMessage;

/**
 * A reply already in its wire form, written as it is: a GET's value framed in place in the buffer it was
 * read into ({@code $<len>\r\n} in the room left before it, CRLF after it), so the reply is one piece of
 * memory and goes out without a copy or an encoding step.
 *
 * <p>Not thread-safe: built by the command's thread, then handed to the event loop, which releases it.
 */
final class EncodedReply extends DefaultByteBufHolder implements RedisMessage {
    /** Room a value buffer keeps before the value for its bulk header ({@code $} and up to 10 digits and CRLF). */
    static final int HEADROOM = 16;
    /** Room after the value for the CRLF. */
    static final int TAILROOM = 2;

    /** The CRLF after a lent value, shared (duplicates are never released). */
    private static final ByteBuf CRLF = io.netty.buffer.Unpooled.unreleasableBuffer(io.netty.buffer.Unpooled
            .directBuffer(2).writeByte('\r').writeByte('\n').asReadOnly());

    private EncodedReply(ByteBuf wire) {
        super(wire);
    }

    /**
     * {@code value} as a bulk-string reply without a copy: the header and CRLF become pieces of the composite
     * around the lent bytes. Takes the buffer over.
     */
    static RedisMessage bulk(LentValue value) {
        int n = value.readableBytes();
        byte[] header = ("$" + n + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        try {
            // pooled and direct: a heap piece would make Netty copy the whole composite before the socket write
            value.addComponent(true, 0, io.netty.buffer.ByteBufAllocator.DEFAULT.directBuffer(header.length)
                    .writeBytes(header));
            value.addComponent(true, CRLF.duplicate());
        } catch (RuntimeException e) {
            value.release();
            throw e;
        }
        return new EncodedReply(value);
    }

    /**
     * {@code value} as a bulk-string reply: framed in place when it has the room ({@link #HEADROOM} before it,
     * {@link #TAILROOM} after it), else wrapped for the encoder. Takes the buffer over.
     */
    static RedisMessage bulk(ByteBuf value) {
        int n = value.readableBytes();
        byte[] header = ("$" + n + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        if (value.readerIndex() < header.length || value.writableBytes() < TAILROOM || value.refCnt() != 1) {
            return Replies.bulk(value);
        }
        int start = value.readerIndex() - header.length;
        value.setBytes(start, header);
        value.readerIndex(start);
        value.writeByte('\r').writeByte('\n');
        return new EncodedReply(value);
    }
}
