package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.ErrorReply;
import io.tiffin.core.transport.proto.Hello;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class FrameCodecTest {
    private static final int MAX = 64 * 1024;

    @BeforeAll
    static void watchLeaks() {
        NettyLeaks.install();
    }

    @AfterAll
    static void noLeaks() throws InterruptedException {
        NettyLeaks.assertNoLeaks();
    }

    /** Encodes {@code frame} (released) and returns its bytes as one buffer the caller releases. */
    static ByteBuf encode(Frame frame) {
        EmbeddedChannel channel = new EmbeddedChannel(new FrameCodec(MAX));
        assertThat(channel.writeOutbound(frame)).isTrue();
        ByteBuf all = Unpooled.buffer();
        ByteBuf part;
        int parts = 0;
        while ((part = channel.readOutbound()) != null) {
            all.writeBytes(part);
            part.release();
            parts++;
        }
        assertThat(parts).isBetween(1, 3);
        assertThat(channel.finish()).isFalse();
        return all;
    }

    /** The 28 bytes of length field and header, with every field as given (valid or not). */
    private static ByteBuf header(int length, int version, int kind, int opcode, long id, int status, int controlLength,
                                  int bulkLength) {
        return Unpooled.buffer()
                .writeInt(length)
                .writeByte(version)
                .writeByte(kind)
                .writeShort(opcode)
                .writeLong(id)
                .writeInt(status)
                .writeInt(controlLength)
                .writeInt(bulkLength);
    }

    /** A whole well-formed frame without bulk: header, {@code control}, zero padding to 64 bytes. */
    private static ByteBuf frame(int version, int kind, int opcode, long id, int status, byte[] control) {
        int size = (int) FrameCodec.frameSize(control.length, 0);
        ByteBuf b = header(size - 4, version, kind, opcode, id, status, control.length, 0).writeBytes(control);
        return b.writeZero(size - b.readableBytes());
    }

    @Test
    void requestRoundTripsByteByByte() {
        byte[] bulkBytes = new byte[1024];
        new SplittableRandom(1).nextBytes(bulkBytes);
        DataRequest control = DataRequest.newBuilder().setSegment("seg-1").setOffset(4096).setLength(1024).build();
        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.directBuffer(1024).writeBytes(bulkBytes);
        ByteBuf wire = encode(Frame.request(Opcode.DATA_WRITE, 42, control, bulk));
        // 28-byte header + control, padded to 64; the bulk; padding to 64 (1024 needs none)
        int c = control.getSerializedSize();
        assertThat(wire.readableBytes()).isEqualTo(64 + 1024).isEqualTo((int) FrameCodec.frameSize(c, 1024));
        assertThat(wire.getInt(0)).isEqualTo(64 + 1024 - 4);
        assertThat(wire.getUnsignedByte(4)).isEqualTo((short) TiffinVersion.PROTOCOL_VERSION);
        assertThat(wire.getUnsignedShort(6)).isEqualTo(Opcode.DATA_WRITE.code());
        assertThat(wire.getInt(20)).isEqualTo(c);
        assertThat(wire.getInt(24)).isEqualTo(1024);
        assertThat(ByteBufUtil.getBytes(wire, 28 + c, 64 - 28 - c)).containsOnly(0);
        assertThat(ByteBufUtil.getBytes(wire, 64, 1024)).isEqualTo(bulkBytes);

        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(MAX));
        while (wire.isReadable()) {
            decoder.writeInbound(wire.readRetainedSlice(1));
        }
        wire.release();
        Frame frame = decoder.readInbound();
        try {
            assertThat(frame.kind()).isEqualTo(Frame.Kind.REQUEST);
            assertThat(frame.opcode()).isEqualTo(Opcode.DATA_WRITE);
            assertThat(frame.requestId()).isEqualTo(42);
            assertThat(frame.status()).isEqualTo(ErrorCode.OK);
            assertThat(frame.parseControl(DataRequest.parser())).isEqualTo(control);
            assertThat(ByteBufUtil.getBytes(frame.bulk())).isEqualTo(bulkBytes);
        } finally {
            frame.release();
        }
        assertThat(decoder.<Object>readInbound()).isNull();
        assertThat(decoder.isOpen()).isTrue();
        assertThat(decoder.finish()).isFalse();
    }

    @Test
    void responsesAndEmptyFramesRoundTripTwoInOneBuffer() {
        ByteBuf first = encode(Frame.response(Opcode.REMOVE, Long.MAX_VALUE, ErrorCode.OBJECT_NOT_FOUND,
                ErrorReply.newBuilder().setMessage("no such key").build(), null));
        ByteBuf second = encode(Frame.response(Opcode.PING, -1, ErrorCode.OK, null, null));
        assertThat(first.readableBytes() % 64).isZero();
        assertThat(second.readableBytes()).isEqualTo(64);
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(MAX));
        decoder.writeInbound(Unpooled.wrappedBuffer(first, second));
        Frame a = decoder.readInbound();
        Frame b = decoder.readInbound();
        try {
            assertThat(a.kind()).isEqualTo(Frame.Kind.RESPONSE);
            assertThat(a.status()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(a.requestId()).isEqualTo(Long.MAX_VALUE);
            assertThat(a.parseControl(ErrorReply.parser()).getMessage()).isEqualTo("no such key");
            assertThat(a.bulk().readableBytes()).isZero();
            assertThat(b.opcode()).isEqualTo(Opcode.PING);
            assertThat(b.requestId()).isEqualTo(-1);
            assertThat(b.control().readableBytes()).isZero();
            assertThat(b.bulk().readableBytes()).isZero();
        } finally {
            a.release();
            b.release();
        }
        assertThat(decoder.finish()).isFalse();
    }

    @Test
    void unknownStatusInResponseBecomesInternalError() {
        ByteBuf wire = frame(TiffinVersion.PROTOCOL_VERSION, 1, Opcode.PING.code(), 7, -424242, new byte[0]);
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(MAX));
        decoder.writeInbound(wire);
        Frame frame = decoder.readInbound();
        assertThat(frame.status()).isEqualTo(ErrorCode.INTERNAL_ERROR);
        frame.release();
        assertThat(decoder.finish()).isFalse();
    }

    @Test
    void garbledControlFailsWithDeserializeFail() {
        ByteBuf wire = frame(TiffinVersion.PROTOCOL_VERSION, 0, Opcode.HELLO.code(), 1, 0,
                new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff});
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(MAX));
        decoder.writeInbound(wire);
        Frame frame = decoder.readInbound();
        try {
            assertThatThrownBy(() -> frame.parseControl(Hello.parser()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.DESERIALIZE_FAIL));
        } finally {
            frame.release();
        }
        assertThat(decoder.finish()).isFalse();
    }

    @Test
    void everyHeaderViolationClosesTheChannel() {
        int v = TiffinVersion.PROTOCOL_VERSION;
        int ping = Opcode.PING.code();
        assertRejected(MAX, header(23, v, 0, ping, 1, 0, 0, 0), "length shorter than header");
        assertRejected(MAX, header(-5, v, 0, ping, 1, 0, 0, 0), "negative length");
        assertRejected(MAX, Unpooled.buffer().writeInt(MAX + 1), "length over maxFrameSize, prefix only");
        assertRejected(MAX, header(MAX + 1, v, 0, ping, 1, 0, 0, 0), "length over maxFrameSize");
        assertRejected(MAX, frame(v + 1, 0, ping, 1, 0, new byte[0]), "wrong version");
        assertRejected(MAX, frame(1, 0, ping, 1, 0, new byte[0]), "version 1 (no padding)");
        assertRejected(MAX, frame(0, 0, ping, 1, 0, new byte[0]), "version 0");
        assertRejected(MAX, frame(v, 2, ping, 1, 0, new byte[0]), "unknown kind");
        assertRejected(MAX, frame(v, 0, 999, 1, 0, new byte[0]), "unknown opcode");
        assertRejected(MAX, frame(v, 0, 0, 1, 0, new byte[0]), "opcode 0");
        assertRejected(MAX, frame(v, 0, ping, 1, ErrorCode.INTERNAL_ERROR.value(), new byte[0]), "status in request");
        assertRejected(MAX, header(60, v, 0, ping, 1, 0, -1, 0), "negative control length");
        assertRejected(MAX, header(60, v, 0, ping, 1, 0, 37, 0), "control longer than frame");
        assertRejected(MAX, header(60, v, 0, ping, 1, 0, 0, -1), "negative bulk length");
        assertRejected(MAX, header(61, v, 0, ping, 1, 0, 0, 0), "frame not a multiple of 64 bytes");
        assertRejected(MAX, header(60, v, 0, ping, 1, 0, 0, 10), "bulk without its padding");
        assertRejected(MAX, header(188, v, 0, ping, 1, 0, 0, 10), "padding after the bulk too long");
        int big = 32 * 1024 * 1024;
        assertRejected(big, header(FrameCodec.MAX_CONTROL_SIZE + 60, v, 0, ping, 1, 0,
                FrameCodec.MAX_CONTROL_SIZE + 1, 0), "control over 16 MiB");
    }

    private static void assertRejected(int maxFrameSize, ByteBuf wire, String what) {
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(maxFrameSize));
        // Bytes after the bad header must be discarded, not parsed as another frame.
        ByteBuf valid = frame(TiffinVersion.PROTOCOL_VERSION, 0, Opcode.PING.code(), 2, 0, new byte[0]);
        decoder.writeInbound(Unpooled.wrappedBuffer(wire, valid));
        assertThat(decoder.<Object>readInbound()).as(what).isNull();
        assertThat(decoder.isOpen()).as(what + ": channel closed").isFalse();
        assertThat(decoder.finish()).as(what).isFalse();
    }

    @Test
    void truncatedFrameYieldsNothingAndReleasesEverything() {
        // a frame with 100 bulk bytes is 64 + 100 + 28 padding = 192 bytes; only 40 after the header arrive
        ByteBuf wire = header(188, TiffinVersion.PROTOCOL_VERSION, 0, Opcode.PING.code(), 1, 0, 0, 100)
                .writeBytes(new byte[40]);
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(MAX));
        decoder.writeInbound(wire);
        assertThat(decoder.<Object>readInbound()).isNull();
        assertThat(decoder.isOpen()).isTrue();
        assertThat(decoder.finish()).isFalse();
    }

    @Test
    void requestFramesMustCarryOkAndConstructorReleasesOnFailure() {
        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.buffer(4).writeInt(1);
        assertThatThrownBy(() -> new Frame(Frame.Kind.REQUEST, Opcode.PING, 1, ErrorCode.INTERNAL_ERROR, null, bulk))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(bulk.refCnt()).isZero();
    }

    @Test
    void retainKeepsBuffersUntilLastRelease() {
        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.buffer(4).writeInt(1);
        Frame frame = Frame.request(Opcode.DATA_WRITE, 1, DataRequest.getDefaultInstance(), bulk);
        frame.retain();
        assertThat(frame.release()).isFalse();
        assertThat(bulk.refCnt()).isEqualTo(1);
        assertThat(frame.release()).isTrue();
        assertThat(bulk.refCnt()).isZero();
    }
}
