package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelProgressiveFuture;
import io.netty.channel.ChannelProgressiveFutureListener;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.redis.RedisMessage;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs one connection's commands, in the order they arrived, one at a time, off the event loop (on a
 * virtual thread started when work arrives), and hands their replies to the event loop in that order.
 * Consecutive plain GETs, and consecutive plain SETs of distinct keys, go to the store as one batch call
 * (a pipeline's GETs and SETs of one read and more).
 *
 * <p>Replies the client has not taken yet are bounded by {@code gateway.write-buffer}: past it no further
 * command runs until the client has read half of them. A value read for a reply is counted in the
 * gateway's memory budget until its reply has been written to the socket.
 *
 * <p>Thread-safe: {@link #submit}, {@link #fail} and {@link #close} are called by the event loop, the
 * commands run on one thread at a time, write-completion callbacks come from the event loop.
 */
final class CommandRunner implements Runnable {
    /** Most commands of one batch call. */
    private static final int MAX_RUN = 512;
    /** Replies of at least this many bytes are handed to the event loop at once. */
    private static final long HAND_OVER_BYTES = 256 * 1024;
    /** What a GET of a key whose size the store does not know is expected to answer. */
    private static final long UNKNOWN_SIZE = 16 * 1024;
    /**
     * Replies of at least this many bytes that hold reserved memory report the progress of their partial writes to
     * the budget ({@link MemoryBudget#writeProgressed}): one that a slow client takes seconds to read holds its
     * memory all that time without a release. A smaller reply counts when it is written ({@link WriteProgress}); a
     * client that takes more than the budget's 10 s wait for 4 MiB has all but stopped reading.
     */
    static final long PROGRESS_BYTES = 4 << 20;

    private final GatewayContext gw;
    private final CommandTable table;
    private final Session session;
    private final Channel channel;
    private final Executor executor;
    private final RespConnection connection;
    private final LeaseGuard leaseGuard;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** Bytes of replies handed to the event loop and not yet written to the socket. */
    private final AtomicLong unwritten = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition drained = lock.newCondition();
    private final long writeBuffer;
    private volatile boolean closed;
    private volatile boolean busy;
    /** Commands of this connection are in a {@link LoopBatch}. */
    private volatile boolean enlisted;
    /** The running thread waits in {@link #awaitRoom}: only then do write completions signal. */
    private volatile boolean awaiting;

    /** Replies not handed over yet, their bytes and the memory reserved for them. Used by the running thread only. */
    private final List<RedisMessage> pending = new ArrayList<>();
    private long pendingBytes;
    private long pendingReserved;
    /** Memory reserved for the replies of the command running now. */
    private long reservedNow;
    /** Tells the memory budget that part of a large reply reached the socket (on the event loop). */
    private final ChannelProgressiveFutureListener writeProgress = new ChannelProgressiveFutureListener() {
        @Override
        public void operationProgressed(ChannelProgressiveFuture future, long progress, long total) {
            gw.budget.writeProgressed();
        }

        @Override
        public void operationComplete(ChannelProgressiveFuture future) {
            // the reply's memory is released with the last reply's promise (written)
        }
    };

    /**
     * Marks a protocol error in the queue: answer it after the commands before it, then close.
     *
     * <p>Thread-safe (immutable).
     */
    private record ProtocolError(String text) {
    }

    CommandRunner(GatewayContext gw, CommandTable table, Session session, Channel channel, Executor executor,
                  RespConnection connection) {
        this.gw = gw;
        this.table = table;
        this.session = session;
        this.channel = channel;
        this.executor = executor;
        this.connection = connection;
        this.leaseGuard = new LeaseGuard(gw.stats, channel, executor);
        this.writeBuffer = gw.settings.writeBuffer();
    }

    /** Queues commands (from the event loop); they are released once they have run or been dropped. */
    void submit(List<RespCommand> commands) {
        queue.addAll(commands);
        schedule();
    }

    /** Queues a protocol error: answered after the commands queued before it, then the connection closes. */
    void fail(String text) {
        queue.add(new ProtocolError(text));
        schedule();
    }

    /** Replies not yet written to the socket, bytes. */
    long unwritten() {
        return unwritten.get();
    }

    /** Whether a command is running or waiting to. */
    boolean busy() {
        return busy || enlisted || !queue.isEmpty();
    }

    /**
     * Takes this connection's next commands out of the runner's hands for a {@link LoopBatch} (on the event
     * loop): only when nothing of it is queued, running or waiting to be written, so that their replies come
     * in order. Until {@link #enlistedDone} no command of it runs.
     */
    boolean tryEnlist() {
        if (closed || session.closing() || !session.authenticated() || unwritten.get() >= writeBuffer / 2
                || !queue.isEmpty() || !scheduled.compareAndSet(false, true)) {
            return false;
        }
        enlisted = true;
        return true;
    }

    /** Gives back an enlistment nothing was taken for ({@link #tryEnlist}): the runner goes on as before it. */
    void unenlist() {
        enlisted = false;
        scheduled.set(false);
        if (!queue.isEmpty()) {
            schedule();
        }
    }

    /**
     * Whether replies may be written at once on the event loop ({@link ReadyGets}): no command of this
     * connection is queued, running, in a {@link LoopBatch} or waiting to be written, so they come in order.
     * Event loop only.
     */
    boolean idle() {
        return !closed && !session.closing() && session.authenticated() && !enlisted && !scheduled.get()
                && queue.isEmpty() && unwritten.get() == 0;
    }

    /**
     * On the event loop, right after {@link #idle()}: writes the replies of {@code commands} answered there,
     * {@code reserved} bytes of the memory budget released once they are written.
     */
    void writeNow(List<RespCommand> commands, List<RedisMessage> replies, long reserved) {
        long bytes = 0;
        long weight = 0;
        for (RedisMessage m : replies) {
            bytes += Replies.weight(m);
        }
        for (RespCommand c : commands) {
            weight += c.weight();
            c.release();
        }
        gw.stats.commandsProcessed.add(commands.size());
        connection.commandsDone(weight);
        unwritten.addAndGet(bytes);
        write(replies, bytes, reserved, End.NONE);
    }

    /**
     * The replies of the enlisted {@code commands} (any thread): written in order, with {@code reserved} bytes
     * of the memory budget released once they are; then the commands are released and the runner goes on.
     */
    void enlistedDone(List<RespCommand> commands, List<RedisMessage> replies, long reserved) {
        long bytes = 0;
        for (RedisMessage m : replies) {
            bytes += Replies.weight(m);
            if (Replies.isError(m)) {
                gw.stats.errorReplies.increment();
            }
        }
        gw.stats.commandsProcessed.add(commands.size());
        deliver(new ArrayList<>(replies), bytes, reserved, End.NONE);
        long weight = 0;
        for (RespCommand c : commands) {
            weight += c.weight();
            c.release();
        }
        connection.commandsDone(weight);
        unenlist();
    }

    /** The connection closed: queued commands are dropped, a waiting command gives up. */
    void close() {
        closed = true;
        signal();
        schedule();
    }

    private void schedule() {
        if (scheduled.compareAndSet(false, true)) {
            try {
                executor.execute(this);
            } catch (RejectedExecutionException e) {
                closed = true; // the gateway is stopping
                drop();
                scheduled.set(false);
            }
        }
    }

    @Override
    public void run() {
        busy = true;
        try {
            while (true) {
                Object item = queue.poll();
                if (item == null) {
                    handOver(End.NONE);
                    busy = false;
                    scheduled.set(false);
                    if (queue.isEmpty() || !scheduled.compareAndSet(false, true)) {
                        return;
                    }
                    busy = true;
                    continue;
                }
                if (closed || session.closing()) {
                    release(item);
                    continue;
                }
                if (item instanceof ProtocolError e) {
                    gw.stats.errorReplies.increment();
                    pending.add(Replies.error(new RespError(e.text())));
                    handOver(End.LINGER);
                    closed = true;
                    continue;
                }
                runFrom((RespCommand) item);
            }
        } catch (RuntimeException | Error e) {
            closed = true;
            drop();
            channel.close();
            throw e;
        }
    }

    /** Runs {@code first} and, when it starts a run of plain GETs or SETs, the rest of the run. */
    private void runFrom(RespCommand first) {
        awaitRoom();
        if (closed) {
            first.release();
            return;
        }
        List<RespCommand> done = new ArrayList<>();
        done.add(first);
        try {
            boolean gets = isPlainGet(first) && isPlainGet(queue.peek());
            boolean sets = !gets && isPlainSet(first) && isPlainSet(queue.peek());
            String key = session.authenticated() && (gets || sets) ? keyOrNull(first) : null;
            if (key != null && gets) {
                runGets(first, key, done);
            } else if (key != null) {
                runSets(first, key, done);
            } else {
                ValueCredit credit = new ValueCredit(gw.budget, ValueAllocator.POOL);
                RedisMessage m;
                try {
                    m = table.execute(new CommandSpec.Call(session, first, credit));
                } finally {
                    reservedNow += credit.settle();
                }
                reply(m);
            }
        } finally {
            long weight = 0;
            for (RespCommand c : done) {
                weight += c.weight();
                c.release();
            }
            connection.commandsDone(weight);
        }
        if (session.closing()) {
            handOver(End.LINGER);
        } else if (pendingBytes >= HAND_OVER_BYTES) {
            handOver(End.NONE);
        }
    }

    static boolean isPlainGet(Object o) {
        return o instanceof RespCommand c && c.argc() == 2 && c.name().equals("GET");
    }

    static boolean isPlainSet(Object o) {
        return o instanceof RespCommand c && c.argc() == 3 && c.name().equals("SET") && c.arg(2).isReadable();
    }

    /** The key of {@code c}, or null when it is not valid UTF-8: the command then runs alone and answers the error. */
    private static String keyOrNull(RespCommand c) {
        try {
            return c.key(1);
        } catch (RespError invalid) {
            return null;
        }
    }

    private void runGets(RespCommand first, String firstKey, List<RespCommand> done) {
        List<String> keys = new ArrayList<>();
        keys.add(firstKey);
        long expected = expectedSize(keys.getFirst());
        // replies of one run are written together: keep them within what the client may have waiting
        while (keys.size() < MAX_RUN && expected < writeBuffer && isPlainGet(queue.peek())) {
            RespCommand next = (RespCommand) queue.peek();
            String key;
            try {
                key = next.key(1);
            } catch (RespError invalid) {
                break; // run on its own: its error comes in its place
            }
            if (gw.store.sizeHint(key) < 0) {
                break; // a value of unknown size (it may be large) starts a run of its own
            }
            queue.poll();
            done.add(next);
            keys.add(key);
            expected += expectedSize(key);
        }
        gw.stats.commandsProcessed.add(keys.size());
        ValueCredit credit = new ValueCredit(gw.budget, ValueAllocator.POOL);
        List<RedisMessage> replies;
        try {
            long need = 0;
            for (String k : keys) {
                need += MemoryBudget.valueCapacity((int) Math.min(Integer.MAX_VALUE - 64, expectedSize(k)));
            }
            credit.expect(need);
            replies = table.strings().getRun(keys, credit, session.protocol());
        } catch (io.tiffin.api.TiffinException e) {
            RedisMessage error = Replies.error(RespError.store(e, "GET"));
            replies = java.util.Collections.nCopies(keys.size(), error);
        } finally {
            reservedNow += credit.settle();
        }
        for (RedisMessage m : replies) {
            reply(m);
        }
    }

    /** The size a GET of {@code key} will probably answer (the store's hint; an unknown key as a small value). */
    private long expectedSize(String key) {
        long hint = gw.store.sizeHint(key);
        return hint < 0 ? UNKNOWN_SIZE : hint;
    }

    private void runSets(RespCommand first, String firstKey, List<RespCommand> done) {
        List<String> keys = new ArrayList<>();
        List<ByteBuf> values = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        keys.add(firstKey);
        values.add(first.arg(2));
        seen.add(keys.getFirst());
        while (keys.size() < MAX_RUN && isPlainSet(queue.peek())) {
            RespCommand next = (RespCommand) queue.peek();
            String key;
            try {
                key = next.key(1);
            } catch (RespError invalid) {
                break;
            }
            if (!seen.add(key)) {
                break; // the same key again: its SET must come after this run's
            }
            queue.poll();
            done.add(next);
            keys.add(key);
            values.add(next.arg(2));
        }
        gw.stats.commandsProcessed.add(keys.size());
        for (RedisMessage m : table.strings().setRun(keys, values)) {
            reply(m);
        }
    }

    private void reply(RedisMessage m) {
        if (Replies.isError(m)) {
            gw.stats.errorReplies.increment();
        }
        pending.add(m);
        long weight = Replies.weight(m);
        pendingBytes += weight;
        if (LentValue.of(m) != null) {
            gw.budget.forceReserve(weight); // the store's memory held for the reply, counted as the gateway's
            pendingReserved += weight;
            return;
        }
        // a reply that is not a value read for it (KEYS, SCAN, INFO, ...) is counted in the memory budget too
        long beyondValues = Math.max(0, weight - reservedNow);
        if (beyondValues > 4096) {
            gw.budget.forceReserve(beyondValues);
            reservedNow += beyondValues;
        }
        pendingReserved += reservedNow;
        reservedNow = 0;
    }

    /** Waits while the client has more than {@code gateway.write-buffer} of replies to take. */
    private void awaitRoom() {
        if (unwritten.get() + pendingBytes < writeBuffer) {
            return;
        }
        handOver(End.NONE);
        awaiting = true;
        lock.lock();
        try {
            while (!closed && unwritten.get() > writeBuffer / 2) {
                drained.awaitUninterruptibly();
            }
        } finally {
            lock.unlock();
            awaiting = false;
        }
    }

    /** What happens to the connection once the replies handed over are written. Thread-safe (constants). */
    private enum End {
        /** It stays open. */
        NONE,
        /**
         * No more is sent (FIN), what the client still sends is read and thrown away, and it closes after
         * {@link #LINGER_SECONDS}: QUIT or a protocol error, whose reply would be lost if the connection were
         * reset for bytes left unread.
         */
        LINGER
    }

    private static final long LINGER_SECONDS = 2;

    /** Gives the pending replies to the event loop, which writes and flushes them, then ends the connection as told. */
    private void handOver(End end) {
        if (pending.isEmpty()) {
            if (end != End.NONE) {
                channel.eventLoop().execute(() -> channel.close());
            }
            return;
        }
        List<RedisMessage> replies = new ArrayList<>(pending);
        long bytes = pendingBytes;
        long reserved = pendingReserved + reservedNow;
        pending.clear();
        pendingBytes = 0;
        pendingReserved = 0;
        reservedNow = 0;
        deliver(replies, bytes, reserved, end);
    }

    /** Hands {@code replies} ({@code bytes} on the wire, {@code reserved} in the budget) to the event loop. */
    private void deliver(List<RedisMessage> replies, long bytes, long reserved, End end) {
        unwritten.addAndGet(bytes);
        try {
            channel.eventLoop().execute(() -> write(replies, bytes, reserved, end));
        } catch (RejectedExecutionException e) {
            replies.forEach(ReferenceCountUtil::release);
            written(bytes, reserved, false);
        }
    }

    /**
     * On the event loop: writes the replies; when the last is written (or fails), their memory is given back.
     * A reply sent from memory the store lent for a limited time ({@link LentValue}) is written under a
     * {@link LeaseGuard}: its loans are renewed while the client takes it, else the connection is closed rather
     * than let the socket read bytes that may be another value's by then.
     */
    private void write(List<RedisMessage> replies, long bytes, long reserved, End end) {
        int last = replies.size() - 1;
        List<LentValue> lent = null;
        for (int i = 0; i <= last; i++) {
            LentValue v = LentValue.of(replies.get(i));
            if (v != null) {
                if (lent == null) {
                    lent = new ArrayList<>(2);
                }
                lent.add(v);
            }
            if (i < last) {
                channel.write(replies.get(i), reserved > 0 && Replies.weight(replies.get(i)) >= PROGRESS_BYTES
                        ? channel.newProgressivePromise().addListener(writeProgress) : channel.voidPromise());
            }
        }
        ChannelPromise promise = reserved > 0 && Replies.weight(replies.get(last)) >= PROGRESS_BYTES
                ? channel.newProgressivePromise().addListener(writeProgress) : channel.newPromise();
        promise.addListener(f -> written(bytes, reserved, f.isSuccess()));
        if (end == End.LINGER) {
            promise.addListener(f -> {
                if (channel instanceof DuplexChannel duplex && f.isSuccess()) {
                    duplex.shutdownOutput();
                    channel.eventLoop().schedule(() -> channel.close(), LINGER_SECONDS, TimeUnit.SECONDS);
                } else {
                    channel.close();
                }
            });
        }
        channel.writeAndFlush(replies.get(last), promise);
        if (lent != null) {
            leaseGuard.guard(promise, lent); // once the socket took what it could at once
        }
    }

    private void written(long bytes, long reserved, boolean success) {
        if (success) {
            gw.stats.outputBytes.add(bytes);
        }
        gw.budget.release(reserved);
        unwritten.addAndGet(-bytes);
        signal();
        connection.repliesWritten();
    }

    private void signal() {
        if (!awaiting) {
            return; // set before the waiting thread checks what it waits for, so no wake-up is lost
        }
        lock.lock();
        try {
            drained.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Drops what is queued (the connection is gone). */
    private void drop() {
        Object item;
        while ((item = queue.poll()) != null) {
            release(item);
        }
        pending.forEach(ReferenceCountUtil::release);
        pending.clear();
        gw.budget.release(pendingReserved + reservedNow);
        pendingReserved = 0;
        reservedNow = 0;
        pendingBytes = 0;
    }

    private void release(Object item) {
        if (item instanceof RespCommand c) {
            c.release();
            connection.commandsDone(c.weight());
        }
    }
}
