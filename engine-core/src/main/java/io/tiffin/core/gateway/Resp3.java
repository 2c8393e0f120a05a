package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCountUtil;
import java.util.List;

/**
 * The reply types RESP3 adds to RESP2's that the gateway uses (netty-codec-redis models only RESP2):
 * null, verbatim string, map and set. {@link RespEncoder} writes them; {@link Replies} chooses them or their
 * RESP2 forms by the connection's protocol.
 *
 * <p>Thread-safe: the leaf types are immutable; a map or set is built once and then only read, and is
 * released once, by the encoder that writes it (releasing its elements).
 */
final class Resp3 {
    /** RESP3 null: {@code _}. */
    static final RedisMessage NULL = new Leaf("_");

    private Resp3() {
    }

    /**
     * A reply written as one fixed line.
     *
     * <p>Thread-safe (immutable).
     *
     * @param line the line without its CRLF
     */
    record Leaf(String line) implements RedisMessage {
    }

    /**
     * A RESP3 verbatim string: {@code =<length>} then {@code <format>:<text>}.
     *
     * <p>Thread-safe (immutable).
     *
     * @param format three letters, e.g. {@code txt}
     * @param text the text
     */
    record Verbatim(String format, String text) implements RedisMessage {
    }

    /**
     * A RESP3 aggregate (map, set) whose elements may be of any type; releases its elements when released.
     *
     * <p>Thread-safe once built (see the class comment).
     */
    static final class Aggregate extends AbstractReferenceCounted implements RedisMessage {
        private final char type;
        private final int count;
        private final List<RedisMessage> elements;

        private Aggregate(char type, int count, List<RedisMessage> elements) {
            this.type = type;
            this.count = count;
            this.elements = elements;
        }

        /** A map; {@code keysAndValues} alternates keys and values. */
        static Aggregate map(List<RedisMessage> keysAndValues) {
            if (keysAndValues.size() % 2 != 0) {
                throw new IllegalArgumentException("a map needs an even number of elements");
            }
            return new Aggregate('%', keysAndValues.size() / 2, List.copyOf(keysAndValues));
        }

        /** A set. */
        static Aggregate set(List<RedisMessage> elements) {
            return new Aggregate('~', elements.size(), List.copyOf(elements));
        }

        /** {@code %} or {@code ~}. */
        char type() {
            return type;
        }

        /** Entries of a map, elements of a set. */
        int count() {
            return count;
        }

        List<RedisMessage> elements() {
            return elements;
        }

        @Override
        protected void deallocate() {
            for (RedisMessage m : elements) {
                ReferenceCountUtil.release(m);
            }
        }

        @Override
        public Aggregate touch(Object hint) {
            for (RedisMessage m : elements) {
                ReferenceCountUtil.touch(m, hint);
            }
            return this;
        }
    }
}
