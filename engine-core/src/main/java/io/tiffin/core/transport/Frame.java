package io.tiffin.core.transport;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.AbstractReferenceCounted;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.Objects;

/**
 * One message of the Tiffin wire protocol: a request or a response, with its header fields, a control
 * part (a serialised protobuf message chosen by the opcode) and a bulk part (raw object bytes for
 * data-plane operations, empty otherwise). The byte layout is documented on {@link FrameCodec}.
 *
 * <p><b>Ownership.</b> A frame is reference counted and owns its {@link #control()} and {@link #bulk()}
 * buffers: when its count drops to zero it releases both. Whoever receives a frame (from the decoder,
 * from {@link TransportClient#call}, or as a handler argument, see {@link RequestHandler}) owns one
 * reference and must {@link #release()} it exactly once; {@link #retain()} adds references for
 * holders that keep it longer. The constructor takes ownership of the two buffers passed in. Callers
 * must not release {@code control()} or {@code bulk()} themselves; to hand the bulk bytes on (for
 * example into {@link Responder#ok(MessageLite, ByteBuf)}), pass {@code frame.bulk().retain()} or a
 * {@code retainedSlice()}.
 *
 * <p>Thread-safety: the header fields are immutable (the {@link #peer()} of a received request is set
 * once, before the frame is handed to its handler) and the reference count is atomic, so a frame may
 * be handed between threads; its buffers' reader indexes are not synchronised, so only one thread at a
 * time may read them.
 */
public final class Frame extends AbstractReferenceCounted {

    /** Whether a frame is a request or a response; the number is the {@code kind} byte on the wire. */
    public enum Kind {
        REQUEST(0),
        RESPONSE(1);

        private final int code;

        Kind(int code) {
            this.code = code;
        }

        /** The wire value. */
        public int code() {
            return code;
        }

        /** The kind with this wire value, or null if unknown. */
        public static Kind fromCode(int code) {
            return switch (code) {
                case 0 -> REQUEST;
                case 1 -> RESPONSE;
                default -> null;
            };
        }
    }

    /** Control messages larger than this are serialised when their frame is made, not by the encoder. */
    static final int EAGER_SERIALIZE_BYTES = 64 * 1024;

    private final Kind kind;
    private final Opcode opcode;
    private final long requestId;
    private final ErrorCode status;
    private final ByteBuf control;
    private final ByteBuf bulk;
    /**
     * The control message itself, unserialised, for a frame made in this JVM: a request made in this JVM
     * ({@link #inProcessRequest}), and every request or response it sends ({@link #request}, {@link #response})
     * of up to {@value #EAGER_SERIALIZE_BYTES} bytes, which the encoder serialises straight into the frame's header
     * buffer (no array of its own, no second copy).
     * Then {@link #control} is empty and {@link #parseControl} hands this object out (messages are immutable)
     * instead of parsing bytes.
     */
    private final MessageLite message;
    /** Whether the bulk was received straight into its destination ({@link BulkPlacer}). */
    private final boolean bulkPlaced;
    /** Who sent a request a server received; null until set (then {@link Peer#IN_PROCESS} is reported). */
    private Peer peer;

    /**
     * Creates a frame that takes ownership of {@code control} and {@code bulk} (null means empty).
     * Requests must carry {@link ErrorCode#OK}.
     */
    public Frame(Kind kind, Opcode opcode, long requestId, ErrorCode status, ByteBuf control, ByteBuf bulk) {
        this(kind, opcode, requestId, status, control, bulk, null, false);
    }

    /** A received request whose bulk, a view of the memory it was received into, is already in place. */
    static Frame placed(Opcode opcode, long requestId, ByteBuf control, ByteBuf bulk) {
        return new Frame(Kind.REQUEST, opcode, requestId, ErrorCode.OK, control, bulk, null, true);
    }

    private Frame(Kind kind, Opcode opcode, long requestId, ErrorCode status, ByteBuf control, ByteBuf bulk,
                  MessageLite message, boolean bulkPlaced) {
        ByteBuf c = control == null ? Unpooled.EMPTY_BUFFER : control;
        ByteBuf b = bulk == null ? Unpooled.EMPTY_BUFFER : bulk;
        try {
            this.kind = Objects.requireNonNull(kind, "kind");
            this.opcode = Objects.requireNonNull(opcode, "opcode");
            this.status = Objects.requireNonNull(status, "status");
            if (kind == Kind.REQUEST && status != ErrorCode.OK) {
                throw new IllegalArgumentException("a request frame must carry status OK, not " + status);
            }
        } catch (RuntimeException e) {
            c.release();
            b.release();
            throw e;
        }
        this.requestId = requestId;
        this.control = c;
        this.bulk = b;
        this.message = message;
        this.bulkPlaced = bulkPlaced;
    }

    /**
     * A request frame whose control part is {@code control} (serialised when encoded; null = none); takes
     * ownership of {@code bulk}.
     */
    public static Frame request(Opcode opcode, long requestId, MessageLite control, ByteBuf bulk) {
        return made(Kind.REQUEST, opcode, requestId, ErrorCode.OK, control, bulk);
    }

