package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.KeyRequest;
import org.junit.jupiter.api.Test;

/**
 * A frame made in this JVM hands its message to a parser of its type as it is, and as bytes to any other type; the
 * encoder serialises it, and the frame decoded from those bytes parses to an equal message.
 */
class InProcessFrameTest {
    private final KeyRequest request = KeyRequest.newBuilder().setClientId("c1").setKey("kv/7").setForce(true).build();

    @Test
    void theHandlerOfItsOwnTypeGetsTheMessageItself() {
        Frame frame = Frame.inProcessRequest(Opcode.GET_REPLICA_LIST, request);
        try {
            assertThat(frame.parseControl(KeyRequest.parser())).isSameAs(request);
            assertThat(frame.control().readableBytes()).isZero();
            assertThat(frame.controlSize()).isEqualTo(request.getSerializedSize()).isPositive();
            assertThat(frame.peer()).isEqualTo(Peer.IN_PROCESS);
        } finally {
            frame.release();
        }
    }

    @Test
    void aParserOfAnotherTypeReadsItsBytesAsOverTheWire() {
        Frame frame = Frame.inProcessRequest(Opcode.GET_REPLICA_LIST, request);
        Frame sent = Frame.request(Opcode.GET_REPLICA_LIST, 1, request, null);
        assertThat(sent.parseControl(KeyRequest.parser())).isSameAs(request); // made here: not serialised yet
        assertThat(sent.controlSize()).isEqualTo(frame.controlSize());
        Frame wire = overTheWire(sent);
        try {
            // field 1 (client_id) and 3 (force) mean the same in BatchKeysRequest; field 2 is its repeated keys
            BatchKeysRequest other = frame.parseControl(BatchKeysRequest.parser());
            assertThat(other).isEqualTo(wire.parseControl(BatchKeysRequest.parser()));
            assertThat(other.getClientId()).isEqualTo("c1");
            assertThat(other.getKeysList()).containsExactly("kv/7");
            assertThat(other.getForce()).isTrue();
            assertThat(wire.parseControl(KeyRequest.parser())).isEqualTo(request).isNotSameAs(request);
            assertThat(wire.control().readableBytes()).isEqualTo(wire.controlSize()).isEqualTo(frame.controlSize());
        } finally {
            frame.release();
            wire.release();
        }
    }

    @Test
    void aMessageOverTheEagerLimitIsSerialisedWhenItsFrameIsMade() {
        BatchKeysRequest.Builder b = BatchKeysRequest.newBuilder().setClientId("c1");
        for (int i = 0; b.build().getSerializedSize() <= Frame.EAGER_SERIALIZE_BYTES; i++) {
            b.addKeys("kv/" + i + "/" + "x".repeat(100));
        }
        BatchKeysRequest big = b.build();
        Frame sent = Frame.response(Opcode.LIST_KEYS, 9, io.tiffin.api.ErrorCode.OK, big, null);
        assertThat(sent.control().readableBytes()).isEqualTo(big.getSerializedSize()); // bytes already, no message
        assertThat(sent.parseControl(BatchKeysRequest.parser())).isEqualTo(big).isNotSameAs(big);
        Frame wire = overTheWire(sent);
        try {
            assertThat(wire.parseControl(BatchKeysRequest.parser())).isEqualTo(big);
        } finally {
            wire.release();
        }
    }

    /** {@code frame} encoded (and released) and decoded again. */
    private static Frame overTheWire(Frame frame) {
        EmbeddedChannel encoder = new EmbeddedChannel(new FrameCodec(4 << 20));
        EmbeddedChannel decoder = new EmbeddedChannel(new FrameCodec(4 << 20));
        assertThat(encoder.writeOutbound(frame)).isTrue();
        ByteBuf part;
        while ((part = encoder.readOutbound()) != null) {
            decoder.writeInbound(part);
        }
        Frame decoded = decoder.readInbound();
        assertThat(decoded).isNotNull();
        assertThat(encoder.finish()).isFalse();
        assertThat(decoder.finish()).isFalse();
        return decoded;
    }
}
