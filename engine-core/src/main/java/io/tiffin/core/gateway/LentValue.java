package io.tiffin.core.gateway;

import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A value lent by the store ({@link GatewayStore.Lent}) as a Netty buffer: its parts wrapped, not copied, so a
 * reply made of it is sent from the store's memory. The loan ends when the buffer's last reference is
 * released — by Netty once the reply is written, or when its write fails or the connection closes — and
 * therefore exactly once; {@code open} counts the loans not yet ended (a leak check).
 *
 * <p>A reply that takes longer to write than the loan lasts may have it renewed ({@link #renew}, off the event
 * loop): the store lends the same bytes again, for longer, and the earlier loan is closed.
 *
 * <p>Thread-safe: built on one thread, released on whichever drops the last reference (the loan is closed on
 * that thread); {@link #renew} may run on another meanwhile (the loan is swapped under a lock).
 */
final class LentValue extends CompositeByteBuf {
    private static final Logger LOG = LogManager.getLogger(LentValue.class);
    private final AtomicLong open;
    private final Object loanLock = new Object();
    /** The loan now (a renewal replaces it); guarded by {@code loanLock}. */
    private GatewayStore.Lent lent;
    /** Released (the loan closed); guarded by {@code loanLock}. */
    private boolean ended;
    /**
     * When the loan's bytes may stop being the value's ({@link System#nanoTime()}); MAX_VALUE: never (or the loan
     * ended: nothing to keep valid any more).
     */
    private volatile long validUntilNanos;

    /** Takes the loan over; {@link EncodedReply#bulk} may add the reply's framing around it. */
    LentValue(GatewayStore.Lent lent, AtomicLong open) {
        super(UnpooledByteBufAllocator.DEFAULT, true, lent.parts().size() + 2);
        this.lent = lent;
        this.open = open;
        this.validUntilNanos = until(lent.validForNanos());
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

    private static long until(long validForNanos) {
        long now = System.nanoTime();
        return validForNanos == Long.MAX_VALUE || now + validForNanos < now ? Long.MAX_VALUE : now + validForNanos;
    }

    /**
     * How much longer the bytes are the value's (Long.MAX_VALUE: until released, or released already: nothing
     * reads them any more).
     */
    long validForNanos() {
        long until = validUntilNanos;
        return until == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, until - System.nanoTime());
    }

    /**
     * Asks the store for a longer loan of the same bytes ({@link GatewayStore.Lent#renew}; may wait: never on an
     * event loop) and takes it instead of the current one. Whether the bytes are now valid for longer than before.
     */
    boolean renew() {
        GatewayStore.Lent current;
        synchronized (loanLock) {
            if (ended) {
                return false;
            }
            current = lent;
        }
        GatewayStore.Lent renewed;
        try {
            renewed = current.renew();
        } catch (RuntimeException e) {
            // a store that failed to renew (or a loan released meanwhile): the bytes last as long as they did
            LOG.debug("renewing a loan failed", e);
            return false;
        }
        if (renewed == null) {
            return false;
        }
        long until = until(renewed.validForNanos());
        synchronized (loanLock) {
            if (ended || lent != current || until - validUntilNanos <= 0) {
                renewed.close(); // released meanwhile, or no longer than before
                return false;
            }
            lent = renewed;
            validUntilNanos = until;
        }
        current.close();
        return true;
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
            GatewayStore.Lent last;
            synchronized (loanLock) {
                ended = true;
                validUntilNanos = Long.MAX_VALUE;
                last = lent;
            }
            last.close();
        }
    }
}
