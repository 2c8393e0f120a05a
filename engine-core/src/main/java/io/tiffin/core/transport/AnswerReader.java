package io.tiffin.core.transport;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.ErrorReply;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.function.Supplier;

/**
 * Reads the answers of one {@link BlockingConnection} from its socket: headers (validated by {@link
 * FrameHeader}, then as answers to the opcode asked), control parts and bulk parts.
 *
 * <p>Answers are read through a receive buffer, so one {@code read} takes in as many small answers as
 * have arrived, while bulk parts of {@value #DIRECT_READ_MIN} bytes or more go from the socket straight
 * into the caller's destination (one copy, as with a plain socket). Bulk bytes for heap memory go
 * through the connection's staging buffer (a socket moves native memory only).
 *
 * <p>A malformed answer, or one whose bulk part does not fit its destination, closes the connection
 * (through the callback it was given): the stream position is then unknown. A failure status leaves it
 * usable, the whole answer having been read.
 *
 * <p>Not thread-safe: used by the thread that holds the connection. Holds direct buffers (header,
 * control part, a 64 KiB receive buffer, padding scratch) freed by the garbage collector; never holds
 * the caller's memory beyond a call.
 */
final class AnswerReader {
    /** Receive buffer: one read takes in the headers, control parts and small bulk parts of many answers. */
    private static final int RECEIVE_BUFFER_SIZE = 64 * 1024;
    /**
     * Reads of at least this many bytes go from the socket straight into their destination (after what
     * the receive buffer already holds); smaller ones go through the receive buffer.
     */
    static final int DIRECT_READ_MIN = 16 * 1024;
    /** Control buffers above this size are not kept after the call that needed them. */
    private static final int KEEP_BUFFER_LIMIT = 1 << 20;

    private final SocketStream channel;
    private final String endpoint;
    private final int maxFrameSize;
    private final Supplier<ByteBuffer> staging;
    private final Runnable closeConnection;
    private final ByteBuffer header = ByteBuffer.allocateDirect(FrameHeader.SIZE);
    /** Bytes received and not yet consumed: read mode, from position to limit. */
    private final ByteBuffer received = ByteBuffer.allocateDirect(RECEIVE_BUFFER_SIZE).limit(0);
    /** Scratch for padding received after a bulk part (its content is not checked). */
    private final ByteBuffer padIn = ByteBuffer.allocateDirect(FrameCodec.ALIGNMENT);
    /** The control part of the answer being read, with the padding after it. */
    private ByteBuffer control = ByteBuffer.allocateDirect(4096);
    /**
     * Whether the answer being read (from its header on; before that, the previous one) carries a bulk
     * part of {@link #DIRECT_READ_MIN} bytes or more: then small reads take only what they need, so the
     * next answer's bulk (likely large too) goes straight into its destination instead of through the
     * receive buffer.
     */
    private boolean largeAnswer;
    /** Whether any byte of the current call's answer has arrived. */
    private boolean answerStarted;

    /**
     * A reader of {@code channel}'s answers, frames limited to {@code maxFrameSize}; {@code staging} lends
     * the connection's staging buffer, {@code closeConnection} closes the connection.
     */
    AnswerReader(SocketStream channel, String endpoint, int maxFrameSize, Supplier<ByteBuffer> staging,
                 Runnable closeConnection) {
        this.channel = channel;
        this.endpoint = endpoint;
        this.maxFrameSize = maxFrameSize;
        this.staging = staging;
        this.closeConnection = closeConnection;
    }

    /** A call starts: nothing of its answer has arrived yet. */
    void startCall() {
        answerStarted = false;
    }

    /** Whether any byte of the current call's answer has arrived. */
    boolean answerStarted() {
        return answerStarted;
    }

    /**
     * Ends a call: drops a large control buffer, and returns whether bytes were left in the receive
     * buffer (they answer nothing that was asked: the server broke the protocol), dropping them.
     */
    boolean endCall() {
        if (control.capacity() > KEEP_BUFFER_LIMIT) {
            control = ByteBuffer.allocateDirect(4096);
        }
        if (received.hasRemaining()) {
            received.limit(0);
            return true;
        }
        return false;
    }

