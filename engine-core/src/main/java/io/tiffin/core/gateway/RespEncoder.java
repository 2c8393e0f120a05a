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
 * <p>Not sharable: one instance per channel, used on its event loop only.
 */
final class RespEncoder extends RedisEncoder {
    RespEncoder() {
        super(FixedRedisMessagePool.INSTANCE);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, RedisMessage msg, List<Object> out) throws Exception {
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
