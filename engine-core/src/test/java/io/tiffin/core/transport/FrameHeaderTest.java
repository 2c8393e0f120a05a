package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongFunction;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The two decoders of frame headers, {@link FrameCodec}'s (event-loop connections: servers and {@link
 * TransportClient}) and {@link BlockingConnection}'s, fed the same bad headers: both refuse each, with
 * the same words ({@link FrameHeader}).
 */
class FrameHeaderTest {
    /** The frame size limit on both sides: above 16 MiB, so the control part's own limit can be hit. */
    private static final int MAX = 32 << 20;
    private static final int V = TiffinVersion.PROTOCOL_VERSION;
    private static final int RESPONSE = Frame.Kind.RESPONSE.code();
    private static final int PING = Opcode.PING.code();

    /** A bad header, words its refusal must contain, and its bytes for request id {@code id}. */
    private record Case(String words, LongFunction<ByteBuffer> bytes) {
    }

    /** 64 bytes: a header with every field as given (valid or not), then zeros. */
    private static ByteBuffer header(int length, int version, int kind, int opcode, long id, int status,
                                     int controlLength, int bulkLength) {
        return ByteBuffer.allocate(64).putInt(length).put((byte) version).put((byte) kind).putShort((short) opcode)
                .putLong(id).putInt(status).putInt(controlLength).putInt(bulkLength).position(64).flip();
    }

    private static List<Case> badHeaders() {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("frame length 3 is shorter than the 24-byte header",
                id -> header(3, V, RESPONSE, PING, id, 0, 0, 0)));
        cases.add(new Case("frame length " + (MAX + 1) + " exceeds the limit of " + MAX + " bytes",
                id -> header(MAX + 1, V, RESPONSE, PING, id, 0, 0, 0)));
        cases.add(new Case("protocol version " + (V + 1), id -> header(60, V + 1, RESPONSE, PING, id, 0, 0, 0)));
        cases.add(new Case("unknown frame kind 2", id -> header(60, V, 2, PING, id, 0, 0, 0)));
        cases.add(new Case("unknown opcode 999", id -> header(60, V, RESPONSE, 999, id, 0, 0, 0)));
        cases.add(new Case("request PING carries status 5", id -> header(60, V, 0, PING, id, 5, 0, 0)));
        cases.add(new Case("control length -1 does not fit in a frame of length 60",
                id -> header(60, V, RESPONSE, PING, id, 0, -1, 0)));
        cases.add(new Case("control length 37 does not fit in a frame of length 60",
                id -> header(60, V, RESPONSE, PING, id, 0, 37, 0)));
        int overControl = FrameCodec.MAX_CONTROL_SIZE + 1;
        cases.add(new Case("control length " + overControl + " exceeds the limit of " + FrameCodec.MAX_CONTROL_SIZE,
                id -> header(FrameCodec.MAX_CONTROL_SIZE + 60, V, RESPONSE, PING, id, 0, overControl, 0)));
        cases.add(new Case("bulk length -1 with 64-byte padding", id -> header(60, V, RESPONSE, PING, id, 0, 0, -1)));
        cases.add(new Case("frame length 61 does not match control length 0 and bulk length 0",
                id -> header(61, V, RESPONSE, PING, id, 0, 0, 0)));
        return cases;
    }

    @BeforeAll
    static void watchLeaks() {
        NettyLeaks.install();
    }

    @AfterAll
    static void noLeaks() {
        NettyLeaks.assertNoLeaks();
    }

    @Test
    void bothDecodersRefuseTheSameHeadersWithTheSameWords() throws Exception {
        for (Case c : badHeaders()) {
            String codec = codecRefusal(c.bytes().apply(1));
            assertThat(codec).as("FrameCodec on: " + c.words()).contains(c.words());
            String blocking = blockingRefusal(c.bytes());
            assertThat(blocking).as("BlockingConnection on: " + c.words())
                    .contains(": " + codec + "; closed the connection");
        }
    }

    @Test
    void aValidHeaderDecodesToItsFields() throws Exception {
        ByteBuffer wire = header((int) FrameCodec.frameSize(3, 100) - 4, V, RESPONSE, PING, 42, 7, 3, 100);
        FrameHeader h = FrameHeader.decode(wire, 0, MAX);
        assertThat(h).isEqualTo(new FrameHeader(188, Frame.Kind.RESPONSE, Opcode.PING, 42, 7, 3, 100));
        assertThat(h.frameSize()).isEqualTo(192);
        assertThat(h.bulkOffset()).isEqualTo(64);
        assertThat(h.controlAndPadding()).as("control and padding up to the bulk").isEqualTo(64 - 28);
        assertThat(h.bulkPadding()).isEqualTo(28);
        assertThat(FrameHeader.decode(Unpooled.wrappedBuffer(wire), 0, MAX)).isEqualTo(h);
        assertThatThrownBy(() -> FrameHeader.decode(wire, 0, 100))
                .isInstanceOf(FrameHeader.Malformed.class).hasMessageContaining("exceeds the limit of 100 bytes");
    }

    /** The problem FrameCodec's decoder logs when it closes a channel fed {@code bytes}. */
    private static String codecRefusal(ByteBuffer bytes) {
        List<String> warnings = new CopyOnWriteArrayList<>();
        AbstractAppender appender = new AbstractAppender("frame-header-test", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                warnings.add(event.getMessage().getFormattedMessage());
            }
        };
        appender.start();
        Logger logger = (Logger) LogManager.getLogger(FrameCodec.class);
        logger.addAppender(appender);
        try {
            EmbeddedChannel channel = new EmbeddedChannel(new FrameCodec(MAX));
            channel.writeInbound(Unpooled.wrappedBuffer(bytes));
            assertThat(channel.<Object>readInbound()).isNull();
            assertThat(channel.isOpen()).as("closed").isFalse();
            assertThat(channel.finish()).isFalse();
        } finally {
            logger.removeAppender(appender);
            appender.stop();
        }
        String prefix = "Closing connection with embedded: ";
        assertThat(warnings).singleElement().asString().startsWith(prefix);
        return warnings.getFirst().substring(prefix.length());
    }

    /** The message a {@link BlockingConnection} call fails with when the answer after the handshake is {@code reply}. */
    private static String blockingRefusal(LongFunction<ByteBuffer> reply) throws Exception {
        TransportSettings settings = TransportSettings.defaults().withMaxFrameSize(MAX)
                .withHandshakeTimeout(Duration.ofSeconds(5)).withRpcTimeout(Duration.ofSeconds(10));
        try (RawAnswerServer server = new RawAnswerServer(reply);
             BlockingConnectionPool pool = new BlockingConnectionPool("frame-header-test", settings, "p")) {
            String address = server.address();
            TiffinException e = org.assertj.core.api.Assertions.catchThrowableOfType(TiffinException.class,
                    () -> pool.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId("a").build(),
                            PingReply.parser()));
            assertThat(e).as("the call fails").isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL);
            assertThat(pool.idleCount(address)).as("the connection is closed, not kept").isZero();
            return e.getMessage();
        }
    }
}
