package io.tiffin.core.gateway;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Keeps the socket of one connection from sending bytes a reply borrowed from the store ({@link LentValue}) once
 * they may have stopped being the value's. Three quarters into the loans (and at least {@link #MARGIN_NANOS} before
 * they end), a reply still being written has its loans renewed when the client took some of it meanwhile: off the
 * event loop the store lends the same bytes again for a new lease ({@link LentValue#renew}), and the guard starts
 * over. The connection is closed instead when the client took nothing since the last look, or when a loan cannot be
 * renewed (the value was replaced, removed or moved) and the reply is still unsent shortly before that loan ends.
 * Closing on the event loop stops the socket's writes.
 *
 * <p>A client that keeps reading, however slowly, gets the whole reply; one that stops is cut off within one lease.
 *
 * <p>Thread-safe: {@link #guard} runs on the connection's event loop, renewals on the command executor, and each
 * hands back to the event loop.
 */
final class LeaseGuard {
    private static final Logger LOG = LogManager.getLogger(LeaseGuard.class);

    /**
     * Least time left for the event loop to close the connection between the guard's moment and the end of the
     * store's hold on the bytes being sent (a late timer, a busy loop).
     */
    static final long MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final GatewayStats stats;
    private final Channel channel;
    private final Executor executor;

    LeaseGuard(GatewayStats stats, Channel channel, Executor executor) {
        this.stats = stats;
        this.channel = channel;
        this.executor = executor;
    }

    /**
     * On the event loop: watches the writing of the replies of {@code promise}, which send the bytes of {@code lent}
     * (released ones no longer count), until the promise completes.
     */
    void guard(ChannelPromise promise, List<LentValue> lent) {
        long valid = validFor(lent);
        if (valid == Long.MAX_VALUE) {
            return;
        }
        long delay = Math.max(0, valid - Math.max(valid / 4, MARGIN_NANOS));
        Mark mark = Mark.of(channel);
        ScheduledFuture<?> timer = channel.eventLoop().schedule(() -> {
            if (promise.isDone()) {
                return;
            }
            if (mark.equals(Mark.of(channel))) {
                close("the client took none of it in " + TimeUnit.NANOSECONDS.toMillis(delay) + " ms");
            } else {
                renew(promise, lent);
            }
        }, delay, TimeUnit.NANOSECONDS);
        promise.addListener(f -> timer.cancel(false));
    }

    /** On the event loop: renews the loans off it; closes the connection if that is not done before they end. */
    private void renew(ChannelPromise promise, List<LentValue> lent) {
        long before = validFor(lent);
        ScheduledFuture<?> deadline = channel.eventLoop().schedule(() -> {
            if (!promise.isDone()) {
                close("its value was replaced, removed or moved, or the store could not lend it again in time");
            }
        }, Math.max(0, before - MARGIN_NANOS), TimeUnit.NANOSECONDS);
        promise.addListener(f -> deadline.cancel(false));
        try {
            executor.execute(() -> {
                for (LentValue v : lent) {
                    if (v.validForNanos() != Long.MAX_VALUE) {
                        v.renew();
                    }
                }
                channel.eventLoop().execute(() -> {
                    if (promise.isDone() || validFor(lent) - before <= MARGIN_NANOS || !deadline.cancel(false)) {
                        return; // done; or not renewed (the deadline stands); or closed already
                    }
                    stats.lentRenewed.increment();
                    guard(promise, lent);
                });
            });
        } catch (RejectedExecutionException e) {
            // shutting down: the deadline closes the connection if the reply is still being written then
        }
    }

    private void close(String why) {
        stats.lentExpired.increment();
        LOG.warn("Closing RESP connection from {}: a reply sent from Tiffin's memory is still being written and {}, "
                + "before the read lease on its bytes ends", channel.remoteAddress(), why);
        channel.close();
    }

    /** What is left of the shortest loan among {@code lent}, nanoseconds (MAX_VALUE: none is limited). */
    private static long validFor(List<LentValue> lent) {
        long valid = Long.MAX_VALUE;
        for (LentValue v : lent) {
            valid = Math.min(valid, v.validForNanos());
        }
        return valid;
    }

    /**
     * How far the connection's socket writes have got, as Netty's idle detection with {@code observeOutput} reads
     * it: the message being written and how much of it was. A different mark later means the client took bytes.
     * Pending bytes are left out: a queued reply adds to them without anything being taken.
     */
    private record Mark(Object current, long progress) {
        static Mark of(Channel channel) {
            ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
            return buf == null ? new Mark(null, -1) : new Mark(buf.current(), buf.currentProgress());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Mark m && m.current == current && m.progress == progress; // the same message object
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(current) * 31 + Long.hashCode(progress);
        }
    }
}
