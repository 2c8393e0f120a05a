package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.HelloReply;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;

/**
 * A synchronous connection to a {@link TransportServer} for calls made from application threads. The
 * calling thread writes its request itself and blocks in the socket read for the answer: a call costs
 * no hand-off to an event loop and back, and the bulk bytes of an answer go from the kernel straight
 * into the caller's destination (one copy, as with a plain socket). Frames, handshake, error statuses
 * and the server side are exactly those of {@link TransportClient}; only the client's threading differs.
 *
 * <p><b>Timeouts.</b> Every call has a deadline (the settings' RPC timeout, or the handshake timeout while
 * connecting), on the owning pool's {@link Ticker} ({@link Ticker#nanos()}). A blocking socket read cannot
 * time out by itself, so the owning {@link BlockingConnectionPool}'s watchdog closes a connection whose
 * call is past its deadline; the blocked call then fails with {@code RPC_TIMEOUT}.
 *
 * <p><b>State after a failure.</b> A call that fails with the server's error status leaves the connection
 * usable (the whole answer was read). Any other failure (I/O error, timeout, a malformed answer) closes
 * it: its stream position is unknown.
 *
 * <p><b>System calls.</b> The requests of a call are gathered and written together ({@link
 * RequestWriter}: a batch of reads or writes to one server is one gathering {@code write}); answers are
 * read through a receive buffer ({@link AnswerReader}: one {@code read} takes in as many small answers
 * as have arrived, large bulk parts go from the socket straight into the caller's destination).
 *
 * <p>Thread-safety: not thread-safe. One thread uses a connection at a time (the pool lends it out);
 * only {@link #expireIfOverdue} and {@link #close} may be called from another thread. Holds direct
 * buffers (in its writer and reader, and a staging buffer for heap memory) owned by the connection and
 * freed by the garbage collector; it never holds the caller's memory beyond a call.
 */
public final class BlockingConnection implements AutoCloseable {

    /** Staging size for bulk bytes to or from heap memory (a socket moves native memory only). */
    private static final int STAGING_SIZE = 256 * 1024;

    private final SocketChannel channel;
    /** The socket's bytes: plain, or a TLS session over it. */
    private final SocketStream stream;
    private final String endpoint;
    private final TransportSettings settings;
    private final Ticker ticker;
    private final RequestWriter writer;
    private final AnswerReader reader;
    /** Shared by the writer and the reader (a call writes all its requests before it reads). */
    private ByteBuffer staging;
    private long nextRequestId = 1;
    /** Deadline of the call in progress ({@link Ticker#nanos()}), or 0 when idle. */
    private volatile long deadlineNanos;
    /** The running call's timeout: the longest wait for an answer, or for a write to make progress. */
    private long callTimeoutNanos;
    /** Latest moment the running receive waits for answers (0 = none); set by the calling thread only. */
    private long answerEndNanos;
    private volatile boolean expired;
    private volatile boolean closed;
    private int calls;

    private BlockingConnection(SocketChannel channel, SocketStream stream, String endpoint, TransportSettings settings,
                               Ticker ticker) {
        this.channel = channel;
        this.stream = stream;
        this.endpoint = endpoint;
        this.settings = settings;
        this.ticker = ticker;
        this.writer = new RequestWriter(stream, settings.maxFrameSize(), this::staging, this::progressed);
        this.reader = new AnswerReader(stream, endpoint, settings.maxFrameSize(), this::staging, this::close);
    }

