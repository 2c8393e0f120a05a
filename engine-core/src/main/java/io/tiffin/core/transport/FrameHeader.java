package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/**
 * The length field and fixed header of one frame, decoded and validated (the layout is on {@link
 * FrameCodec}). Both decoders, {@link FrameCodec}'s for event-loop connections and {@link
 * BlockingConnection}'s, take headers through here, so they accept the same frames and name a bad one
 * with the same words.
 *
 * <p>A header is valid when the length lies between {@value FrameCodec#HEADER_SIZE} and the frame size
 * limit, the version is {@link TiffinVersion#PROTOCOL_VERSION}, the kind and opcode are known, a request
 * carries status 0, the control length is non-negative, fits in the frame and does not exceed {@link
 * FrameCodec#maxControlSize(int)}, and the length is exactly what the control and bulk lengths give with
 * the padding rule. What a side expects beyond that (a blocking client takes only answers to its own
 * opcode) is that side's check.
 *
 * <p>Thread-safe (immutable).
 *
 * @param length the length field: bytes after it, header and padding included
 * @param status the status as sent; see {@link io.tiffin.api.ErrorCode#fromValue(int)}
 */
record FrameHeader(int length, Frame.Kind kind, Opcode opcode, long requestId, int status, int controlLength,
                   int bulkLength) {

    /** Length field and header together: what must have arrived before {@link #decode} can run. */
    static final int SIZE = FrameCodec.LENGTH_FIELD_SIZE + FrameCodec.HEADER_SIZE;

    /**
     * Why a header was refused; the message is the problem, in words for a log line or an error. Carries
     * no stack trace: a peer's bad bytes are not a bug of this side. Thread-safe (immutable).
     */
    static final class Malformed extends Exception {
        Malformed(String problem) {
            super(problem, null, false, false);
        }
    }

    /**
     * Checks the length field alone, all a decoder may have before the rest of the header arrives: so a
     * stream that is not Tiffin is refused at once rather than waited on.
     */
    static void checkLength(int length, int maxFrameSize) throws Malformed {
        if (length < FrameCodec.HEADER_SIZE) {
            throw new Malformed("frame length " + length + " is shorter than the " + FrameCodec.HEADER_SIZE
                    + "-byte header (not a Tiffin peer, or a corrupt stream)");
        }
        if (length > maxFrameSize) {
            throw new Malformed("frame length " + length + " exceeds the limit of " + maxFrameSize
                    + " bytes; if such objects are legitimate, raise the transport max frame size on both sides");
        }
    }

    /** Decodes and validates the {@value #SIZE} bytes at {@code index} of {@code in}; moves no index. */
    static FrameHeader decode(ByteBuf in, int index, int maxFrameSize) throws Malformed {
        return validate(in.getInt(index), in.getUnsignedByte(index + 4), in.getUnsignedByte(index + 5),
                in.getUnsignedShort(index + 6), in.getLong(index + 8), in.getInt(index + 16), in.getInt(index + 20),
                in.getInt(index + 24), maxFrameSize);
    }

    /** Decodes and validates the {@value #SIZE} bytes at {@code index} of {@code in}; moves no position. */
    static FrameHeader decode(ByteBuffer in, int index, int maxFrameSize) throws Malformed {
        return validate(in.getInt(index), in.get(index + 4) & 0xFF, in.get(index + 5) & 0xFF,
                in.getShort(index + 6) & 0xFFFF, in.getLong(index + 8), in.getInt(index + 16), in.getInt(index + 20),
                in.getInt(index + 24), maxFrameSize);
    }

    private static FrameHeader validate(int length, int version, int kindCode, int opcodeCode, long requestId,
                                        int status, int controlLength, int bulkLength, int maxFrameSize)
            throws Malformed {
        checkLength(length, maxFrameSize);
        if (version != TiffinVersion.PROTOCOL_VERSION) {
            throw new Malformed("protocol version " + version + " in frame header, this side speaks "
                    + TiffinVersion.PROTOCOL_VERSION + "; run the same Tiffin version on both sides");
        }
        Frame.Kind kind = Frame.Kind.fromCode(kindCode);
        if (kind == null) {
            throw new Malformed("unknown frame kind " + kindCode + " (expected 0 or 1)");
        }
        Opcode opcode = Opcode.fromCode(opcodeCode);
        if (opcode == null) {
            throw new Malformed("unknown opcode " + opcodeCode
                    + "; the peer may run a newer Tiffin version, run the same version on both sides");
        }
        if (kind == Frame.Kind.REQUEST && status != 0) {
            throw new Malformed("request " + opcode + " carries status " + status + ", requests must carry 0");
        }
        if (controlLength < 0 || controlLength > length - FrameCodec.HEADER_SIZE) {
            throw new Malformed("control length " + controlLength + " does not fit in a frame of length " + length
                    + " (corrupt stream)");
        }
        int maxControl = FrameCodec.maxControlSize(maxFrameSize);
        if (controlLength > maxControl) {
            throw new Malformed("control length " + controlLength + " exceeds the limit of " + maxControl
                    + " bytes (corrupt stream or misbehaving peer)");
        }
        if (bulkLength < 0
                || FrameCodec.frameSize(controlLength, bulkLength) != (long) FrameCodec.LENGTH_FIELD_SIZE + length) {
            throw new Malformed("frame length " + length + " does not match control length " + controlLength
                    + " and bulk length " + bulkLength + " with " + FrameCodec.ALIGNMENT + "-byte padding (corrupt"
                    + " stream, or a peer of another protocol version)");
        }
        return new FrameHeader(length, kind, opcode, requestId, status, controlLength, bulkLength);
    }

    /** Bytes of the whole frame on the wire, length field included. */
    int frameSize() {
        return FrameCodec.LENGTH_FIELD_SIZE + length;
    }

    /** Offset of the bulk part from the frame's first byte (meaningful when there is bulk). */
    int bulkOffset() {
        return (int) FrameCodec.bulkOffset(controlLength, bulkLength);
    }

    /**
     * Bytes after the header up to the bulk part: the control part and the padding after it (without
     * bulk, the padding to the frame's end).
     */
    int controlAndPadding() {
        return (bulkLength == 0 ? frameSize() : bulkOffset()) - SIZE;
    }

    /** Zero bytes after the bulk part, up to the frame's end. */
    int bulkPadding() {
        return FrameCodec.padding(bulkLength);
    }
}
