package io.tiffin.core.transport;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.ErrorReply;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.HelloReply;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A synchronous connection to a {@link TransportServer} for calls made from application threads. The
 * calling thread writes its request itself and blocks in the socket read for the answer: a call costs
 * no hand-off to an event loop and back, and the bulk bytes of an answer go from the kernel straight
 * into the caller's destination (one copy, as with a plain socket). Frames, handshake, error statuses
 * and the server side are exactly those of {@link TransportClient}; only the client's threading differs.
 *
 * <p><b>Timeouts.</b> Every call has a deadline (the settings' RPC timeout, or the handshake timeout while
 * connecting). A blocking socket read cannot time out by itself, so the owning {@link
 * BlockingConnectionPool}'s watchdog closes a connection whose call is past its deadline; the blocked
 * call then fails with {@code RPC_TIMEOUT}.
 *
 * <p><b>State after a failure.</b> A call that fails with the server's error status leaves the connection
 * usable (the whole answer was read). Any other failure (I/O error, timeout, a malformed answer) closes
 * it: its stream position is unknown.
 *
 * <p>Thread-safety: not thread-safe. One thread uses a connection at a time (the pool lends it out);
 * only {@link #expireIfOverdue} and {@link #close} may be called from another thread. Holds direct
 * buffers (header, control part and outgoing frames, a 64 KiB receive buffer, a staging buffer for heap
 * memory) owned by the connection and freed by the garbage collector; it never holds the caller's memory
 * beyond a call.
 *
 * <p><b>System calls.</b> The requests of a call are gathered and written together, bulk bytes in native
 * memory included (a batch of reads or writes to one server is one gathering {@code write}); answers
 * are read through the receive buffer, so one {@code read} takes in as many small answers as have
 * arrived, while bulk parts of {@value #DIRECT_READ_MIN} bytes or more go from the socket straight into
 * the caller's destination.
 */
public final class BlockingConnection implements AutoCloseable {

    /** Staging size for bulk bytes to or from heap memory (a socket moves native memory only). */
    private static final int STAGING_SIZE = 256 * 1024;
    /** Control buffers above this size are not kept after the call that needed them. */
    private static final int KEEP_BUFFER_LIMIT = 1 << 20;
    /** Receive buffer: one read takes in the headers, control parts and small bulk parts of many answers. */
    private static final int RECEIVE_BUFFER_SIZE = 64 * 1024;
    /**
     * Reads of at least this many bytes go from the socket straight into their destination (after what
     * the receive buffer already holds); smaller ones go through the receive buffer.
     */
    private static final int DIRECT_READ_MIN = 16 * 1024;

    private final SocketChannel channel;
    private final String endpoint;
    private final TransportSettings settings;
    private final ByteBuffer header = ByteBuffer.allocateDirect(FrameCodec.LENGTH_FIELD_SIZE + FrameCodec.HEADER_SIZE);
    /** Outgoing frames not yet written (write mode), and the control part of the answer being read. */
    private ByteBuffer control = ByteBuffer.allocateDirect(4096);
    /**
     * Frames gathered for one write, in order: slices of {@link #control} (headers and control parts)
     * and the callers' native bulk bytes with their padding. Holds the callers' memory only until the
     * call writes it.
     */
    private final List<ByteBuffer> gathered = new ArrayList<>();
    /** Start of the bytes in {@link #control} that are not yet in {@link #gathered}. */
    private int uncut;
    /** Bytes received and not yet consumed: read mode, from position to limit. */
    private final ByteBuffer received = ByteBuffer.allocateDirect(RECEIVE_BUFFER_SIZE).limit(0);
    /** Zero padding to send; never written to. */
    private final ByteBuffer zeros = ByteBuffer.allocateDirect(FrameCodec.ALIGNMENT);
    /** Scratch for padding received after a bulk part (its content is not checked). */
    private final ByteBuffer padIn = ByteBuffer.allocateDirect(FrameCodec.ALIGNMENT);
    private ByteBuffer staging;
    private long nextRequestId = 1;
    /** Deadline of the call in progress ({@link System#nanoTime()}), or 0 when idle. */
    private volatile long deadlineNanos;
    /** The running call's timeout: the longest wait for an answer, or for a write to make progress. */
    private long callTimeoutNanos;
    /** Latest moment the running receive waits for answers (0 = none); set by the calling thread only. */
    private long answerEndNanos;
    /** Set during {@link #discardAnswers}: answers' bulk bytes are skipped; by the calling thread only. */
    private boolean discarding;
    private volatile boolean expired;
    private volatile boolean closed;
    /**
     * Whether the answer being read (from its header on; before that, the previous one) carries a bulk
     * part of {@link #DIRECT_READ_MIN} bytes or more: then small reads take only what they need, so the
     * next answer's bulk (likely large too) goes straight into its destination instead of through the
     * receive buffer.
     */
    private boolean largeAnswer;
    /** Whether any byte of the current call's answer has arrived. */
    private boolean answerStarted;
    private int calls;

    private BlockingConnection(SocketChannel channel, String endpoint, TransportSettings settings) {
        this.channel = channel;
        this.endpoint = endpoint;
        this.settings = settings;
    }

    /**
     * Connects to {@code host:port} and completes the HELLO handshake as {@code peerId}, all within the
     * handshake timeout (enforced by {@code watchdog}'s registration once the socket exists).
     *
     * @throws TiffinException {@code RPC_FAIL} if the server cannot be reached or does not answer,
     *     {@code INVALID_VERSION} if it speaks another protocol version, {@code ILLEGAL_CLIENT} if it
     *     rejects the auth token
     */
    static BlockingConnection open(String host, int port, TransportSettings settings, String peerId,
                                   BlockingConnectionPool.Watchdog watchdog) {
        String endpoint = host + ":" + port;
        Duration timeout = settings.handshakeTimeout();
        SocketChannel ch;
        try {
            ch = SocketChannel.open();
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot open a socket to " + endpoint + ": " + e, e);
        }
        BlockingConnection c = new BlockingConnection(ch, endpoint, settings);
        try {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            ch.socket().connect(new InetSocketAddress(host, port),
                    (int) Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE));
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
            c.handshake(peerId);
        } catch (RuntimeException e) {
            watchdog.unregister(c);
            c.close();
            throw e;
        }
        return c;
    }

    private void handshake(String peerId) {
        Hello hello = Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .setToken(settings.authToken()).setPeerId(peerId == null ? "" : peerId).build();
        HelloReply reply;
        try {
            reply = call(Opcode.HELLO, hello, null, HelloReply.parser(), null, settings.handshakeTimeout().toNanos());
        } catch (TiffinException e) {
            ErrorCode code = e.code() == ErrorCode.RPC_TIMEOUT ? ErrorCode.RPC_FAIL : e.code();
            throw new TiffinException(code, "handshake with " + endpoint + " failed: " + e.getMessage(), e);
        }
        if (reply.getProtocolVersion() != TiffinVersion.PROTOCOL_VERSION) {
            throw new TiffinException(ErrorCode.INVALID_VERSION, "server " + endpoint + " speaks protocol version "
                    + reply.getProtocolVersion() + ", this client " + TiffinVersion.PROTOCOL_VERSION
                    + "; run the same Tiffin version on clients and servers");
        }
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
        return !answerStarted;
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
        answerStarted = false;
        callTimeoutNanos = timeoutNanos;
        deadlineNanos = deadline(timeoutNanos);
        try {
            long id = nextRequestId++;
            startFrames();
            writeRequest(opcode, id, request, bulkOut);
            writePending();
            return readAnswer(opcode, id, parser, bulkIn);
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
        answerStarted = false;
        callTimeoutNanos = settings.rpcTimeout().toNanos();
        deadlineNanos = deadline(callTimeoutNanos);
        long first = nextRequestId;
        nextRequestId += requests.size();
        try {
            startFrames();
            for (int i = 0; i < requests.size(); i++) {
                writeRequest(opcode, first + i, requests.get(i), bulksOut == null ? null : bulksOut.get(i));
            }
            writePending();
            deadlineNanos = 0; // nothing waits on this connection until receive starts its clock
        } catch (IOException e) {
            deadlineNanos = 0;
            startFrames(); // drop the callers' buffers not written
            throw ioFailure(opcode, e);
        } catch (RuntimeException e) {
            deadlineNanos = 0;
            startFrames();
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
     * As {@link #receive(Opcode, long, int, List)}, waiting no later than {@code endNanos} ({@link
     * System#nanoTime()}; 0 = only the RPC timeout) — the end of the read leases the answers are read
     * under, after which waiting on is pointless. Requests not answered by then fail with {@code
     * LEASE_EXPIRED} and the connection is closed.
     */
    public TiffinException[] receive(Opcode opcode, long first, int count, List<MemorySegment> bulksIn, long endNanos) {
        answerEndNanos = endNanos;
        try {
            return receiveAnswers(opcode, first, count, bulksIn);
        } finally {
            answerEndNanos = 0;
        }
    }

    /**
     * Reads and throws away the answers to the {@code count} requests sent by {@link #send} from id
     * {@code first} on (their bulk bytes skipped, failure statuses ignored), waiting no later than
     * {@code endNanos}; cheaper than closing the connection and opening another when the answers are
     * small and no longer wanted. Returns whether the connection is still open, ready for another call
     * (a connection failure or the deadline closes it).
     */
    public boolean discardAnswers(Opcode opcode, long first, int count, long endNanos) {
        answerEndNanos = endNanos;
        discarding = true;
        try {
            receiveAnswers(opcode, first, count, null);
        } finally {
            discarding = false;
            answerEndNanos = 0;
        }
        return isOpen();
    }

    /** The wait of the next answer: the RPC timeout from now, or {@link #answerEndNanos} if sooner. */
    private long answerDeadline() {
        long d = deadline(settings.rpcTimeout().toNanos());
        return answerEndNanos != 0 && answerEndNanos - d < 0 ? answerEndNanos : d;
    }

    private TiffinException[] receiveAnswers(Opcode opcode, long first, int count, List<MemorySegment> bulksIn) {
        TiffinException[] outcome = new TiffinException[count];
        boolean[] answered = new boolean[count];
        int remaining = count;
        int reading = -1;
        try {
            deadlineNanos = answerDeadline();
            while (remaining > 0) {
                reading = -1;
                Header h = readHeader(opcode);
                long index = h.requestId - first;
                if (index < 0 || index >= count || answered[(int) index]) {
                    close();
                    throw new TiffinException(ErrorCode.RPC_FAIL, endpoint + " answered request " + h.requestId
                            + " which is not outstanding; closed the connection");
                }
                int i = (int) index;
                answered[i] = true;
                remaining--;
                reading = i;
                try {
                    readBody(opcode, h, null, bulksIn == null ? null : bulksIn.get(i));
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
     * Ends a call. Bytes left in the receive buffer answer nothing that was asked (every answer of the call
     * has been read): the server broke the protocol, so the connection is closed rather than lent out
     * with a stream that the next call would misread.
     */
    private void endCall() {
        deadlineNanos = 0;
        shrinkControl();
        if (received.hasRemaining()) {
            received.limit(0);
            close();
        }
    }

    // ------------------------------------------------------------------ frames

    /**
     * Appends the request's frame to the pending output (its head in {@link #control}, its native bulk
     * bytes in {@link #gathered}) for {@link #writePending}. Bulk bytes in heap memory are staged
     * instead: everything pending is written first, then the staged pieces.
     */
    private void writeRequest(Opcode opcode, long requestId, MessageLite request, MemorySegment bulkOut)
            throws IOException {
        int controlLength = request == null ? 0 : request.getSerializedSize();
        long bulkLength = bulkOut == null ? 0 : bulkOut.byteSize();
        long length = FrameCodec.frameSize(controlLength, bulkLength) - FrameCodec.LENGTH_FIELD_SIZE;
        if (length > settings.maxFrameSize()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a " + opcode + " request of " + length
                    + " bytes exceeds the transport frame limit of " + settings.maxFrameSize() + " bytes");
        }
        if (controlLength > FrameCodec.maxControlSize(settings.maxFrameSize())) {
            // the server would drop the connection (a misbehaving peer to it): say what is wrong instead
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a " + opcode + " request's keys and metadata take "
                    + controlLength + " bytes, over the limit of " + FrameCodec.maxControlSize(settings.maxFrameSize())
                    + " bytes per request; split the batch");
        }
        // without bulk, the head is the whole frame (control and tail padding); with bulk, up to the bulk
        int head = (int) (bulkLength == 0 ? length + FrameCodec.LENGTH_FIELD_SIZE
                : FrameCodec.bulkOffset(controlLength, bulkLength));
        ByteBuffer out = reserve(head);
        int frameStart = out.position();
        out.putInt((int) length)
                .put((byte) TiffinVersion.PROTOCOL_VERSION)
                .put((byte) Frame.Kind.REQUEST.code())
                .putShort((short) opcode.code())
                .putLong(requestId)
                .putInt(0)
                .putInt(controlLength)
                .putInt((int) bulkLength);
        if (controlLength > 0) {
            CodedOutputStream cos = CodedOutputStream.newInstance(out);
            request.writeTo(cos);
            cos.flush();
        }
        while (out.position() < frameStart + head) {
            out.put((byte) 0);
        }
        if (bulkLength == 0) {
            return;
        }
        int padding = FrameCodec.padding(bulkLength);
        if (bulkOut.isNative()) {
            cut();
            gathered.add(bulkOut.asByteBuffer());
            if (padding > 0) {
                gathered.add(zeros.duplicate().clear().limit(padding));
            }
            return;
        }
        writePending();
        ByteBuffer stage = staging();
        for (long off = 0; off < bulkLength; off += STAGING_SIZE) {
            int len = (int) Math.min(STAGING_SIZE, bulkLength - off);
            stage.clear().limit(len);
            MemorySegment.copy(bulkOut, off, MemorySegment.ofBuffer(stage), 0, len);
            writeFully(stage);
        }
        writeFully(zeros.duplicate().clear().limit(padding));
    }

    /** The fields of an answer's header. */
    private record Header(long requestId, int length, int status, int controlLength, int bulkLength) {
    }

    private <T extends MessageLite> T readAnswer(Opcode opcode, long requestId, Parser<T> parser,
                                                 MemorySegment bulkIn) throws IOException {
        Header h = readHeader(opcode);
        if (h.requestId != requestId) {
            close();
            throw new TiffinException(ErrorCode.RPC_FAIL, endpoint + " answered request " + h.requestId
                    + " while " + requestId + " was waiting; closed the connection");
        }
        return readBody(opcode, h, parser, bulkIn);
    }

    private Header readHeader(Opcode opcode) throws IOException {
        header.clear();
        readFully(header);
        int length = header.getInt(0);
        if (length < FrameCodec.HEADER_SIZE || length > settings.maxFrameSize()) {
            throw malformed(opcode, "frame length " + length + " is outside 20.." + settings.maxFrameSize());
        }
        int version = header.get(4) & 0xFF;
        if (version != TiffinVersion.PROTOCOL_VERSION) {
            throw malformed(opcode, "protocol version " + version + ", this side speaks "
                    + TiffinVersion.PROTOCOL_VERSION + "; run the same Tiffin version on both sides");
        }
        if ((header.get(5) & 0xFF) != Frame.Kind.RESPONSE.code()) {
            throw malformed(opcode, "the server sent a request; servers may only answer");
        }
        int op = header.getShort(6) & 0xFFFF;
        if (op != opcode.code()) {
            throw malformed(opcode, "an answer with opcode " + op + " to a " + opcode + " request");
        }
        int controlLength = header.getInt(20);
        if (controlLength < 0 || controlLength > length - FrameCodec.HEADER_SIZE
                || controlLength > FrameCodec.maxControlSize(settings.maxFrameSize())) {
            throw malformed(opcode, "control length " + controlLength + " does not fit a frame of " + length);
        }
        int bulkLength = header.getInt(24);
        if (bulkLength < 0
                || FrameCodec.frameSize(controlLength, bulkLength) != (long) FrameCodec.LENGTH_FIELD_SIZE + length) {
            throw malformed(opcode, "frame length " + length + " does not match control length " + controlLength
                    + " and bulk length " + bulkLength + " with " + FrameCodec.ALIGNMENT + "-byte padding");
        }
        largeAnswer = bulkLength >= DIRECT_READ_MIN;
        return new Header(header.getLong(8), length, header.getInt(16), controlLength, bulkLength);
    }

    private <T extends MessageLite> T readBody(Opcode opcode, Header h, Parser<T> parser, MemorySegment bulkIn)
            throws IOException {
        long bulkLength = h.bulkLength;
        // the control part with the padding after it: up to the bulk, or to the frame's end without bulk
        int head = (int) (bulkLength == 0 ? h.length - FrameCodec.HEADER_SIZE
                : FrameCodec.bulkOffset(h.controlLength, bulkLength) - FrameCodec.LENGTH_FIELD_SIZE
                - FrameCodec.HEADER_SIZE);
        ByteBuffer ctl = controlBuffer(head);
        ctl.limit(head);
        readFully(ctl);
        ctl.flip().limit(h.controlLength);
        ErrorCode status = ErrorCode.fromValue(h.status);
        if (!status.isOk()) {
            String message = "";
            try {
                message = ErrorReply.parser().parseFrom(ctl).getMessage();
            } catch (InvalidProtocolBufferException e) {
                // keep the status alone
            }
            skip(bulkLength > 0 ? bulkLength + FrameCodec.padding(bulkLength) : 0);
            throw new TiffinException(status, message.isEmpty() ? status.name() + ": " + status.hint() : message);
        }
        if (bulkLength > 0 && discarding) {
            skip(bulkLength + FrameCodec.padding(bulkLength));
        } else if (bulkLength > 0) {
            if (bulkIn == null || bulkLength > bulkIn.byteSize()) {
                close();
                throw new TiffinException(ErrorCode.TRANSFER_FAIL, endpoint + " answered " + opcode + " with "
                        + bulkLength + " bulk bytes where " + (bulkIn == null ? 0 : bulkIn.byteSize())
                        + " were expected; closed the connection");
            }
            readBulk(bulkIn, bulkLength);
            readFully(padIn.clear().limit(FrameCodec.padding(bulkLength)));
        }
        if (parser == null) {
            return null;
        }
        try {
            return parser.parseFrom(ctl);
        } catch (InvalidProtocolBufferException e) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "cannot decode the control part of a " + opcode
                    + " response (" + e.getMessage() + "); the peer may run another Tiffin version", e);
        }
    }

    private void readBulk(MemorySegment into, long length) throws IOException {
        if (into.isNative()) {
            readFully(into.asSlice(0, length).asByteBuffer());
            return;
        }
        ByteBuffer stage = staging();
        for (long off = 0; off < length; off += STAGING_SIZE) {
            int len = (int) Math.min(STAGING_SIZE, length - off);
            stage.clear().limit(len);
            readFully(stage);
            MemorySegment.copy(MemorySegment.ofBuffer(stage.flip()), 0, into, off, len);
        }
    }

    private void skip(long length) throws IOException {
        ByteBuffer stage = staging();
        for (long left = length; left > 0; left -= stage.limit()) {
            stage.clear().limit((int) Math.min(STAGING_SIZE, left));
            readFully(stage);
        }
    }

    /** Starts gathering the frames of a call: nothing pending. */
    private void startFrames() {
        control.clear();
        gathered.clear();
        uncut = 0;
    }

    /** Moves the bytes written to {@link #control} since the last cut to the end of {@link #gathered}. */
    private void cut() {
        if (control.position() > uncut) {
            gathered.add(control.duplicate().limit(control.position()).position(uncut));
            uncut = control.position();
        }
    }

    /** Writes every frame gathered by {@link #writeRequest} that is still pending, in one gathering write. */
    private void writePending() throws IOException {
        cut();
        ByteBuffer[] all = gathered.toArray(ByteBuffer[]::new);
        startFrames();
        for (int i = 0; i < all.length; ) {
            if (channel.write(all, i, all.length - i) > 0) {
                progressed();
            }
            while (i < all.length && !all[i].hasRemaining()) {
                i++;
            }
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

    /**
     * Fills {@code b}: first from the receive buffer, then, for {@value #DIRECT_READ_MIN} bytes or more,
     * from the socket straight into {@code b}, else through the receive buffer (taking in whatever else
     * has arrived, unless the answers are large: {@link #largeAnswer}).
     */
    private void readFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (!received.hasRemaining()) {
                if (b.remaining() >= DIRECT_READ_MIN) {
                    if (channel.read(b) < 0) {
                        throw new EOFException("the server closed the connection");
                    }
                    answerStarted = true;
                    continue;
                }
                received.clear();
                if (largeAnswer) {
                    received.limit(b.remaining()); // do not pull the next large bulk through the buffer
                }
                int n;
                try {
                    n = channel.read(received);
                } finally {
                    received.flip();
                }
                if (n < 0) {
                    throw new EOFException("the server closed the connection");
                }
                answerStarted = true;
            }
            int n = Math.min(received.remaining(), b.remaining());
            int limit = received.limit();
            received.limit(received.position() + n);
            b.put(received);
            received.limit(limit);
        }
    }

    private void writeFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.write(b) > 0) {
                progressed();
            }
        }
    }

    /** The pending output with room for {@code more} bytes after what it holds. */
    private ByteBuffer reserve(int more) {
        if (control.remaining() < more) {
            ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(control.position() + more, control.capacity() * 2));
            control.flip();
            bigger.put(control);
            control = bigger;
        }
        return control;
    }

    /** {@link #control}, emptied, with room for {@code capacity} bytes. */
    private ByteBuffer controlBuffer(int capacity) {
        control.clear();
        return reserve(capacity);
    }

    private void shrinkControl() {
        if (control.capacity() > KEEP_BUFFER_LIMIT) {
            control = ByteBuffer.allocateDirect(4096);
        }
    }

    private ByteBuffer staging() {
        if (staging == null) {
            staging = ByteBuffer.allocateDirect(STAGING_SIZE);
        }
        return staging;
    }

    private static long deadline(long timeoutNanos) {
        long d = System.nanoTime() + timeoutNanos;
        return d == 0 ? 1 : d;
    }

    // ------------------------------------------------------------------ failures and closing

    private void checkOpen(Opcode opcode) {
        if (!isOpen()) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot send " + opcode + ": the connection to " + endpoint
                    + " is closed; take a new one from the pool");
        }
    }

    private TiffinException malformed(Opcode opcode, String problem) {
        close();
        return new TiffinException(ErrorCode.RPC_FAIL, "malformed answer to " + opcode + " from " + endpoint + ": "
                + problem + "; closed the connection");
    }

    private TiffinException ioFailure(Opcode opcode, IOException e) {
        close();
        if (expired && answerEndNanos != 0 && System.nanoTime() - answerEndNanos >= 0) {
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
     * Closes the connection if its call is past the deadline; returns whether it did. Called by the
     * watchdog thread.
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
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to release
        }
    }

    @Override
    public String toString() {
        return "BlockingConnection[" + endpoint + (closed ? ", closed" : "") + "]";
    }
}
