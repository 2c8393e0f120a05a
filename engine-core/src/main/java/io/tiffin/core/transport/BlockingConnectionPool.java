package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Lends {@link BlockingConnection}s to application threads: per endpoint a stack of idle connections,
 * a new one opened when none is idle. A thread takes a connection for one call (or one pipelined batch)
 * and gives it back; so N threads calling one server at once use N connections, each driven by its own
 * thread, and the server's event loops see ordinary connections.
 *
 * <p>A connection that failed is closed rather than returned. A call that fails on a connection taken
 * from the idle stack before any byte of the answer arrived (the server closed the idle connection,
 * for example after a restart) is retried once on a fresh connection; every other failure is the
 * caller's.
 *
 * <p>One daemon watchdog thread per pool enforces call deadlines (see {@link BlockingConnection}); it
 * wakes every {@value #WATCHDOG_TICK_MS} ms and compares them with the pool's {@link Ticker} ({@link
 * Ticker#SYSTEM} unless one is given), so a test that moves a manual ticker past a deadline sees the call
 * time out within a tick.
 *
 * <p>With TLS on ({@link TlsSettings}) the pool loads the TLS contexts once at construction and every
 * connection runs its own TLS session ({@link TlsSocketStream}) before the HELLO.
 *
 * <p>Thread-safe. {@link #close} closes idle connections at once and lent ones when they come back.
 */
public final class BlockingConnectionPool implements AutoCloseable {

    /** Idle connections kept per endpoint; more are closed when returned. */
    static final int MAX_IDLE_PER_ENDPOINT = 32;
    static final int WATCHDOG_TICK_MS = 5;
    /**
     * An {@link #exchange} batch sending at least this many bulk bytes is sent by a thread of its own (a
     * virtual thread), beside the other batches, when another batch follows it.
     */
    static final long PARALLEL_SEND_BYTES = 256 * 1024;

    private final TransportSettings settings;
    private final String peerId;
    private final com.google.protobuf.ByteString peerKey;
    private final Ticker ticker;
    /** Loaded once from the settings; null for plaintext. */
    private final TlsContexts tls;
    private final ConcurrentHashMap<String, Idle> idle = new ConcurrentHashMap<>();
    private final Watchdog watchdog;
    private final Function<String, Idle> newIdle = k -> new Idle();
    private volatile boolean closed;
    private final java.util.concurrent.atomic.LongAdder connectionsOpened = new java.util.concurrent.atomic.LongAdder();

    /** The idle connections of one endpoint. */
    private static final class Idle {
        final ConcurrentLinkedDeque<BlockingConnection> stack = new ConcurrentLinkedDeque<>();
        final AtomicInteger size = new AtomicInteger();
    }

    /** A pool whose connections identify as {@code peerId}; its watchdog thread is named after {@code name}. */
    public BlockingConnectionPool(String name, TransportSettings settings, String peerId) {
        this(name, settings, peerId, Ticker.SYSTEM);
    }

    /** As {@link #BlockingConnectionPool(String, TransportSettings, String)}, with deadlines on {@code ticker}. */
    public BlockingConnectionPool(String name, TransportSettings settings, String peerId, Ticker ticker) {
        this(name, settings, peerId, ticker, PeerKeys.ofThisProcess());
    }

    /**
     * As {@link #BlockingConnectionPool(String, TransportSettings, String, Ticker)}, presenting {@code peerKey} in
     * its HELLOs instead of this process's key ({@link PeerKeys}; tests play another process with it).
     */
    public BlockingConnectionPool(String name, TransportSettings settings, String peerId, Ticker ticker,
                                  com.google.protobuf.ByteString peerKey) {
        this.peerKey = Objects.requireNonNull(peerKey, "peerKey");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.peerId = Objects.requireNonNull(peerId, "peerId");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.tls = TlsContexts.load(settings.tls());
        this.watchdog = new Watchdog(Objects.requireNonNull(name, "name") + "-blocking-watchdog", ticker);
    }

    /**
     * A connection to {@code hostPort} for the calling thread: an idle one or a new one. Give it back with
     * {@link #release}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} for a malformed endpoint, {@code RPC_FAIL} if the pool
     *     is closed or the server cannot be reached, or what the handshake fails with
     */
    public BlockingConnection acquire(String hostPort) {
        checkOpen();
        BlockingConnection c = pollOpen(idle.computeIfAbsent(hostPort, newIdle));
        if (c != null) {
            return c;
        }
        Endpoint e = Endpoint.parse(hostPort);
        BlockingConnection opened = BlockingConnection.open(e.host(), e.port(), settings, tls, peerId, peerKey, watchdog, ticker);
        connectionsOpened.increment();
        return opened;
    }

    /**
     * An idle open connection to {@code hostPort} for the calling thread, or null when none is kept (this
     * never connects, so it never waits for a server that may be gone). Give it back with {@link #release}.
     */
    public BlockingConnection acquireIdle(String hostPort) {
        if (closed) {
            return null;
        }
        Idle slot = idle.get(hostPort);
        return slot == null ? null : pollOpen(slot);
    }

    /** The most recently released open connection of {@code slot}, dropping closed ones; null if none. */
    private BlockingConnection pollOpen(Idle slot) {
        BlockingConnection c;
        while ((c = slot.stack.pollFirst()) != null) {
            slot.size.decrementAndGet();
            if (c.isOpen()) {
                return c;
            }
            watchdog.unregister(c);
        }
        return null;
    }

    /**
     * A new connection to {@code hostPort}, after closing the idle ones kept for it (used when a kept
     * connection turned out dead: the others were most likely cut by the same server restart).
     */
    public BlockingConnection acquireFresh(String hostPort) {
        checkOpen();
        Idle slot = idle.get(hostPort);
        if (slot != null) {
            BlockingConnection c;
            while ((c = slot.stack.pollFirst()) != null) {
                slot.size.decrementAndGet();
                discard(c);
            }
        }
        Endpoint e = Endpoint.parse(hostPort);
        BlockingConnection opened = BlockingConnection.open(e.host(), e.port(), settings, tls, peerId, peerKey, watchdog, ticker);
        connectionsOpened.increment();
        return opened;
    }

    /**
     * Requests for one server in an {@link #exchange}: per request its control part, the bulk bytes to
     * send (null list or entry = none) and where the answer's bulk bytes go (null list or entry = none).
     *
     * <p>Thread-safe if its lists are not changed while an exchange uses it.
     */
    public record Batch(String endpoint, List<? extends MessageLite> requests, List<MemorySegment> bulksOut,
                        List<MemorySegment> bulksIn) {
        public Batch {
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(requests, "requests");
            if ((bulksOut != null && bulksOut.size() != requests.size())
                    || (bulksIn != null && bulksIn.size() != requests.size())) {
                throw new IllegalArgumentException("one bulk entry per request expected");
            }
        }
    }

    /**
     * Pipelined calls of an idempotent {@code opcode} (such as DATA_READ or DATA_WRITE) to several
     * servers: writes every batch's requests to its server first, then collects the answers, so the
     * servers work in parallel while one thread drives them all. A batch with at least {@value
     * #PARALLEL_SEND_BYTES} bulk bytes to send, followed by others, is written by a virtual thread of its
     * own meanwhile (a large write blocks until the server has taken most of it, so in turn every server
     * would wait for the ones before it); the answers are collected by the caller. A batch whose reused connection was
     * found dead before answering is sent again once on a fresh connection. Returns, per batch and
     * request, null on success or the exception that request failed with.
     */
    public TiffinException[][] exchange(Opcode opcode, List<Batch> batches) {
        return exchange(opcode, batches, 0);
    }

    /**
     * As {@link #exchange(Opcode, List)}, waiting for answers no later than {@code endNanos} ({@link
     * #ticker()}'s {@link Ticker#nanos()}, 0 = only the RPC timeout); see {@link
     * BlockingConnection#receive(Opcode, long, int, List, long)}.
     */
    public TiffinException[][] exchange(Opcode opcode, List<Batch> batches, long endNanos) {
        int n = batches.size();
        TiffinException[][] out = new TiffinException[n][];
        BlockingConnection[] conns = new BlockingConnection[n];
        long[] first = new long[n];
        boolean[] toSend = new boolean[n];
        java.util.Arrays.fill(toSend, true);
        for (int attempt = 0; attempt < 2; attempt++) {
            boolean[] reused = new boolean[n];
            boolean[] sent = new boolean[n];
            List<Thread> helpers = null;
            RuntimeException[] unexpected = new RuntimeException[n];
            for (int b = 0; b < n; b++) {
                if (!toSend[b]) {
                    continue;
                }
                int index = b;
                int round = attempt;
                Runnable send = () -> {
                    Batch batch = batches.get(index);
                    try {
                        conns[index] = round == 0 ? acquire(batch.endpoint()) : acquireFresh(batch.endpoint());
                        reused[index] = conns[index].calls() > 1;
                        first[index] = conns[index].send(opcode, batch.requests(), batch.bulksOut());
                        sent[index] = true;
                    } catch (TiffinException e) {
                        out[index] = filled(batch.requests().size(), e);
                    } catch (RuntimeException e) {
                        unexpected[index] = e; // thrown by the caller once every send has ended
                    }
                };
                if (b < n - 1 && bulkOutBytes(batches.get(b)) >= PARALLEL_SEND_BYTES) {
                    // A large send blocks until its server has taken most of it: sent in turn, every replica
                    // would wait for the one before. Its own thread lets the servers receive at once.
                    helpers = helpers == null ? new ArrayList<>() : helpers;
                    helpers.add(Thread.ofVirtual().name("tiffin-send-" + batches.get(b).endpoint()).start(send));
                } else {
                    send.run();
                }
            }
            joinAll(helpers); // makes the helpers' connections, ids and outcomes visible to this thread
            for (RuntimeException e : unexpected) {
                if (e != null) {
                    for (BlockingConnection c : conns) {
                        if (c != null) {
                            discard(c); // requests of this call may be in flight on it: not reusable
                        }
                    }
                    throw e;
                }
            }
            boolean again = false;
            for (int b = 0; b < n; b++) {
                if (!toSend[b]) {
                    continue;
                }
                BlockingConnection c = conns[b];
                conns[b] = null;
                if (sent[b]) {
                    out[b] = c.receive(opcode, first[b], batches.get(b).requests().size(), batches.get(b).bulksIn(),
                            endNanos);
                }
                toSend[b] = attempt == 0 && reused[b] && !c.isOpen() && c.failedBeforeAnswer()
                        && hasCode(out[b], ErrorCode.RPC_FAIL);
                again |= toSend[b];
                if (c != null) {
                    release(c);
                }
            }
            if (!again) {
                break;
            }
        }
        return out;
    }

    /** Bulk bytes a batch sends. */
    private static long bulkOutBytes(Batch batch) {
        long bytes = 0;
        if (batch.bulksOut() != null) {
            for (MemorySegment m : batch.bulksOut()) {
                bytes += m == null ? 0 : m.byteSize();
            }
        }
        return bytes;
    }

    /**
     * Waits for every sending thread. An interrupt of the caller does not cut a send short (its connection's
     * stream would be left mid-frame); it is kept for the caller to see.
     */
    private static void joinAll(List<Thread> threads) {
        if (threads == null) {
            return;
        }
        boolean interrupted = false;
        for (Thread t : threads) {
            while (true) {
                try {
                    t.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static TiffinException[] filled(int count, TiffinException e) {
        TiffinException[] all = new TiffinException[count];
        java.util.Arrays.fill(all, e);
        return all;
    }

    private static boolean hasCode(TiffinException[] outcome, ErrorCode code) {
        for (TiffinException e : outcome) {
            if (e != null && e.code() == code) {
                return true;
            }
        }
        return false;
    }

    /** Gives {@code c} back: kept for the next caller if it is healthy, else closed. */
    public void release(BlockingConnection c) {
        if (!c.isOpen() || closed) {
            discard(c);
            return;
        }
        Idle slot = idle.computeIfAbsent(c.endpoint(), newIdle);
        if (slot.size.incrementAndGet() > MAX_IDLE_PER_ENDPOINT) {
            slot.size.decrementAndGet();
            discard(c);
            return;
        }
        slot.stack.offerFirst(c);
        if (closed && slot.stack.remove(c)) {
            slot.size.decrementAndGet();
            discard(c);
        }
    }

    private void discard(BlockingConnection c) {
        c.close();
        watchdog.unregister(c);
    }

    /**
     * One control-only call to {@code hostPort} on a pooled connection, retried once on a fresh
     * connection when a reused one turns out to be dead before answering.
     *
     * @throws TiffinException as {@link BlockingConnection#call}
     */
    public <T extends MessageLite> T call(String hostPort, Opcode opcode, MessageLite request, Parser<T> parser) {
        return call(hostPort, opcode, request, null, parser, null);
    }

    /** {@link #call(String, Opcode, MessageLite, Parser)} with bulk bytes out and/or in. */
    public <T extends MessageLite> T call(String hostPort, Opcode opcode, MessageLite request, MemorySegment bulkOut,
                                          Parser<T> parser, MemorySegment bulkIn) {
        return call(hostPort, opcode, request, bulkOut, parser, bulkIn, null);
    }

    /**
     * As {@link #call(String, Opcode, MessageLite, MemorySegment, Parser, MemorySegment)}, setting {@code resent[0]}
     * (if given) when the request went out again on a fresh connection: the server may have run the first one before
     * the connection died (a caller of a call that is not idempotent, such as a remove, reads a later refusal in that
     * light).
     */
    public <T extends MessageLite> T call(String hostPort, Opcode opcode, MessageLite request, MemorySegment bulkOut,
                                          Parser<T> parser, MemorySegment bulkIn, boolean[] resent) {
        for (int attempt = 0; ; attempt++) {
            if (attempt > 0 && resent != null) {
                resent[0] = true;
            }
            BlockingConnection c = acquire(hostPort);
            boolean reused = c.calls() > 1;
            try {
                T reply = c.call(opcode, request, bulkOut, parser, bulkIn);
                release(c);
                return reply;
            } catch (TiffinException e) {
                boolean stale = reused && !c.isOpen() && c.failedBeforeAnswer() && e.code() == ErrorCode.RPC_FAIL;
                release(c);
                if (!stale || attempt > 0) {
                    throw e;
                }
            } catch (RuntimeException | Error e) {
                discard(c);
                throw e;
            }
        }
    }

    public TransportSettings settings() {
        return settings;
    }

    /** The clock of this pool's deadlines: {@code endNanos} arguments are its {@link Ticker#nanos()}. */
    public Ticker ticker() {
        return ticker;
    }

    /** Connections the watchdog holds (open ones with or without a deadline); for tests. */
    int watchedCount() {
        return watchdog.connections.size();
    }

    /** Idle connections kept for {@code hostPort}; for tests. */
    int idleCount(String hostPort) {
        Idle slot = idle.get(hostPort);
        return slot == null ? 0 : slot.size.get();
    }

    private void checkOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "the blocking connection pool is closed; create a new one");
        }
    }

    /** Connections this pool has opened so far (each a TCP connect and a handshake); for diagnostics. */
    public long connectionsOpened() {
        return connectionsOpened.sum();
    }

    /** Closes the idle connections and stops the watchdog; lent connections close when given back. Idempotent. */
    @Override
    public void close() {
        closed = true;
        for (Idle slot : idle.values()) {
            BlockingConnection c;
            while ((c = slot.stack.pollFirst()) != null) {
                slot.size.decrementAndGet();
                discard(c);
            }
        }
        watchdog.stop(); // and closes the lent connections: their calls fail with RPC_FAIL
    }

    /**
     * Closes connections whose call is past its deadline on {@code ticker}. One daemon thread, started
     * with the first connection.
     *
     * <p>Thread-safe.
     */
    static final class Watchdog {
        private final String threadName;
        private final Ticker ticker;
        private final Set<BlockingConnection> connections = ConcurrentHashMap.newKeySet();
        private Thread thread;
        private volatile boolean stopped;

        Watchdog(String threadName, Ticker ticker) {
            this.threadName = threadName;
            this.ticker = ticker;
        }

        void register(BlockingConnection c) {
            connections.add(c);
            synchronized (this) {
                if (thread == null && !stopped) {
                    thread = Thread.ofPlatform().daemon().name(threadName).start(this::run);
                }
            }
            if (stopped) {
                c.close();
            }
        }

        void unregister(BlockingConnection c) {
            connections.remove(c);
        }

        private void run() {
            while (!stopped) {
                long now = ticker.nanos();
                for (BlockingConnection c : connections) {
                    if (!c.isOpen() || c.expireIfOverdue(now)) {
                        connections.remove(c); // closed by its owner or expired now: nothing left to watch
                    }
                }
                try {
                    Thread.sleep(WATCHDOG_TICK_MS); // the checks' pace, not a clock: deadlines are on the ticker
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void stop() {
            Thread t;
            synchronized (this) {
                stopped = true;
                t = thread;
            }
            if (t != null) {
                t.interrupt();
            }
            for (BlockingConnection c : connections) {
                c.close();
            }
            connections.clear();
        }
    }
}
