package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.ErrorReply;
import io.tiffin.core.util.Ticker;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Coverage-guided fuzzing of the frame codec ({@link FrameCodec}, {@link FrameHeader}): any bytes, cut
 * anywhere, must decode to valid frames or close the connection, never throw out of the pipeline or leak a
 * buffer; both header decoders (the event loop's and {@link BlockingConnection}'s) must agree; and what the
 * encoder writes must decode to the same frame. In CI the inputs under src/test/resources (and an empty one)
 * run as regression tests; {@code ./mvnw -Pfuzz} fuzzes (docs/SECURITY.md).
 */
class FrameCodecFuzzTest {
    @BeforeAll
    static void watchLeaks() {
        NettyLeaks.install();
    }

    @AfterAll
    static void noLeaks() {
        NettyLeaks.assertNoLeaks();
    }

    @FuzzTest(maxDuration = "5m")
    void anyBytesDecodeToValidFramesOrAClosedConnection(FuzzedDataProvider data) {
        int maxFrame = data.consumeInt(1024, 4 << 20);
        boolean handshaken = data.consumeBoolean();
        int pieces = data.consumeInt(1, 8);
        byte[] bytes = data.consumeRemainingAsBytes();
        FrameCodec codec = new FrameCodec(maxFrame, ServerLimits.defaults(), Ticker.SYSTEM);
        if (handshaken) {
            codec.handshakeDone();
        }
        List<Frame> frames = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(codec, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                frames.add((Frame) msg);
            }
        });
        try {
            int step = Math.max(1, bytes.length / pieces);
            for (int off = 0; off < bytes.length && ch.isActive(); off += step) {
                ch.writeInbound(Unpooled.wrappedBuffer(bytes, off, Math.min(step, bytes.length - off)));
            }
            ch.checkException();
            int limit = handshaken ? maxFrame : Math.min(maxFrame, ServerLimits.defaults().maxHandshakeFrameSize());
            for (Frame f : frames) {
                assertThat(f.control().readableBytes()).isLessThanOrEqualTo(FrameCodec.maxControlSize(maxFrame));
                assertThat(FrameCodec.frameSize(f.control().readableBytes(), f.bulk().readableBytes()))
                        .isLessThanOrEqualTo(limit + (long) FrameCodec.LENGTH_FIELD_SIZE);
            }
        } finally {
            frames.forEach(Frame::release);
            ch.finishAndReleaseAll();
        }
        if (bytes.length >= FrameHeader.SIZE) {
            headerDecodersAgree(bytes, maxFrame);
        }
    }

    private static void headerDecodersAgree(byte[] bytes, int maxFrame) {
        FrameHeader fromBuf = null;
        FrameHeader fromBuffer = null;
        String bufProblem = null;
        String bufferProblem = null;
        try {
            fromBuf = FrameHeader.decode(Unpooled.wrappedBuffer(bytes), 0, maxFrame);
        } catch (FrameHeader.Malformed e) {
            bufProblem = e.getMessage();
        }
        try {
            fromBuffer = FrameHeader.decode(ByteBuffer.wrap(bytes), 0, maxFrame);
        } catch (FrameHeader.Malformed e) {
            bufferProblem = e.getMessage();
        }
        assertThat(fromBuffer).isEqualTo(fromBuf);
        assertThat(bufferProblem).isEqualTo(bufProblem);
    }

    @FuzzTest(maxDuration = "5m")
    void encodedFramesDecodeToThemselves(FuzzedDataProvider data) {
        Opcode opcode = data.pickValue(Opcode.values());
        boolean request = data.consumeBoolean();
        long id = data.consumeLong();
        ErrorCode status = request ? ErrorCode.OK : data.pickValue(ErrorCode.values());
        String message = data.consumeString(2000);
        byte[] bulk = data.consumeRemainingAsBytes();
        ErrorReply control = ErrorReply.newBuilder().setMessage(message).build();
        ByteBuf bulkBuf = bulk.length == 0 ? null : Unpooled.wrappedBuffer(bulk);
        Frame sent = request ? Frame.request(opcode, id, control, bulkBuf)
                : Frame.response(opcode, id, status, control, bulkBuf);
        byte[] wire = RawPeer.encode(sent);
        assertThat(wire.length % FrameCodec.ALIGNMENT).isZero();
        List<Frame> frames = new ArrayList<>();
        FrameCodec codec = new FrameCodec(TransportSettings.DEFAULT_MAX_FRAME_SIZE);
        EmbeddedChannel ch = new EmbeddedChannel(codec, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                frames.add((Frame) msg);
            }
        });
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(wire));
            ch.checkException();
            assertThat(frames).hasSize(1);
            Frame got = frames.getFirst();
            assertThat(got.opcode()).isEqualTo(opcode);
            assertThat(got.requestId()).isEqualTo(id);
            assertThat(got.kind()).isEqualTo(request ? Frame.Kind.REQUEST : Frame.Kind.RESPONSE);
            assertThat(got.status()).isEqualTo(status);
            assertThat(got.parseControl(ErrorReply.parser())).isEqualTo(control);
            byte[] gotBulk = new byte[got.bulk().readableBytes()];
            got.bulk().getBytes(got.bulk().readerIndex(), gotBulk);
            assertThat(gotBulk).isEqualTo(bulk);
        } finally {
            frames.forEach(Frame::release);
            ch.finishAndReleaseAll();
        }
    }
}