    /**
     * A request made and handled in this JVM (an in-process master call): it carries {@code control} as the object,
     * not serialised; {@link #parseControl} returns it to a parser of its own type (and parses its bytes for any
     * other, as over the wire). Its {@link #control()} buffer is empty: use {@link #controlSize()}.
     */
    public static Frame inProcessRequest(Opcode opcode, MessageLite control) {
        return new Frame(Kind.REQUEST, opcode, 0, ErrorCode.OK, null, null, Objects.requireNonNull(control, "control"),
                false);
    }

    /**
     * A response frame whose control part is {@code control} (serialised when encoded; null = none); takes
     * ownership of {@code bulk}.
     */
    public static Frame response(Opcode opcode, long requestId, ErrorCode status, MessageLite control, ByteBuf bulk) {
        return made(Kind.RESPONSE, opcode, requestId, status, control, bulk);
    }

    /**
     * A frame made in this JVM: its control message kept for the encoder, or serialised here when it is larger than
     * {@value #EAGER_SERIALIZE_BYTES} bytes (a key listing of megabytes, made on a worker thread, is serialised
     * there rather than on the event loop that sends it, which only copies it).
     */
    private static Frame made(Kind kind, Opcode opcode, long requestId, ErrorCode status, MessageLite control,
                              ByteBuf bulk) {
        if (control == null || control.getSerializedSize() <= EAGER_SERIALIZE_BYTES) {
            return new Frame(kind, opcode, requestId, status, null, bulk, control, false);
        }
        ByteBuf bytes;
        try {
            bytes = Unpooled.wrappedBuffer(control.toByteArray());
        } catch (RuntimeException e) {
            if (bulk != null) {
                bulk.release();
            }
            throw e;
        }
        return new Frame(kind, opcode, requestId, status, bytes, bulk, null, false);
    }

    public Kind kind() {
        return kind;
    }

    public Opcode opcode() {
        return opcode;
    }

    public long requestId() {
        return requestId;
    }

    /** {@link ErrorCode#OK} for requests and successful responses. */
    public ErrorCode status() {
        return status;
    }

    /**
     * The serialised control message as received (empty for a frame made in this JVM: {@link #message()}); owned by
     * this frame, do not release.
     */
    public ByteBuf control() {
        return control;
    }

    /** The control message of a frame made in this JVM, unserialised; null for a received frame. */
    MessageLite message() {
        return message;
    }

    /** Bytes of the control part, serialised or not. */
    public int controlSize() {
        return message != null ? message.getSerializedSize() : control.readableBytes();
    }

    /** The bulk bytes (possibly empty); owned by this frame, do not release. */
    public ByteBuf bulk() {
        return bulk;
    }

    /**
     * Whether the transport received the bulk bytes straight into the memory the opcode's {@link BulkPlacer}
     * named (the kernel copied them there): {@link #bulk()} is then a view of that memory and the handler
     * must not copy it again. False for every frame whose opcode has no placer, or whose placer declined.
     */
    public boolean bulkPlaced() {
        return bulkPlaced;
    }

    /**
     * Who sent this request, as its connection's handshake proved it: set by the server before the
     * handler runs (the hand-off to the handler's thread publishes it). A frame made in this JVM (an
     * in-process call) answers {@link Peer#IN_PROCESS}.
     */
    public Peer peer() {
        Peer p = peer;
        return p == null ? Peer.IN_PROCESS : p;
    }

    /** Sets {@link #peer()}; for the server connection that read the frame, before it dispatches it. */
    void peer(Peer value) {
        this.peer = value;
    }

    /**
     * Parses the control part with {@code parser}: from a heap buffer's array in place, from a direct buffer
     * through a copy that protobuf 4 makes into an array of its own. Does not move the control buffer's reader index.
     *
     * @throws TiffinException {@link ErrorCode#DESERIALIZE_FAIL} if the bytes are not a valid message
     */
    @SuppressWarnings("unchecked")
    public <T extends MessageLite> T parseControl(Parser<T> parser) {
        if (message != null && message.getParserForType() == parser) {
            return (T) message; // made in this JVM: the very message, immutable
        }
        try {
            if (message != null) {
                return parser.parseFrom(message.toByteString());
            }
            CodedInputStream in = control.nioBufferCount() == 1
                    ? CodedInputStream.newInstance(control.nioBuffer())
                    : CodedInputStream.newInstance(io.netty.buffer.ByteBufUtil.getBytes(control));
            return parser.parseFrom(in);
        } catch (InvalidProtocolBufferException e) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "cannot decode the control part of a "
                    + opcode + " " + kind.name().toLowerCase(java.util.Locale.ROOT) + " (" + e.getMessage()
                    + "); the peer may run another Tiffin version", e);
        }
    }

    @Override
    public Frame retain() {
        super.retain();
        return this;
    }

    @Override
    public Frame retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public Frame touch() {
        return touch(null);
    }

    @Override
    public Frame touch(Object hint) {
        control.touch(hint);
        bulk.touch(hint);
        return this;
    }

    @Override
    protected void deallocate() {
        try {
            control.release();
        } finally {
            bulk.release();
        }
    }

    @Override
    public String toString() {
        return "Frame{" + kind + " " + opcode + " id=" + requestId + " status=" + status
                + " control=" + control.readableBytes() + "B bulk=" + bulk.readableBytes() + "B"
                + (bulkPlaced ? " placed" : "") + "}";
    }
}
