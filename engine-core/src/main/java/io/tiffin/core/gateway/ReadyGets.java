package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.redis.RedisMessage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Plain GETs and one-key EXISTS answered on the event loop, without a hand-over to a command thread. A GET when
 * the store has the value at hand ({@link GatewayStore#lend}: for Tiffin's store, a location in the client's
 * location cache, or from a master in this JVM asked directly, and the bytes in this process) or knows it missing
 * (that master said so: nil, as the usual read would answer); an EXISTS when the store knows the answer at hand
 * ({@link GatewayStore#existsAtHand}: the location cache, or the master of this JVM). Only while the connection
 * has nothing else under way ({@link CommandRunner#idle}), so the replies keep their order. The first command the
 * store cannot answer so, and every command after it, go the usual way.
 *
 * <p>A value of at most {@link #COPY_MAX} bytes is copied into its reply (cheaper than holding the store's
 * memory for the write); a larger one is sent from the store's memory as it is ({@link LentValue}), counted
 * in {@code gateway.max-memory} until written, under the connection's {@link LeaseGuard} (the store's hold on the
 * bytes renewed while the client takes them, else the connection closed before it ends). One read's replies stop
 * at {@code gateway.write-buffer};
 * a value that finds no room in the memory budget is left to the usual path, which waits for room.
 *
 * <p>Not thread-safe: one per connection, used on its event loop.
 */
final class ReadyGets {
    /** Values up to this size are copied into their reply; larger ones are sent from the store's memory. */
    static final int COPY_MAX = 32 * 1024;
    /** A larger value lent for less than this is left to the usual path (the guard would be too tight). */
    static final long MIN_LEND_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final GatewayContext gw;
    private final CommandRunner runner;
    private final Session session;
    private final ByteBufAllocator alloc;

    ReadyGets(GatewayContext gw, CommandRunner runner, Session session, ByteBufAllocator alloc) {
        this.gw = gw;
        this.runner = runner;
        this.session = session;
        this.alloc = alloc;
    }

    /**
     * Answers the leading plain GETs of {@code commands} whose values the store has at hand and writes their
     * replies; returns how many it answered (those commands are then released).
     */
    int serve(List<RespCommand> commands) {
        if (!isReady(commands.getFirst()) || !runner.idle()) {
            return 0;
        }
        List<RedisMessage> replies = new ArrayList<>();
        long bytes = 0;
        long reserved = 0;
        int n = 0;
        int missing = 0;
        int existsAnswered = 0;
        try {
            for (RespCommand c : commands) {
                if (!isReady(c) || bytes >= gw.settings.writeBuffer()) {
                    break;
                }
                if (!CommandRunner.isPlainGet(c)) {
                    Boolean exists = existsAtHand(c);
                    if (exists == null) {
                        break;
                    }
                    replies.add(Replies.integer(exists ? 1 : 0));
                    existsAnswered++;
                    n++;
                    continue;
                }
                GatewayStore.Lent lent = lend(c);
                if (lent == null) {
                    break;
                }
                if (lent == GatewayStore.MISSING) {
                    replies.add(Replies.nil(session.protocol()));
                    missing++;
                    n++;
                    continue;
                }
                long size = lent.size();
                long valid = lent.validForNanos();
                RedisMessage reply;
                if (size <= COPY_MAX && valid > 0) {
                    reply = copied(lent);
                } else if (valid >= MIN_LEND_NANOS && gw.budget.tryReserve(size, 0)) {
                    reserved += size;
                    reply = EncodedReply.bulk(new LentValue(lent, gw.stats.lentOpen));
                    gw.stats.lentReplies.increment();
                } else {
                    lent.close();
                    reply = null;
                }
                if (reply == null) {
                    break;
                }
                if (size <= COPY_MAX) {
                    reserved += MemoryBudget.valueCapacity((int) size);
                }
                replies.add(reply);
                bytes += Replies.weight(reply);
                n++;
            }
        } catch (RuntimeException | Error e) {
            replies.forEach(io.netty.util.ReferenceCountUtil::release);
            gw.budget.release(reserved);
            throw e;
        }
        if (n == 0) {
            return 0;
        }
        gw.stats.hits.add(n - missing - existsAnswered);
        gw.stats.misses.add(missing);
        gw.stats.readyGets.add(n - existsAnswered);
        gw.stats.readyExists.add(existsAnswered);
        runner.writeNow(new ArrayList<>(commands.subList(0, n)), replies, reserved);
        return n;
    }

    /** A plain GET, or an EXISTS of one key. */
    private static boolean isReady(RespCommand c) {
        return CommandRunner.isPlainGet(c) || (c.argc() == 2 && c.name().equals("EXISTS"));
    }

    /** Whether the EXISTS's key holds a value, if the store knows at hand; else null (the usual path answers). */
    private Boolean existsAtHand(RespCommand exists) {
        try {
            return gw.store.existsAtHand(exists.key(1));
        } catch (RespError | io.tiffin.api.TiffinException e) {
            return null;
        }
    }

    /** The store's loan of the GET's value, or null (a key that is not UTF-8 is answered by the usual path). */
    private GatewayStore.Lent lend(RespCommand get) {
        try {
            return gw.store.lend(get.key(1));
        } catch (RespError | io.tiffin.api.TiffinException e) {
            return null;
        }
    }

    /** A small value copied into its framed reply, the loan ended; null (loan ended) when the budget has no room. */
    private RedisMessage copied(GatewayStore.Lent lent) {
        try (lent) {
            int size = (int) lent.size();
            if (!gw.budget.tryReserve(MemoryBudget.valueCapacity(size), 0)) {
                return null;
            }
            ByteBuf buf = null;
            try {
                buf = MemoryBudget.valueBuffer(alloc, size);
                for (ByteBuffer part : lent.parts()) {
                    buf.writeBytes(part.duplicate());
                }
                return EncodedReply.bulk(buf);
            } catch (RuntimeException e) {
                if (buf != null) {
                    buf.release();
                }
                gw.budget.release(MemoryBudget.valueCapacity(size));
                throw e;
            }
        }
    }
}