    /** Reads the answer to request {@code requestId}, the only one outstanding; see {@link #readBody}. */
    <T extends MessageLite> T readAnswer(Opcode opcode, long requestId, Parser<T> parser, MemorySegment bulkIn)
            throws IOException {
        FrameHeader h = readHeader(opcode);
        if (h.requestId() != requestId) {
            closeConnection.run();
            throw new TiffinException(ErrorCode.RPC_FAIL, endpoint + " answered request " + h.requestId()
                    + " while " + requestId + " was waiting; closed the connection");
        }
        return readBody(opcode, h, parser, bulkIn, false);
    }

    /**
     * Reads the next answer's header: a valid frame header ({@link FrameHeader}) of a response to
     * {@code opcode}.
     *
     * @throws TiffinException {@code RPC_FAIL} for anything else (the connection is closed)
     */
    FrameHeader readHeader(Opcode opcode) throws IOException {
        header.clear();
        readFully(header);
        FrameHeader h;
        try {
            h = FrameHeader.decode(header, 0, maxFrameSize);
        } catch (FrameHeader.Malformed e) {
            throw malformed(opcode, e.getMessage());
        }
        if (h.kind() != Frame.Kind.RESPONSE) {
            throw malformed(opcode, "the server sent a request; servers may only answer");
        }
        if (h.opcode() != opcode) {
            throw malformed(opcode, "an answer with opcode " + h.opcode() + " to a " + opcode + " request");
        }
        largeAnswer = h.bulkLength() >= DIRECT_READ_MIN;
        return h;
    }

    /**
     * Reads the rest of the answer {@code h}: its bulk bytes into the start of {@code bulkIn} (skipped when
     * {@code discard}), its control part parsed with {@code parser} (null: not parsed, null returned).
     *
     * @throws TiffinException the answer's failure status (the connection stays usable); {@code
     *     TRANSFER_FAIL} when the bulk part does not fit {@code bulkIn} (the connection is closed); {@code
     *     DESERIALIZE_FAIL} when the control part does not parse
     */
    <T extends MessageLite> T readBody(Opcode opcode, FrameHeader h, Parser<T> parser, MemorySegment bulkIn,
                                       boolean discard) throws IOException {
        long bulkLength = h.bulkLength();
        int head = h.controlAndPadding();
        ByteBuffer ctl = controlBuffer(head);
        readFully(ctl);
        ctl.flip().limit(h.controlLength());
        ErrorCode status = ErrorCode.fromValue(h.status());
        if (!status.isOk()) {
            String message = "";
            try {
                message = ErrorReply.parser().parseFrom(ctl).getMessage();
            } catch (InvalidProtocolBufferException e) {
                // keep the status alone
            }
            skip(bulkLength + h.bulkPadding());
            throw new TiffinException(status, message.isEmpty() ? status.name() + ": " + status.hint() : message);
        }
        if (bulkLength > 0 && discard) {
            skip(bulkLength + h.bulkPadding());
        } else if (bulkLength > 0) {
            if (bulkIn == null || bulkLength > bulkIn.byteSize()) {
                closeConnection.run();
                throw new TiffinException(ErrorCode.TRANSFER_FAIL, endpoint + " answered " + opcode + " with "
                        + bulkLength + " bulk bytes where " + (bulkIn == null ? 0 : bulkIn.byteSize())
                        + " were expected; closed the connection");
            }
            readBulk(bulkIn, bulkLength);
            readFully(padIn.clear().limit(h.bulkPadding()));
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
        ByteBuffer stage = staging.get();
        for (long off = 0; off < length; off += stage.capacity()) {
            int len = (int) Math.min(stage.capacity(), length - off);
            stage.clear().limit(len);
            readFully(stage);
            MemorySegment.copy(MemorySegment.ofBuffer(stage.flip()), 0, into, off, len);
        }
    }

    private void skip(long length) throws IOException {
        ByteBuffer stage = staging.get();
        for (long left = length; left > 0; left -= stage.limit()) {
            stage.clear().limit((int) Math.min(stage.capacity(), left));
            readFully(stage);
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

    /** {@link #control}, emptied, limited to {@code size} bytes (grown if needed). */
    private ByteBuffer controlBuffer(int size) {
        if (control.capacity() < size) {
            control = ByteBuffer.allocateDirect(Math.max(size, control.capacity() * 2));
        }
        return control.clear().limit(size);
    }

    private TiffinException malformed(Opcode opcode, String problem) {
        closeConnection.run();
        return new TiffinException(ErrorCode.RPC_FAIL, "malformed answer to " + opcode + " from " + endpoint + ": "
                + problem + "; closed the connection");
    }
}
