package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.FixedRedisMessagePool;
import io.netty.handler.codec.redis.RedisEncoder;
import io.netty.handler.codec.redis.RedisMessage;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Writes replies: RESP2 types with netty-codec-redis's {@link RedisEncoder} (a bulk string's content goes
 * out as it is, without a copy), and the RESP3 types of {@link Resp3} itself. Arrays are written here too,
 * since their elements may be RESP3 types, which netty's encoder does not know.
 *
 * <p>Not thread-safe (not sharable): one instance per channel, used on its event loop only; the
 * pre-encoded replies it shares are only ever duplicated.
 */
final class RespEncoder extends RedisEncoder {
    RespEncoder() {
        super(FixedRedisMessagePool.INSTANCE);
    }

    /** The most frequent replies in their wire form, shared (duplicates are never released). */
    private static final ByteBuf OK = constant("+OK\r\n");
    private static final ByteBuf PONG = constant("+PONG\r\n");
    private static final ByteBuf NIL2 = constant("$-1\r\n");
    private static final ByteBuf NIL3 = constant("_\r\n");
    private static final ByteBuf ZERO = constant(":0\r\n");
    private static final ByteBuf ONE = constant(":1\r\n");

    private static ByteBuf constant(String wire) {
        return io.netty.buffer.Unpooled.unreleasableBuffer(io.netty.buffer.Unpooled.directBuffer(wire.length())
                .writeBytes(wire.getBytes(StandardCharsets.US_ASCII)).asReadOnly());
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, RedisMessage msg, List<Object> out) throws Exception {
        ByteBuf constant = msg == Replies.OK ? OK : msg == Replies.PONG ? PONG : msg == Resp3.NULL ? NIL3
                : msg == io.netty.handler.codec.redis.FullBulkStringRedisMessage.NULL_INSTANCE ? NIL2
                : msg == Replies.ZERO ? ZERO : msg == Replies.ONE ? ONE : null;
        if (constant != null) {
            out.add(constant.duplicate());
            return;
        }
        switch (msg) {
            case ArrayRedisMessage a when !a.isNull() -> {
                out.add(line(ctx, "*" + a.children().size()));
                for (RedisMessage child : a.children()) {
                    encode(ctx, child, out);
                }
            }
            case Resp3.Aggregate a -> {
                out.add(line(ctx, a.type() + Integer.toString(a.count())));
                for (RedisMessage element : a.elements()) {
                    encode(ctx, element, out);
                }
            }
            case Resp3.Leaf l -> out.add(line(ctx, l.line()));
            case EncodedReply e -> out.add(e.content().retain());
            case Replies.BinaryError e -> out.add(ctx.alloc().ioBuffer(e.line().length + 3).writeByte('-')
                    .writeBytes(e.line()).writeShort(CRLF));
            case Resp3.Verbatim v -> {
                byte[] text = (v.format() + ":" + v.text()).getBytes(StandardCharsets.UTF_8);
                ByteBuf buf = ctx.alloc().ioBuffer(text.length + 16);
                buf.writeByte('=').writeBytes(Integer.toString(text.length).getBytes(StandardCharsets.US_ASCII))
                        .writeShort(CRLF).writeBytes(text).writeShort(CRLF);
                out.add(buf);
            }
            default -> super.encode(ctx, msg, out);
        }
    }

    private static final int CRLF = ('\r' << 8) | '\n';

    private static ByteBuf line(ChannelHandlerContext ctx, String line) {
        ByteBuf buf = ctx.alloc().ioBuffer(line.length() + 2);
        ByteBufUtil.writeUtf8(buf, line);
        return buf.writeShort(CRLF);
    }
}
