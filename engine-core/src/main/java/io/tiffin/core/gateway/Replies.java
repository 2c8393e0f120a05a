package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.redis.ArrayRedisMessage;
import io.netty.handler.codec.redis.ErrorRedisMessage;
import io.netty.handler.codec.redis.FixedRedisMessagePool;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.IntegerRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.handler.codec.redis.SimpleStringRedisMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds replies in the connection's protocol: RESP3's null, map, set and verbatim string, or their RESP2
 * forms ({@code $-1}, flat arrays, bulk strings), as Redis does.
 *
 * <p>Thread-safe (stateless).
 */
final class Replies {
    static final RedisMessage OK = FixedRedisMessagePool.INSTANCE.getSimpleString("OK");
    static final RedisMessage PONG = FixedRedisMessagePool.INSTANCE.getSimpleString("PONG");
    static final RedisMessage ZERO = integer(0);
    static final RedisMessage ONE = integer(1);

    private Replies() {
    }

    static RedisMessage simple(String s) {
        return new SimpleStringRedisMessage(s);
    }

    /** {@code e} as an error reply: its text in UTF-8, or its {@link RespError#raw() bytes} as they are. */
    static RedisMessage error(RespError e) {
        return e.raw() == null ? new ErrorRedisMessage(e.text()) : new BinaryError(e.raw());
    }

    /** Whether {@code m} is an error reply (either kind). */
    static boolean isError(RedisMessage m) {
        return m instanceof ErrorRedisMessage || m instanceof BinaryError;
    }

    /**
     * An error reply whose line is bytes rather than text ({@code -<line>\r\n}): one that echoes a client's bytes,
     * which need not be UTF-8 (netty's {@link ErrorRedisMessage} holds a String and writes it in UTF-8).
     *
     * <p>Thread-safe (immutable: the line is never changed once built).
     *
     * @param line the line without the leading '-' and the CRLF, without CR or LF
     */
    record BinaryError(byte[] line) implements RedisMessage {
    }

    static RedisMessage integer(long n) {
        IntegerRedisMessage cached = FixedRedisMessagePool.INSTANCE.getInteger(n);
        return cached != null ? cached : new IntegerRedisMessage(n);
    }

    /** A bulk string of {@code value}'s readable bytes; the reply owns the buffer. */
    static RedisMessage bulk(ByteBuf value) {
        return new FullBulkStringRedisMessage(value);
    }

    static RedisMessage bulk(String s) {
        return bulk(s.getBytes(StandardCharsets.UTF_8));
    }

    static RedisMessage bulk(byte[] b) {
        return b.length == 0 ? FullBulkStringRedisMessage.EMPTY_INSTANCE
                : new FullBulkStringRedisMessage(Unpooled.wrappedBuffer(b));
    }

    /** A missing value: {@code $-1} in RESP2, {@code _} in RESP3. */
    static RedisMessage nil(int protocol) {
        return protocol == 3 ? Resp3.NULL : FullBulkStringRedisMessage.NULL_INSTANCE;
    }

    static RedisMessage array(List<RedisMessage> elements) {
        return elements.isEmpty() ? ArrayRedisMessage.EMPTY_INSTANCE : new ArrayRedisMessage(elements);
    }

    /** Bulk strings of {@code strings}. */
    static RedisMessage bulkArray(List<String> strings) {
        List<RedisMessage> out = new ArrayList<>(strings.size());
        for (String s : strings) {
            out.add(bulk(s));
        }
        return array(out);
    }

    /** A map ({@code keysAndValues} alternate): RESP3 {@code %}, RESP2 a flat array. */
    static RedisMessage map(int protocol, List<RedisMessage> keysAndValues) {
        return protocol == 3 ? Resp3.Aggregate.map(keysAndValues) : array(keysAndValues);
    }

    /** A set: RESP3 {@code ~}, RESP2 an array. */
    static RedisMessage set(int protocol, List<RedisMessage> elements) {
        return protocol == 3 ? Resp3.Aggregate.set(elements) : array(elements);
    }

    /** Text for people (INFO): RESP3 a verbatim {@code txt} string, RESP2 a bulk string. */
    static RedisMessage text(int protocol, String text) {
        return protocol == 3 ? new Resp3.Verbatim("txt", text) : bulk(text);
    }

    /** About how many bytes {@code m} takes on the wire: bulk strings exactly, the rest roughly. */
    static long weight(RedisMessage m) {
        return switch (m) {
            case FullBulkStringRedisMessage b -> b.isNull() ? 8 : b.content().readableBytes() + 16L;
            case ArrayRedisMessage a -> {
                long w = 16;
                for (RedisMessage child : a.children()) {
                    w += weight(child);
                }
                yield w;
            }
            case Resp3.Aggregate a -> {
                long w = 16;
                for (RedisMessage element : a.elements()) {
                    w += weight(element);
                }
                yield w;
            }
            case Resp3.Verbatim v -> v.text().length() + 24L;
            case BinaryError e -> e.line().length + 3L;
            case EncodedReply e -> e.content().readableBytes();
            default -> 16;
        };
    }
}
