package io.tiffin.core.transport;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.CombinedChannelDuplexHandler;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.EncoderException;
import io.netty.handler.codec.MessageToMessageEncoder;
import io.netty.util.concurrent.ScheduledFuture;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Encodes and decodes {@link Frame}s. All integers are big-endian:
 *
 * <pre>
 * offset size field
 *      0    4 int32  length         number of bytes after this field, padding included
 *      4    1 uint8  version        {@link TiffinVersion#PROTOCOL_VERSION}
 *      5    1 uint8  kind           0 = request, 1 = response ({@link Frame.Kind})
 *      6    2 uint16 opcode         {@link Opcode#code()}
 *      8    8 int64  requestId      chosen by the requester, echoed in the response
 *     16    4 int32  status         {@link ErrorCode#value()}; always 0 in requests
 *     20    4 int32  controlLength  size of the control part (c)
 *     24    4 int32  bulkLength     size of the bulk part (b)
 *     28    c        control        a protobuf message, its type chosen by the opcode
 *   28+c    p        zero padding   only when b &gt; 0: up to the next multiple of {@value #ALIGNMENT}
 *      B    b        bulk           raw object bytes for data-plane ops; B = 28 + c + p, a multiple of 64
 *    B+b    q        zero padding   up to the next multiple of {@value #ALIGNMENT}: every frame, length
 *                                   field included, is a whole number of 64-byte units
 * </pre>
 *
 * The header after the length field is {@value #HEADER_SIZE} bytes; {@code length} must equal exactly
 * what the two length fields and the padding rule give ({@link #frameSize(int, long)} - 4).
 *
 * <p><b>Why the padding.</b> The kernel copies every byte of a TCP stream from the sender's memory into
 * socket-buffer pages, filled one after another by each sending thread, and from those pages into the
 * receiver's memory. When every frame is a whole number of 64-byte units and its bulk starts on a 64-byte
 * boundary, the bulk bytes land at the same offset modulo 64 as they have in the (64-byte aligned)
 * source and destination, and both copies run source- and destination-aligned. With the bulk right after
 * a 24-byte header, the copies were mutually misaligned, and on the AMD EPYC machine measured this halved
 * the kernel's copy rate for large values ({@code bench kv}, docs/BENCHMARKS.md). The cost is at most 126
 * bytes per frame.
 *
 * <p><b>Encoding</b> writes the length field, header and control part into one small buffer (a frame made in
 * this JVM carries its control message unserialised, and it is serialised right there) and passes the bulk part
 * on as a separate retained slice, so bulk bytes are never copied. The encoder
 * releases the frame it encodes.
 *
 * <p><b>Decoding</b> accumulates bytes until a whole frame is present and emits a {@link Frame} whose
 * control and bulk buffers are retained slices of the received bytes (no copy); the next handler owns
 * the frame. Frames of at least {@value #PRESIZE_THRESHOLD} bytes are gathered as a composite of the
 * buffers the socket reads filled (no copy, no frame-sized allocation); smaller ones are merged into
 * one buffer. The length field is checked as soon as it has arrived, the rest of the header as soon as
 * it has ({@link FrameHeader}, the same checks as {@link BlockingConnection}'s). On any violation the
 * decoder logs one WARN line naming the remote address and the problem, discards everything that
 * follows and closes the connection; other connections are unaffected.
 *
 * <p><b>Placed bulks.</b> On a plaintext server connection ({@link #placeBulks}) a request with at least
 * {@value #PRESIZE_THRESHOLD} bytes of bulk whose header and control part have come, but not all its bulk, is
 * offered to its opcode's {@link BulkPlacer}. When that names a destination, the decoder copies the part of the
 * bulk that came into it and the socket reads the rest straight into it ({@link BulkPlacement}: the channel's
 * receive buffers ({@link ReceiveWindows}) are then windows over the destination, exactly as long as the bulk still missing); the frame
 * is delivered once the last byte is in place, its bulk a view of the destination ({@link Frame#bulkPlaced()}),
 * and the padding after it is skipped. A placer that declines, or throws, leaves the frame to the usual path.
 * The placer is asked again before further reads into the destination (at most every
 * {@link BulkPlacement#RECHECK_NANOS}): when it refuses then (a grant
 * that expired, a segment re-mounted, while the bulk arrived), the rest of the bulk is discarded, the request
 * is answered with the refusal and never delivered. A connection that closes mid-bulk delivers nothing.
 *
 * <p>Thread-safety: an instance belongs to one channel pipeline (the decoder keeps per-connection state)
 * and is used only by that channel's event loop.
 */
public final class FrameCodec extends CombinedChannelDuplexHandler<FrameCodec.Decoder, FrameCodec.Encoder> {

    /** Size of the length prefix. */
    public static final int LENGTH_FIELD_SIZE = 4;

    /** Size of the header after the length prefix. */
    public static final int HEADER_SIZE = 24;

    /** Frames and the start of their bulk part are aligned to this many bytes (see the class comment). */
    public static final int ALIGNMENT = 64;

    /** {@value #ALIGNMENT} zero bytes, the source of every padding. Never released. */
    static final ByteBuf ZEROS = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(ALIGNMENT, ALIGNMENT).writeZero(ALIGNMENT).asReadOnly());

    /** Frames at least this long are gathered as a composite of the received buffers, without copying. */
    static final int PRESIZE_THRESHOLD = 64 * 1024;

    /** Upper bound on the control part, whatever the frame size limit. */
    public static final int MAX_CONTROL_SIZE = 16 * 1024 * 1024;

    private static final Encoder ENCODER = new Encoder();

    /** A codec that rejects frames whose length field exceeds {@code maxFrameSize} (a client's). */
    public FrameCodec(int maxFrameSize) {
        super(new Decoder(maxFrameSize, maxFrameSize, 0, Ticker.SYSTEM), ENCODER);
    }

    /**
     * A server's codec: frames of at most {@code limits.maxHandshakeFrameSize()} until {@link
     * #handshakeDone()}, then {@code maxFrameSize}; each frame whole within {@code limits.frameTimeout()}
     * of its first byte, on {@code ticker}.
     */
    public FrameCodec(int maxFrameSize, ServerLimits limits, Ticker ticker) {
        super(new Decoder(maxFrameSize, Math.min(maxFrameSize, limits.maxHandshakeFrameSize()),
                limits.frameTimeout().toNanos(), ticker), ENCODER);
    }

    /**
     * Where a server's requests' bulks may be received straight into their destination: for each request of at
     * least {@value #PRESIZE_THRESHOLD} bytes of bulk, once its control part has arrived.
     *
     * <p>Implementations are called on the connection's event loop and must not block.
     */
    interface Destinations {
        /**
         * The native memory of exactly {@code bulkLength} bytes the bulk of this request goes to, or null to
         * receive it into Netty buffers; may throw, which means null. {@code control} is the caller's (do not
         * release it).
         */
        MemorySegment destination(Opcode opcode, ByteBuf control, int bulkLength);
    }

    /**
     * Receives requests' bulks into the memory {@code destinations} names, the socket read straight into it
     * (see {@link BulkPlacement}): installs the channel's receive allocator ({@link ReceiveWindows}). Only for plaintext channels, where
     * the socket's bytes are the frames' (with TLS they are records to decrypt); call before the first read.
     */
    void placeBulks(io.netty.channel.Channel ch, Destinations destinations) {
        BulkPlacement p = new BulkPlacement(inboundHandler().ticker);
        ch.config().setRecvByteBufAllocator(new ReceiveWindows(ch.config().getRecvByteBufAllocator(), p::nextWindow));
        inboundHandler().placement = p;
        inboundHandler().destinations = destinations;
        inboundHandler().lowWater = new ReceiveLowWater(ch);
    }

    /** The peer completed the handshake: frames up to the frame size limit are accepted from now on. */
    public void handshakeDone() {
        inboundHandler().limit = inboundHandler().maxFrameSize;
    }

    /** Zero bytes after {@code bytes} bytes up to the next multiple of {@value #ALIGNMENT}. */
    public static int padding(long bytes) {
        return (int) (-bytes & (ALIGNMENT - 1));
    }

    /**
     * Offset of the bulk part from the frame's first byte (the length field): the fixed header and the
     * control part, padded to {@value #ALIGNMENT} when there is bulk.
     */
    public static long bulkOffset(int controlLength, long bulkLength) {
        long head = LENGTH_FIELD_SIZE + HEADER_SIZE + controlLength;
        return bulkLength > 0 ? head + padding(head) : head;
    }

    /** Bytes of a whole frame on the wire, length field and padding included: a multiple of 64. */
    public static long frameSize(int controlLength, long bulkLength) {
        long end = bulkOffset(controlLength, bulkLength) + bulkLength;
        return end + padding(end);
    }

    /** The largest control part accepted with this frame size limit. */
    public static int maxControlSize(int maxFrameSize) {
        return Math.min(maxFrameSize, MAX_CONTROL_SIZE);
    }

    /**
     * Writes frames as bytes; see {@link FrameCodec}. Releases every frame it is given.
     *
     * <p>Thread-safe: stateless, hence {@link Sharable}.
     */
    @Sharable
    public static final class Encoder extends MessageToMessageEncoder<Frame> {
        Encoder() {
            super(Frame.class);
        }

        @Override
        protected void encode(ChannelHandlerContext ctx, Frame frame, List<Object> out) {
            ByteBuf control = frame.control();
            MessageLite message = frame.message();
            ByteBuf bulk = frame.bulk();
            int controlLength = message != null ? message.getSerializedSize() : control.readableBytes();
            int bulkLength = bulk.readableBytes();
            long length = frameSize(controlLength, bulkLength) - LENGTH_FIELD_SIZE;
            if (length > Integer.MAX_VALUE) {
                throw new EncoderException("cannot send a " + frame.opcode() + " frame of " + length
                        + " bytes: a frame holds at most " + Integer.MAX_VALUE + " bytes; split the object");
            }
            int head = (int) (bulkLength > 0 ? bulkOffset(controlLength, bulkLength) : length + LENGTH_FIELD_SIZE);
            ByteBuf header = ctx.alloc().ioBuffer(head);
            header.writeInt((int) length)
                    .writeByte(TiffinVersion.PROTOCOL_VERSION)
                    .writeByte(frame.kind().code())
                    .writeShort(frame.opcode().code())
                    .writeLong(frame.requestId())
                    .writeInt(frame.status().value())
                    .writeInt(controlLength)
                    .writeInt(bulkLength);
            if (message == null) {
                header.writeBytes(control, control.readerIndex(), controlLength);
            } else if (controlLength > 0) {
                writeMessage(message, header, controlLength);
            }
            header.writeZero(head - header.writerIndex());
            out.add(header);
            if (bulkLength > 0) {
                out.add(bulk.retainedSlice());
                int tail = padding(bulkLength);
                if (tail > 0) {
                    out.add(ZEROS.retainedSlice(0, tail));
                }
            }
        }
    }

    /** Serialises {@code message} ({@code length} bytes) at {@code out}'s writer index, releasing {@code out} on failure. */
    private static void writeMessage(MessageLite message, ByteBuf out, int length) {
        try {
            CodedOutputStream cos = CodedOutputStream.newInstance(out.nioBuffer(out.writerIndex(), length));
            message.writeTo(cos);
            cos.checkNoSpaceLeft();
        } catch (IOException | RuntimeException e) {
            out.release();
            throw new EncoderException("cannot serialise a " + message.getClass().getSimpleName() + " of " + length
                    + " bytes", e);
        }
        out.writerIndex(out.writerIndex() + length);
    }

    /**
     * Cuts the byte stream into frames and validates their headers ({@link FrameHeader}); see {@link
     * FrameCodec}. Emits {@link Frame}s owned by the next handler.
     *
     * <p>Not thread-safe: one instance per channel, used by its event loop.
     */
    public static final class Decoder extends ByteToMessageDecoder {
        private static final Logger LOG = LogManager.getLogger(FrameCodec.class);

        private final int maxFrameSize;
        /** The frame size accepted now: the handshake limit until the handshake, then maxFrameSize. */
        private int limit;
        /** How long a frame may take to arrive whole; 0 = no limit. */
        private final long frameTimeoutNanos;
        private final Ticker ticker;
        /** When the first byte of the frame being received arrived ({@link Ticker#nanos()}); 0 = none pending. */
        private long frameStartNanos;
        private boolean failed;
        /** Whether the cumulation currently gathers a large frame as a composite of the received buffers. */
        private boolean composite;
        /** The channel's receive buffers when bulks may be placed (plaintext servers); else null. */
        private BulkPlacement placement;
        private Destinations destinations;
        /** The socket's low-water mark while a bulk is placed (set with {@link #placement}). */
        private ReceiveLowWater lowWater;
        /** Enforces the frame timeout on a placed bulk whose bytes wake no read (see {@link ReceiveLowWater}). */
        private ScheduledFuture<?> stallTimer;
        /** The header and control part of the frame whose bulk is being placed; null when none is. */
        private FrameHeader placing;
        private ByteBuf placingControl;
        /** The frame being received was refused a destination: it is gathered as usual. */
        private boolean declined;
        /** Padding bytes after a placed bulk still to skip. */
        private int skip;

        Decoder(int maxFrameSize, int handshakeLimit, long frameTimeoutNanos, Ticker ticker) {
            if (handshakeLimit < HEADER_SIZE) {
                throw new IllegalArgumentException("frame size limit " + handshakeLimit + " is smaller than the "
                        + HEADER_SIZE + "-byte frame header; configure a larger transport max frame size");
            }
            this.maxFrameSize = maxFrameSize;
            this.limit = handshakeLimit;
            this.frameTimeoutNanos = frameTimeoutNanos;
            this.ticker = ticker;
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (failed) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (skip > 0) {
                int n = Math.min(skip, in.readableBytes());
                in.skipBytes(n);
                skip -= n;
                if (skip > 0) {
                    return;
                }
            }
            int readable = in.readableBytes();
            if (readable < LENGTH_FIELD_SIZE) {
                checkStalled(ctx, in);
                return;
            }
            int start = in.readerIndex();
            int length = in.getInt(start);
            FrameHeader h;
            try {
                if (limit < maxFrameSize && length > limit) {
                    throw new FrameHeader.Malformed("frame length " + length + " before the handshake exceeds"
                            + " transport.max-handshake-frame-size = " + limit + " bytes (the first frame must be a"
                            + " small HELLO)");
                }
                FrameHeader.checkLength(length, maxFrameSize);
                if (readable < FrameHeader.SIZE) {
                    checkStalled(ctx, in);
                    return;
                }
                h = FrameHeader.decode(in, start, maxFrameSize);
            } catch (FrameHeader.Malformed e) {
                reject(ctx, in, e.getMessage());
                return;
            }
            if (readable < LENGTH_FIELD_SIZE + length) {
                if (checkStalled(ctx, in) || startPlacing(ctx, in, h, start, readable)) {
                    return;
                }
                if (length >= PRESIZE_THRESHOLD && !composite) {
                    // Keep the rest of a large frame as the list of buffers it arrives in: merging would
                    // copy every byte into one (unpooled, zeroed) buffer as large as the frame.
                    composite = true;
                    setCumulator(COMPOSITE_CUMULATOR);
                }
                return;
            }
            if (composite) {
                composite = false;
                setCumulator(MERGE_CUMULATOR);
            }
            frameStartNanos = 0;
            declined = false;
            ByteBuf control = h.controlLength() == 0 ? Unpooled.EMPTY_BUFFER
                    : in.retainedSlice(start + FrameHeader.SIZE, h.controlLength());
            ByteBuf bulk = h.bulkLength() == 0 ? Unpooled.EMPTY_BUFFER
                    : in.retainedSlice(start + h.bulkOffset(), h.bulkLength());
            in.skipBytes(h.frameSize());
            out.add(new Frame(h.kind(), h.opcode(), h.requestId(), ErrorCode.fromValue(h.status()), control, bulk));
        }

        /**
         * The frame at {@code start} is incomplete: when its bulk is large, has not all arrived, and its opcode's
         * placer names a destination, copies the part of the bulk that came into it, consumes the frame so far,
         * and has the socket read the rest straight into the destination ({@link BulkPlacement}). Returns
         * whether it did; otherwise (asked once per frame) the frame is gathered as usual.
         */
        private boolean startPlacing(ChannelHandlerContext ctx, ByteBuf in, FrameHeader h, int start, int readable) {
            if (placement == null || declined || h.kind() != Frame.Kind.REQUEST || h.bulkLength() < PRESIZE_THRESHOLD
                    || readable < h.bulkOffset() || readable - h.bulkOffset() >= h.bulkLength()) {
                return false;
            }
            ByteBuf control = in.retainedSlice(start + FrameHeader.SIZE, h.controlLength());
            MemorySegment dst;
            try {
                dst = destinations.destination(h.opcode(), control.duplicate(), h.bulkLength());
            } catch (RuntimeException e) {
                LOG.debug("{} from {}: received as usual, its placer refused it: {}", h.opcode(),
                        ctx.channel().remoteAddress(), e.toString());
                dst = null;
            }
            if (dst == null || !dst.isNative() || dst.isReadOnly() || dst.byteSize() != h.bulkLength()) {
                control.release();
                declined = true;
                return false;
            }
            int have = readable - h.bulkOffset();
            MemorySegment placed = dst;
            placement.start(dst, in, start + h.bulkOffset(), have, () -> {
                MemorySegment again = destinations.destination(h.opcode(), control.duplicate(), h.bulkLength());
                if (again == null || again.address() != placed.address() || again.byteSize() != placed.byteSize()) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, h.opcode() + " may no longer write where its"
                            + " bulk was going");
                }
            });
            in.skipBytes(readable);
            placing = h;
            placingControl = control;
            lowWater.await(h.bulkLength() - (long) have);
            if (frameTimeoutNanos != 0 && stallTimer == null) {
                stallTimer = ctx.executor().schedule(() -> {
                    stallTimer = null;
                    if (placing == h && stalled()) {
                        refuseStalled(ctx);
                    }
                }, frameTimeoutNanos + 1, TimeUnit.NANOSECONDS);
            }
            if (composite) {
                composite = false;
                setCumulator(MERGE_CUMULATOR);
            }
            return true;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
            if (placing == null || !(msg instanceof ByteBuf buf)) {
                super.channelRead(ctx, msg);
                return;
            }
            try {
                placement.take(buf);
            } catch (RuntimeException e) {
                buf.release();
                throw e;
            }
            if (placement.complete()) {
                endPlacing();
                FrameHeader h = placing;
                RuntimeException lapsed = placement.lapsed();
                MemorySegment dst = placement.end();
                ByteBuf control = placingControl;
                placing = null;
                placingControl = null;
                frameStartNanos = 0;
                skip = h.bulkPadding();
                if (lapsed == null) {
                    ctx.fireChannelRead(Frame.placed(h.opcode(), h.requestId(), control,
                            Unpooled.wrappedBuffer(dst.asByteBuffer())));
                } else {
                    // part of the bulk is in place, the rest was discarded: the handler must not see it
                    control.release();
                    ErrorCode code = lapsed instanceof TiffinException t && !t.code().isOk() ? t.code()
                            : ErrorCode.INVALID_PARAMS;
                    LOG.debug("{} from {} refused while its bulk arrived: {}", h.opcode(), ctx.channel().remoteAddress(),
                            lapsed.toString());
                    new ChannelResponder(ctx.channel(), h.opcode(), h.requestId()).tryFail(code, lapsed.getMessage());
                }
            } else if (stalled()) {
                buf.release();
                refuseStalled(ctx);
                return;
            } else {
                lowWater.await(placement.remaining());
            }
            if (buf.isReadable()) {
                super.channelRead(ctx, buf);
            } else {
                buf.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
            if (placing != null && !ctx.channel().config().isAutoRead()) {
                // as the superclass does for a partial frame: finish the frame even while backpressure holds reads
                ctx.read();
            }
            super.channelReadComplete(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            stopPlacing();
            super.channelInactive(ctx);
        }

        @Override
        protected void handlerRemoved0(ChannelHandlerContext ctx) {
            stopPlacing();
        }

        /** A placed bulk is whole, or will never be: the socket is read as usual from here on. */
        private void endPlacing() {
            lowWater.reset();
            if (stallTimer != null) {
                stallTimer.cancel(false);
                stallTimer = null;
            }
        }

        /** Closes the connection of a placed bulk that did not arrive whole within the frame timeout. */
        private void refuseStalled(ChannelHandlerContext ctx) {
            long came = placement.received();
            stopPlacing();
            reject(ctx, Unpooled.EMPTY_BUFFER, "a frame did not arrive whole within transport.frame-timeout = "
                    + java.time.Duration.ofNanos(frameTimeoutNanos) + " (" + came + " bytes of its bulk came);"
                    + " a stalled or deliberately slow peer");
        }

        /** Drops a placement that will not complete: no frame is delivered for it. */
        private void stopPlacing() {
            if (placing != null) {
                endPlacing();
                placement.end();
                placing = null;
                placingControl.release();
                placingControl = null;
            }
        }

        /** Whether the frame being received has taken longer than the frame timeout (placed bulks). */
        private boolean stalled() {
            return frameTimeoutNanos != 0 && frameStartNanos != 0 && ticker.nanos() - frameStartNanos > frameTimeoutNanos;
        }

        /**
         * A frame is incomplete: notes when its first byte came, and refuses it once it has taken longer than
         * the frame timeout (a peer trickling bytes to hold the connection). Returns whether it refused.
         */
        private boolean checkStalled(ChannelHandlerContext ctx, ByteBuf in) {
            if (frameTimeoutNanos == 0) {
                return false;
            }
            long now = ticker.nanos();
            if (frameStartNanos == 0) {
                frameStartNanos = now == 0 ? 1 : now;
                return false;
            }
            if (now - frameStartNanos > frameTimeoutNanos) {
                reject(ctx, in, "a frame did not arrive whole within transport.frame-timeout = "
                        + java.time.Duration.ofNanos(frameTimeoutNanos) + " (" + in.readableBytes() + " bytes of it"
                        + " came); a stalled or deliberately slow peer");
                return true;
            }
            return false;
        }

        private void reject(ChannelHandlerContext ctx, ByteBuf in, String problem) {
            failed = true;
            in.skipBytes(in.readableBytes());
            LOG.warn("Closing connection with {}: {}", ctx.channel().remoteAddress(), problem);
            ctx.close();
        }
    }
}
