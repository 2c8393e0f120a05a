package io.tiffin.core.gateway;

import io.netty.handler.codec.redis.RedisMessage;
import io.tiffin.api.TiffinException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A lone plain SET of a small value (the only command of its read) stored on the event loop, without a hand-over
 * to a command thread, when the store can put without any wait ({@link GatewayStore#putWithoutWaiting}: for Tiffin's store, in the standalone, where
 * the master and the node are in this process) and the connection has nothing else under way
 * ({@link CommandRunner#idle}). The connection is enlisted meanwhile ({@link CommandRunner#tryEnlist}), so its
 * later commands wait: a SET replacing a value that other clients hold cached is answered only once their caches
 * let go (as on the usual path), and that reply then comes from the master's held-replies thread, in order, while
 * the event loop goes on serving everyone else. A SET the store cannot take so goes the usual way, and so do
 * pipelined SETs: one batch call for all of them ({@link LoopBatch}, two master calls for the lot) costs less per
 * key than a put each on the loop, which would also hold the loop for the whole run.
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
     * Stores {@code commands}' only command if it is a small plain SET the store takes without waiting; returns 1
     * if it did (the command is then the runner's, answered once its put may be reported), else 0.
     */
    int serve(List<RespCommand> commands) {
        if (commands.size() != 1 || !isSmallSet(commands.getFirst()) || !runner.idle() || !runner.tryEnlist()) {
            return 0;
        }
        RespCommand set = commands.getFirst();
        CompletableFuture<Void> stored;
        try {
            stored = gw.store.putWithoutWaiting(set.key(1), set.arg(2));
        } catch (RespError | TiffinException e) {
            stored = null; // a key that is not UTF-8, or one the store refuses: the usual path answers it
        }
        if (stored == null) {
            runner.unenlist();
            return 0;
        }
        gw.stats.readySets.increment();
        CompletableFuture<Void> put = stored;
        put.whenComplete((v, e) -> runner.enlistedDone(List.of(set), List.of(replyOf(put)), 0));
        return 1;
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
                    : Replies.error(RespError.err("SET failed unexpectedly (" + e.getCause() + "); the value may or may"
                            + " not be stored: read it back, or SET it again"));
        }
    }
}
