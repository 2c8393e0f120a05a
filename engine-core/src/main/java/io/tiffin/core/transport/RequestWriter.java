package io.tiffin.core.transport;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Writes the request frames of one {@link BlockingConnection}'s calls to its socket, gathered: {@link
 * #add} appends a frame (its header and control part to a pending buffer, its native bulk bytes by
 * reference), {@link #flush} writes everything pending in one gathering {@code write}, so a batch of
 * requests to one server, bulk bytes included, costs one system call. Bulk bytes in heap memory are
 * staged through the connection's staging buffer instead (a socket moves native memory only): what is
 * pending is written first, then the staged pieces.
 *
 * <p>Not thread-safe: used by the thread that holds the connection. Holds direct buffers (the pending
 * headers and control parts, padding) freed by the garbage collector; holds the callers' bulk memory
 * only until {@link #flush} or {@link #clear}.
 */
final class RequestWriter {
    /** Pending buffers above this size are not kept after the call that needed them. */
    private static final int KEEP_BUFFER_LIMIT = 1 << 20;

    private final SocketStream channel;
    private final int maxFrameSize;
    private final Supplier<ByteBuffer> staging;
    private final Runnable progressed;
    /** Zero padding to send; never written to. */
    private final ByteBuffer zeros = ByteBuffer.allocateDirect(FrameCodec.ALIGNMENT);
    /** Headers and control parts of the frames not yet written (write mode). */
    private ByteBuffer pending = ByteBuffer.allocateDirect(4096);
    /**
     * Frames gathered for one write, in order: slices of {@link #pending} (headers and control parts)
     * and the callers' native bulk bytes with their padding.
     */
    private final List<ByteBuffer> gathered = new ArrayList<>();
    /** Start of the bytes in {@link #pending} that are not yet in {@link #gathered}. */
    private int uncut;

    /**
     * A writer to {@code channel} of frames up to {@code maxFrameSize}; {@code staging} lends the
     * connection's staging buffer; {@code progressed} runs whenever a write makes progress.
     */
    RequestWriter(SocketStream channel, int maxFrameSize, Supplier<ByteBuffer> staging, Runnable progressed) {
        this.channel = channel;
        this.maxFrameSize = maxFrameSize;
        this.staging = staging;
        this.progressed = progressed;
    }

    /** Drops every frame not yet written (and with them the callers' buffers). */
    void clear() {
        pending.clear();
        gathered.clear();
        uncut = 0;
    }

    /** Drops a large pending buffer after a call. */
    void shrink() {
        if (pending.capacity() > KEEP_BUFFER_LIMIT) {
            pending = ByteBuffer.allocateDirect(4096);
        }
    }

    /**
     * Appends the request frame of {@code opcode} with {@code request} as its control part and {@code
     * bulkOut} (null = none) as its bulk bytes; heap bulk bytes are written at once (after what is pending).
     *
     * @throws TiffinException {@code INVALID_PARAMS} if the frame exceeds the frame size limit or its
     *     control part the control limit (nothing of it is pending then)
     */
    void add(Opcode opcode, long requestId, MessageLite request, MemorySegment bulkOut) throws IOException {
        int controlLength = request == null ? 0 : request.getSerializedSize();
        long bulkLength = bulkOut == null ? 0 : bulkOut.byteSize();
        long length = FrameCodec.frameSize(controlLength, bulkLength) - FrameCodec.LENGTH_FIELD_SIZE;
        if (length > maxFrameSize) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a " + opcode + " request of " + length
                    + " bytes exceeds the transport frame limit of " + maxFrameSize + " bytes");
        }
        int maxControl = FrameCodec.maxControlSize(maxFrameSize);
        if (controlLength > maxControl) {
            // the server would drop the connection (a misbehaving peer to it): say what is wrong instead
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a " + opcode + " request's keys and metadata take "
                    + controlLength + " bytes, over the limit of " + maxControl + " bytes per request; split the batch");
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
        flush();
        ByteBuffer stage = staging.get();
        for (long off = 0; off < bulkLength; off += stage.capacity()) {
            int len = (int) Math.min(stage.capacity(), bulkLength - off);
            stage.clear().limit(len);
            MemorySegment.copy(bulkOut, off, MemorySegment.ofBuffer(stage), 0, len);
            writeFully(stage);
        }
        writeFully(zeros.duplicate().clear().limit(padding));
    }

    /** Writes every frame added and still pending, in one gathering write. */
    void flush() throws IOException {
        cut();
        ByteBuffer[] all = gathered.toArray(ByteBuffer[]::new);
        clear();
        for (int i = 0; i < all.length; ) {
            if (channel.write(all, i, all.length - i) > 0) {
                progressed.run();
            }
            while (i < all.length && !all[i].hasRemaining()) {
                i++;
            }
        }
    }

    /** Moves the bytes written to {@link #pending} since the last cut to the end of {@link #gathered}. */
    private void cut() {
        if (pending.position() > uncut) {
            gathered.add(pending.duplicate().limit(pending.position()).position(uncut));
            uncut = pending.position();
        }
    }

    private void writeFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.write(b) > 0) {
                progressed.run();
            }
        }
    }

    /**
     * {@link #pending} with room for {@code more} bytes after what it holds. A bigger buffer leaves the
     * slices already in {@link #gathered} on the old one, which they keep alive until written.
     */
    private ByteBuffer reserve(int more) {
        if (pending.remaining() < more) {
            ByteBuffer bigger = ByteBuffer.allocateDirect(Math.max(pending.position() + more, pending.capacity() * 2));
            pending.flip();
            bigger.put(pending);
            pending = bigger;
        }
        return pending;
    }
}
