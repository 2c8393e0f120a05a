package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.redis.FullBulkStringRedisMessage;
import io.netty.handler.codec.redis.RedisMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The plain GETs and SETs that idle connections of one event loop read in one pass of the loop, run
 * together: one virtual thread, one batch call to the store for the GETs and one for the SETs, instead of
 * a thread hand-over and a store call per connection. Without pipelining every client has one command in
 * flight, and this is what lets many of them share the cost of a store round trip (a SET is two master
 * calls, a batch of SETs two as well).
 *
 * <p>A connection takes part only when nothing of it is queued, running or waiting to be written
 * ({@link CommandRunner#tryEnlist}), so its replies keep their order; anything else goes to its runner as
 * usual. A batch holds each SET key once.
 *
 * <p>Not thread-safe: {@link #offer} is called on the loop's thread; the batch then runs on a virtual thread
 * and gives each connection its replies through {@link CommandRunner#enlistedDone}.
 */
final class LoopBatch {
    /** Most keys of one batch call. */
    private static final int MAX_KEYS = 512;

    private final EventLoop loop;
    private final GatewayContext gw;
    private final StringCommands strings;
    private final Executor executor;
    private final long maxGetBytes;
    private List<Entry> gets = new ArrayList<>();
    private List<Entry> sets = new ArrayList<>();
    private final Set<String> setKeys = new HashSet<>();
    private int keys;
    /** Bytes the GETs of the batch are expected to read (the store's size hints). */
    private long getBytes;
    private boolean flushScheduled;

    /** One connection's commands in the batch. Thread-safe (immutable; the commands are the batch's). */
    private record Entry(CommandRunner runner, List<RespCommand> commands, List<String> keys, int protocol) {
    }

    LoopBatch(EventLoop loop, GatewayContext gw, StringCommands strings, Executor executor) {
        this.loop = loop;
        this.gw = gw;
        this.strings = strings;
        this.executor = executor;
        // a batch holds all its values until every reply is written: keep it well inside the memory budget
        this.maxGetBytes = Math.min(64L << 20, gw.settings.maxMemory() / 4);
    }

    /**
     * Takes a connection's commands of one read if they are all plain GETs or all plain SETs of distinct keys
     * and the connection is idle; returns whether it took them (then they are no longer the caller's).
     */
    boolean offer(CommandRunner runner, Session session, List<RespCommand> commands) {
        if (keys + commands.size() > MAX_KEYS) {
            return false;
        }
        boolean get = commands.stream().allMatch(CommandRunner::isPlainGet);
        boolean set = !get && commands.stream().allMatch(CommandRunner::isPlainSet);
        if (!get && !set) {
            return false;
        }
        List<String> ks = new ArrayList<>(commands.size());
        try {
            for (RespCommand c : commands) {
                ks.add(c.key(1));
            }
        } catch (RespError notUtf8) {
            return false; // its runner answers it with the error, in its place
        }
        if (set && (new HashSet<>(ks).size() != ks.size() || ks.stream().anyMatch(setKeys::contains))) {
            return false;
        }
        long expected = 0;
        if (get) {
            for (String k : ks) {
                long hint = gw.store.sizeHint(k);
                if (hint < 0) {
                    return false; // a value of unknown size is read by its connection alone
                }
                expected += hint;
            }
            if (getBytes + expected > maxGetBytes && !gets.isEmpty()) {
                return false;
            }
        }
        if (!runner.tryEnlist()) {
            return false;
        }
        (get ? gets : sets).add(new Entry(runner, List.copyOf(commands), ks, session.protocol()));
        if (set) {
            setKeys.addAll(ks);
        }
        keys += ks.size();
        getBytes += expected;
        if (!flushScheduled) {
            flushScheduled = true;
            loop.execute(this::flush); // after the rest of this pass's reads
        }
        return true;
    }

    private void flush() {
        flushScheduled = false;
        List<Entry> g = gets;
        List<Entry> s = sets;
        gets = new ArrayList<>();
        sets = new ArrayList<>();
        setKeys.clear();
        keys = 0;
        getBytes = 0;
        if (!g.isEmpty()) {
            start(g, () -> runGets(g));
        }
        if (!s.isEmpty()) {
            start(s, () -> runSets(s));
        }
    }

    private void start(List<Entry> entries, Runnable batch) {
        try {
            executor.execute(batch);
        } catch (RejectedExecutionException stopping) {
            RedisMessage error = Replies.error(RespError.err("UNAVAILABLE_IN_CURRENT_STATUS the gateway is stopping"));
            for (Entry e : entries) {
                e.runner().enlistedDone(e.commands(), java.util.Collections.nCopies(e.keys().size(), error), 0);
            }
        }
    }

    private void runGets(List<Entry> entries) {
        List<String> all = new ArrayList<>();
        entries.forEach(e -> all.addAll(e.keys()));
        ValueCredit credit = new ValueCredit(gw.budget, ValueAllocator.POOL);
        List<RedisMessage> replies;
        long reserved;
        try {
            long need = 0;
            for (String k : all) {
                need += MemoryBudget.valueCapacity((int) Math.max(0, Math.min(Integer.MAX_VALUE - 64,
                        gw.store.sizeHint(k))));
            }
            credit.expect(need); // the whole batch at once: no two batches each wait holding half
            replies = strings.getRun(all, credit, 2);
        } catch (RuntimeException e) {
            gw.budget.release(credit.settle());
            if (e instanceof io.tiffin.api.TiffinException t) {
                answerAll(entries, Replies.error(RespError.store(t, "GET")));
                return;
            }
            fail(entries, "GET", e);
            return;
        } catch (Error e) {
            gw.budget.release(credit.settle());
            fail(entries, "GET", e);
            throw e;
        }
        reserved = credit.settle();
        long given = 0;
        int at = 0;
        for (Entry e : entries) {
            List<RedisMessage> mine = new ArrayList<>(e.keys().size());
            long held = 0;
            long lent = 0;
            for (int i = 0; i < e.keys().size(); i++) {
                RedisMessage m = replies.get(at++);
                if (LentValue.of(m) != null) {
                    lent += Replies.weight(m); // the store's memory held for the reply, counted as the gateway's
                } else if (m instanceof io.netty.buffer.ByteBufHolder b && b.content().capacity() > 0) {
                    held += b.content().capacity(); // a value read for this reply (capacity = what was reserved)
                }
                mine.add(e.protocol() == 3 && m == FullBulkStringRedisMessage.NULL_INSTANCE ? Resp3.NULL : m);
            }
            given += held;
            gw.budget.forceReserve(lent);
            e.runner().enlistedDone(e.commands(), mine, held + lent);
        }
        gw.budget.release(reserved - given); // buffers of reads that failed or were read again
    }

    private void runSets(List<Entry> entries) {
        List<String> all = new ArrayList<>();
        List<ByteBuf> values = new ArrayList<>();
        for (Entry e : entries) {
            all.addAll(e.keys());
            e.commands().forEach(c -> values.add(c.arg(2)));
        }
        List<RedisMessage> replies;
        try {
            replies = strings.setRun(all, values);
        } catch (RuntimeException e) {
            fail(entries, "SET", e);
            return;
        } catch (Error e) {
            fail(entries, "SET", e);
            throw e;
        }
        int at = 0;
        for (Entry e : entries) {
            e.runner().enlistedDone(e.commands(), replies.subList(at, at + e.keys().size()), 0);
            at += e.keys().size();
        }
    }

    /** A bug of the store or of the gateway: every command of the batch is answered with it, none is left waiting. */
    private static void fail(List<Entry> entries, String command, Throwable e) {
        org.apache.logging.log4j.LogManager.getLogger(LoopBatch.class).warn("RESP {} batch failed unexpectedly",
                command, e);
        answerAll(entries, Replies.error(RespError.err("INTERNAL_ERROR " + command + " failed: " + e
                + "; check the gateway's log")));
    }

    private static void answerAll(List<Entry> entries, RedisMessage error) {
        for (Entry entry : entries) {
            entry.runner().enlistedDone(entry.commands(), java.util.Collections.nCopies(entry.keys().size(), error), 0);
        }
    }
}