    /**
     * Connects to {@code host:port}, runs the TLS handshake when {@code tls} is not null, and completes the
     * HELLO handshake as {@code peerId}, each within the handshake timeout (enforced by {@code watchdog}'s
     * registration once the socket exists); deadlines are measured on {@code ticker}.
     *
     * @throws TiffinException {@code RPC_FAIL} if the server cannot be reached or does not answer, or the TLS
     *     handshake fails, {@code INVALID_VERSION} if it speaks another protocol version, {@code
     *     ILLEGAL_CLIENT} if it rejects the auth token (or wants TLS from a plaintext client)
     */
    static BlockingConnection open(String host, int port, TransportSettings settings, TlsContexts tls, String peerId,
                                   com.google.protobuf.ByteString peerKey, BlockingConnectionPool.Watchdog watchdog,
                                   Ticker ticker) {
        String endpoint = host + ":" + port;
        Duration timeout = settings.handshakeTimeout();
        SocketChannel ch;
        try {
            ch = SocketChannel.open();
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot open a socket to " + endpoint + ": " + e, e);
        }
        BlockingConnection c;
        try {
            c = new BlockingConnection(ch, tls == null ? SocketStream.plain(ch)
                    : new TlsSocketStream(ch, tls.newClientEngine(host, port)), endpoint, settings, ticker);
        } catch (RuntimeException e) {
            SocketStream.plain(ch).close();
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot set up TLS to " + endpoint + ": " + e, e);
        }
        try {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            ch.socket().connect(new InetSocketAddress(host, port),
                    Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE));
        } catch (IOException e) {
            c.close();
            if (e instanceof ClosedByInterruptException) {
                throw new TiffinException(ErrorCode.RPC_FAIL, "interrupted while connecting to " + endpoint
                        + " (the calling thread's interrupt flag is set; not a network failure)", e);
            }
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot connect to " + endpoint + " (" + e
                    + "); check the address and that the server is running", e);
        }
        watchdog.register(c);
        try {
            c.handshake(peerId, peerKey);
        } catch (RuntimeException e) {
            watchdog.unregister(c);
            c.close();
            throw e;
        }
        return c;
    }

    private void handshake(String peerId, com.google.protobuf.ByteString peerKey) {
        if (stream instanceof TlsSocketStream tlsStream) {
            callTimeoutNanos = settings.handshakeTimeout().toNanos();
            deadlineNanos = deadline(callTimeoutNanos);
            try {
                tlsStream.handshake();
            } catch (IOException e) {
                close();
                String why = expired ? "no TLS handshake within " + settings.handshakeTimeout() : e.toString();
                throw new TiffinException(ErrorCode.RPC_FAIL, "TLS handshake with " + endpoint + " failed (" + why
                        + "); check that the server uses TLS (transport.tls.enabled), that transport.tls.ca names the"
                        + " authority of its certificate and that the certificate names the host dialled, and"
                        + " whether the server requires a client certificate (transport.tls.cert, transport.tls.key)", e);
            } finally {
                deadlineNanos = 0;
            }
        }
        Hello hello = Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .setToken(settings.credentials().current().presentedToken()).setPeerId(peerId == null ? "" : peerId)
                .setPeerKey(peerKey).build();
        HelloReply reply;
        try {
            reply = call(Opcode.HELLO, hello, null, HelloReply.parser(), null, settings.handshakeTimeout().toNanos());
        } catch (TiffinException e) {
            ErrorCode code = e.code() == ErrorCode.RPC_TIMEOUT ? ErrorCode.RPC_FAIL : e.code();
            String hint = "";
            if (hasTlsCause(e)) {
                hint = "; the server refused this client's TLS session: does it require a client certificate"
                        + " (transport.tls.cert, transport.tls.key) issued by its transport.tls.ca?";
            } else if (code == ErrorCode.RPC_FAIL && !(stream instanceof TlsSocketStream)) {
                hint = "; if the server uses TLS (transport.tls.enabled), enable it here too";
            }
            throw new TiffinException(code, "handshake with " + endpoint + " failed: " + e.getMessage() + hint, e);
        }
        if (reply.getProtocolVersion() != TiffinVersion.PROTOCOL_VERSION) {
            throw new TiffinException(ErrorCode.INVALID_VERSION, "server " + endpoint + " speaks protocol version "
                    + reply.getProtocolVersion() + ", this client " + TiffinVersion.PROTOCOL_VERSION
                    + "; run the same Tiffin version on clients and servers");
        }
    }

    private static boolean hasTlsCause(Throwable t) {
        for (; t != null; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return true;
            }
        }
        return false;
    }

    /** {@code host:port} of the server. */
    public String endpoint() {
        return endpoint;
    }

    /** Whether the connection can take another call. */
    public boolean isOpen() {
        return !closed && channel.isOpen();
    }

    /** Number of calls started on this connection (the handshake included). */
    int calls() {
        return calls;
    }

    /** Whether the last failed call failed before any byte of its answer arrived. */
    boolean failedBeforeAnswer() {
        return !reader.answerStarted();
    }

    /**
     * Sends {@code request} with {@code bulkOut} (null = none) as its bulk bytes, waits for the answer and
     * parses its control part with {@code parser}. The answer's bulk bytes go into the start of {@code
     * bulkIn} (null = the answer must carry none).
     *
     * @throws TiffinException the server's failure status; {@code RPC_TIMEOUT} when no answer came within
     *     the RPC timeout; {@code RPC_FAIL} when the connection fails; {@code TRANSFER_FAIL} when the
     *     answer carries more bulk bytes than {@code bulkIn} holds
     */
    public <T extends MessageLite> T call(Opcode opcode, MessageLite request, MemorySegment bulkOut,
                                          Parser<T> parser, MemorySegment bulkIn) {
        if (opcode == Opcode.HELLO) {
            throw new IllegalArgumentException("HELLO is sent when the connection opens; call another opcode");
        }
        return call(opcode, request, bulkOut, parser, bulkIn, settings.rpcTimeout().toNanos());
    }

    private <T extends MessageLite> T call(Opcode opcode, MessageLite request, MemorySegment bulkOut,
                                           Parser<T> parser, MemorySegment bulkIn, long timeoutNanos) {
        checkOpen(opcode);
        calls++;
        reader.startCall();
        callTimeoutNanos = timeoutNanos;
        deadlineNanos = deadline(timeoutNanos);
        try {
            long id = nextRequestId++;
            writer.clear();
            writer.add(opcode, id, request, bulkOut);
            writer.flush();
            return reader.readAnswer(opcode, id, parser, bulkIn);
        } catch (IOException e) {
            throw ioFailure(opcode, e);
        } finally {
            endCall();
        }
    }

    /**
     * Pipelined calls, first half: writes every request of {@code requests}, with the bulk bytes of
     * {@code bulksOut} (null, or null entries = none), without waiting for answers; returns the id of
     * the first request. The RPC timeout bounds the writes (each wait for the socket to take more
     * bytes); collect the answers with {@link #receive}. Writing to several servers before receiving from
     * any lets them work in parallel.
     *
     * @throws TiffinException {@code RPC_FAIL} if the connection fails (it is then closed)
     */
    public long send(Opcode opcode, List<? extends MessageLite> requests, List<MemorySegment> bulksOut) {
        checkOpen(opcode);
        calls++;
        reader.startCall();
        callTimeoutNanos = settings.rpcTimeout().toNanos();
        deadlineNanos = deadline(callTimeoutNanos);
        long first = nextRequestId;
        nextRequestId += requests.size();
        try {
            writer.clear();
            for (int i = 0; i < requests.size(); i++) {
                writer.add(opcode, first + i, requests.get(i), bulksOut == null ? null : bulksOut.get(i));
            }
            writer.flush();
            deadlineNanos = 0; // nothing waits on this connection until receive starts its clock
        } catch (IOException e) {
            deadlineNanos = 0;
            writer.clear(); // drop the callers' buffers not written
            throw ioFailure(opcode, e);
        } catch (RuntimeException e) {
            deadlineNanos = 0;
            writer.clear();
            close(); // some requests may have been written: the stream no longer matches the ids
            throw e;
        }
        return first;
    }

    /**
     * Pipelined calls, second half: reads the answers to the {@code count} requests sent by {@link #send}
     * from id {@code first} on, in whatever order they come, putting each answer's bulk bytes into its
     * entry of {@code bulksIn} (null, or null entries = none expected). The RPC timeout applies to the
     * wait for each answer, the first counted from this call (a caller receiving from several servers in
     * turn does not charge one server for the time spent reading another's answers). Returns per request
     * null on success or the exception it failed with: a failure status fails that request only; a
     * connection failure, or a destination that cannot take the bytes, fails every request not yet
     * answered and closes the connection.
     */
    public TiffinException[] receive(Opcode opcode, long first, int count, List<MemorySegment> bulksIn) {
        return receive(opcode, first, count, bulksIn, 0);
    }

    /**
     * As {@link #receive(Opcode, long, int, List)}, waiting no later than {@code endNanos} (on the pool's
     * {@link BlockingConnectionPool#ticker()}, {@link System#nanoTime()} by default; 0 = only the RPC
     * timeout) — the end of the read leases the answers are read under, after which waiting on is
     * pointless. Requests not answered by then fail with {@code LEASE_EXPIRED} and the connection is
     * closed.
     */
    public TiffinException[] receive(Opcode opcode, long first, int count, List<MemorySegment> bulksIn, long endNanos) {
        answerEndNanos = endNanos;
        try {
            return receiveAnswers(opcode, first, count, bulksIn, false);
        } finally {
            answerEndNanos = 0;
        }
    }

    /**
     * Reads and throws away the answers to the {@code count} requests sent by {@link #send} from id
     * {@code first} on (their bulk bytes skipped, failure statuses ignored), waiting no later than
     * {@code endNanos} (as for {@link #receive(Opcode, long, int, List, long)}); cheaper than closing the connection and opening another when the answers are
     * small and no longer wanted. Returns whether the connection is still open, ready for another call
     * (a connection failure or the deadline closes it).
     */
    public boolean discardAnswers(Opcode opcode, long first, int count, long endNanos) {
        answerEndNanos = endNanos;
        try {
            receiveAnswers(opcode, first, count, null, true);
        } finally {
            answerEndNanos = 0;
        }
        return isOpen();
    }

    /** The wait of the next answer: the RPC timeout from now, or {@link #answerEndNanos} if sooner. */
    private long answerDeadline() {
        long d = deadline(settings.rpcTimeout().toNanos());
        return answerEndNanos != 0 && answerEndNanos - d < 0 ? answerEndNanos : d;
    }

    private TiffinException[] receiveAnswers(Opcode opcode, long first, int count, List<MemorySegment> bulksIn,
                                             boolean discard) {
        TiffinException[] outcome = new TiffinException[count];
        boolean[] answered = new boolean[count];
        int remaining = count;
        int reading = -1;
        try {
            deadlineNanos = answerDeadline();
            while (remaining > 0) {
                reading = -1;
                FrameHeader h = reader.readHeader(opcode);
                long index = h.requestId() - first;
                if (index < 0 || index >= count || answered[(int) index]) {
                    close();
                    throw new TiffinException(ErrorCode.RPC_FAIL, endpoint + " answered request " + h.requestId()
                            + " which is not outstanding; closed the connection");
                }
                int i = (int) index;
                answered[i] = true;
                remaining--;
                reading = i;
                try {
                    reader.readBody(opcode, h, null, bulksIn == null ? null : bulksIn.get(i), discard);
                    // each answer restarts the clock: the timeout bounds the wait for one answer, as
                    // for single calls, not the whole batch
                    deadlineNanos = answerDeadline();
                } catch (TiffinException e) {
                    outcome[i] = e; // the server's failure status for this request only, unless it closed
                    if (!isOpen()) {
                        throw e;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            TiffinException failure;
            if (e instanceof IOException io) {
                failure = ioFailure(opcode, io);
            } else if (e instanceof TiffinException te) {
                failure = te;
            } else {
                // e.g. a read-only or closed destination: the rest of the answer is still in the stream
                close();
                failure = new TiffinException(ErrorCode.TRANSFER_FAIL, "receiving " + opcode + " answers from "
                        + endpoint + " failed: " + e + "; check the destination buffers", e);
            }
            for (int i = 0; i < count; i++) {
                if (!answered[i] || (i == reading && outcome[i] == null)) {
                    outcome[i] = failure;
                }
            }
        } finally {
            endCall();
        }
        return outcome;
    }

    /**
     * Ends a call. Bytes left in the reader's receive buffer answer nothing that was asked (every answer
     * of the call has been read): the server broke the protocol, so the connection is closed rather than
     * lent out with a stream that the next call would misread.
     */
    private void endCall() {
        deadlineNanos = 0;
        writer.shrink();
        if (reader.endCall()) {
            close();
        }
    }

    /**
     * A write made progress: the timeout bounds a wait, not a transfer, so a large batch of writes to a
     * healthy server is not cut off after one timeout's worth of bytes.
     */
    private void progressed() {
        if (deadlineNanos != 0) {
            deadlineNanos = deadline(callTimeoutNanos);
        }
    }

    private ByteBuffer staging() {
        if (staging == null) {
            staging = ByteBuffer.allocateDirect(STAGING_SIZE);
        }
        return staging;
    }

    private long deadline(long timeoutNanos) {
        long d = ticker.nanos() + timeoutNanos;
        return d == 0 ? 1 : d;
    }

    // ------------------------------------------------------------------ failures and closing

    private void checkOpen(Opcode opcode) {
        if (!isOpen()) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot send " + opcode + ": the connection to " + endpoint
                    + " is closed; take a new one from the pool");
        }
    }

    private TiffinException ioFailure(Opcode opcode, IOException e) {
        close();
        if (expired && answerEndNanos != 0 && ticker.nanos() - answerEndNanos >= 0) {
            return new TiffinException(ErrorCode.LEASE_EXPIRED, "no answer to " + opcode + " from " + endpoint
                    + " before the read lease ended; the node may be stalled: retry (a fresh lookup may name"
                    + " another replica)", e);
        }
        if (expired) {
            return new TiffinException(ErrorCode.RPC_TIMEOUT, "no answer to " + opcode + " from " + endpoint
                    + " within " + (opcode == Opcode.HELLO ? settings.handshakeTimeout() : settings.rpcTimeout())
                    + "; check that the server is running and not overloaded, or raise the RPC timeout", e);
        }
        if (e instanceof ClosedByInterruptException) {
            return new TiffinException(ErrorCode.RPC_FAIL, "interrupted while waiting for the " + opcode
                    + " answer from " + endpoint, e);
        }
        return new TiffinException(ErrorCode.RPC_FAIL, "connection to " + endpoint + " failed during " + opcode
                + " (" + e + "); check that the server is running and retry", e);
    }

    /**
     * Closes the connection if its call is past the deadline at {@code nowNanos} (the ticker's {@link
     * Ticker#nanos()}); returns whether it did. Called by the watchdog thread.
     */
    boolean expireIfOverdue(long nowNanos) {
        long d = deadlineNanos;
        // Only the deadline read here is expired: a call that ended meanwhile (and the next call on this
        // connection, with a deadline of its own) must not be cut off by a late decision.
        if (d != 0 && nowNanos - d > 0 && DEADLINE.compareAndSet(this, d, 0L)) {
            expired = true;
            close();
            return true;
        }
        return false;
    }

    private static final java.lang.invoke.VarHandle DEADLINE;

    static {
        try {
            DEADLINE = java.lang.invoke.MethodHandles.lookup().findVarHandle(BlockingConnection.class, "deadlineNanos",
                    long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Closes the socket; a call blocked on it fails. Idempotent, thread-safe. */
    @Override
    public void close() {
        closed = true;
        stream.close();
    }

    @Override
    public String toString() {
        return "BlockingConnection[" + endpoint + (closed ? ", closed" : "") + "]";
    }
}
