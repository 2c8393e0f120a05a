package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.KeyRequest;
import org.junit.jupiter.api.Test;

/** A request made in this JVM hands its message to the handler as it is, and as bytes to any other type. */
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
        Frame wire = Frame.request(Opcode.GET_REPLICA_LIST, 1, request, null);
        try {
            // field 1 (client_id) and 3 (force) mean the same in BatchKeysRequest; field 2 is its repeated keys
            BatchKeysRequest other = frame.parseControl(BatchKeysRequest.parser());
            assertThat(other).isEqualTo(wire.parseControl(BatchKeysRequest.parser()));
            assertThat(other.getClientId()).isEqualTo("c1");
            assertThat(other.getKeysList()).containsExactly("kv/7");
            assertThat(other.getForce()).isTrue();
            assertThat(wire.parseControl(KeyRequest.parser())).isEqualTo(request).isNotSameAs(request);
            assertThat(wire.controlSize()).isEqualTo(frame.controlSize());
        } finally {
            frame.release();
            wire.release();
        }
    }
}
