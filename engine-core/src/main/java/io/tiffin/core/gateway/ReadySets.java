package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Plain SETs of small values stored on the event loop, without a hand-over to a command thread, when the store
 * can put without any wait ({@link GatewayStore#putWithoutWaiting}: for Tiffin's store, in the standalone, where
 * the master and the node are in this process) and the connection has nothing else under way
 * ({@link CommandRunner#idle}). The connection is enlisted meanwhile ({@link CommandRunner#tryEnlist}), so its
 * later commands wait: a SET replacing a value that other clients hold cached is answered only once their caches
 * let go (as on the usual path), and that reply then comes from the master's held-replies thread, in order, while
 * the event loop goes on serving everyone else. The first SET the store cannot take so, and every command after
 * it, go the usual way.
 *
 * <p>Not thread-safe: one per connection, used on its event loop.
 */
final class ReadySets {
    /** Values up to this size are stored on the event loop (its copy and checksum stay short). */
    static final int MAX_VALUE = 32 * 1024;

    private final GatewayContext gw;
    private final CommandRunner runner;

    ReadySets(GatewayContext gw, CommandRunner runner) {
        this.gw = gw;
        this.runner = runner;
    }

    /**
     * Stores the leading plain SETs of {@code commands} that the store takes without waiting; returns how many
     * it stored (those commands are then the runner's, answered in order once their puts may be reported).
     */
    int serve(List<RespCommand> commands) {
        if (!isSmallSet(commands.getFirst()) || !runner.idle() || !runner.tryEnlist()) {
            return 0;
        }
        List<CompletableFuture<Void>> stored = new ArrayList<>();
        for (RespCommand c : commands) {
            if (!isSmallSet(c)) {
                break;
            }
            CompletableFuture<Void> put;
            try {
                put = gw.store.putWithoutWaiting(c.key(1), c.arg(2));
            } catch (RespError | TiffinException e) {
                put = null; // a key that is not UTF-8, or one the store refuses: the usual path answers it
            }
            if (put == null) {
                break;
            }
            stored.add(put);
        }
        int n = stored.size();
        if (n == 0) {
            runner.unenlist();
            return 0;
        }
        gw.stats.readySets.add(n);
        List<RespCommand> done = new ArrayList<>(commands.subList(0, n));
        CompletableFuture.allOf(stored.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> {
            List<RedisMessage> replies = new ArrayList<>(n);
            for (CompletableFuture<Void> put : stored) {
                replies.add(replyOf(put));
            }
            runner.enlistedDone(done, replies, 0);
        });
        return n;
    }

    private static boolean isSmallSet(RespCommand c) {
        return CommandRunner.isPlainSet(c) && c.arg(2).readableBytes() <= MAX_VALUE;
    }

    /** OK, or the error the usual path would have given, for a completed put. */
    private static RedisMessage replyOf(CompletableFuture<Void> put) {
        try {
            put.join();
            return Replies.OK;
        } catch (CompletionException e) {
            return e.getCause() instanceof TiffinException t ? Replies.error(RespError.store(t, "SET"))
                    : Replies.error(RespError.err("SET failed: " + e.getCause()));
        }
    }
}
