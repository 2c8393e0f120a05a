package io.tiffin.core.gateway;

import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A value lent by the store ({@link GatewayStore.Lent}) as a Netty buffer: its parts wrapped, not copied, so a
 * reply made of it is sent from the store's memory. The loan ends when the buffer's last reference is
 * released — by Netty once the reply is written, or when its write fails or the connection closes — and
 * therefore exactly once; {@code open} counts the loans not yet ended (a leak check).
 *
 * <p>Thread-safe as Netty's reference counting is: built on one thread, released on whichever drops the last
 * reference; the loan is closed on that thread.
 */
final class LentValue extends CompositeByteBuf {
    private final GatewayStore.Lent lent;
    private final AtomicLong open;
    /** When the loan's bytes may stop being the value's ({@link System#nanoTime()}); MAX_VALUE: never. */
    private final long validUntilNanos;

    /** Takes the loan over; {@link EncodedReply#bulk} may add the reply's framing around it. */
    LentValue(GatewayStore.Lent lent, AtomicLong open) {
        super(UnpooledByteBufAllocator.DEFAULT, true, lent.parts().size() + 2);
        this.lent = lent;
        this.open = open;
        long validFor = lent.validForNanos();
        long now = System.nanoTime();
        this.validUntilNanos = validFor == Long.MAX_VALUE || now + validFor < now ? Long.MAX_VALUE : now + validFor;
        try {
            for (ByteBuffer part : lent.parts()) {
                addComponent(true, Unpooled.wrappedBuffer(part.duplicate()));
            }
        } catch (RuntimeException e) {
            lent.close();
            throw e;
        }
        open.incrementAndGet();
    }

    /** How much longer the bytes are the value's (Long.MAX_VALUE: until released). */
    long validForNanos() {
        return validUntilNanos == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, validUntilNanos - System.nanoTime());
    }

    /** The lent bytes of {@code reply}, or null when it holds none. */
    static LentValue of(io.netty.handler.codec.redis.RedisMessage reply) {
        return reply instanceof EncodedReply e && e.content() instanceof LentValue v ? v : null;
    }

    @Override
    protected void deallocate() {
        try {
            super.deallocate();
        } finally {
            open.decrementAndGet();
            lent.close();
        }
    }
}
