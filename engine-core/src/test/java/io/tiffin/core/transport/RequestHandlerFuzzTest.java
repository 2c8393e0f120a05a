package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.DataRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Coverage-guided fuzzing of every request handler after a successful handshake: a real master and a real
 * node (with its segment) on loopback, and two raw peers that completed HELLO send each a request of any
 * opcode with any control bytes (for DATA_READ / DATA_WRITE also well-formed requests naming the real
 * segment at any offset and length, with or without the genuine grant of a put that started before the run, so
 * requests reach the segment's bytes as well as each refusal of the grant check) through the real decoder. Every request must get an answer that is not
 * {@code INTERNAL_ERROR} (a handler that threw something other than a {@code TiffinException}), on a
 * connection that stays open; no buffer may leak (paranoid leak detection). In CI the inputs under
 * src/test/resources run as regression tests.
 */
class RequestHandlerFuzzTest {
    private static final Opcode[] OPCODES = Arrays.stream(Opcode.values()).filter(o -> o != Opcode.HELLO)
            .toArray(Opcode[]::new);
    private static MasterServer master;
    private static NodeServer node;
    private static RawPeer toMaster;
    private static RawPeer toNode;
    /** The master's grant of a put started before the run and never ended (write and read, 4 MiB). */
    private static io.tiffin.core.transport.proto.DataGrant grant;

    @BeforeAll
    static void startServers() throws IOException {
        NettyLeaks.install();
        // short leases: a forced remove of a key some lookup asked to cache answers within half a lease
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("master.lease-ttl", "200ms").set("master.put-start-release-timeout", "1d").build();
        master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class));
        node = NodeServer.start(NodeOptions.builder("127.0.0.1:" + master.address().getPort())
                .nodeId("fuzz-node").segmentSize(8L << 20).pingInterval(Duration.ofMillis(500)).build());
        try (BlockingConnectionPool pool = new BlockingConnectionPool("fuzz", TransportSettings.defaults(), "fuzz")) {
            var started = pool.call("127.0.0.1:" + master.address().getPort(), Opcode.PUT_START,
                    io.tiffin.core.transport.proto.PutStartRequest.newBuilder().setKey("fuzz-granted").setSize(4L << 20)
                            .setPutId(1).build(), io.tiffin.core.transport.proto.PutStartReply.parser());
            grant = Messages.grantOf(Messages.fromMsg(started.getReplicas(0)));
        }
        toMaster = connect(master.address());
        toNode = connect(new java.net.InetSocketAddress("127.0.0.1",
                Integer.parseInt(node.endpoint().substring(node.endpoint().lastIndexOf(':') + 1))));
    }

    private static RawPeer connect(java.net.InetSocketAddress address) throws IOException {
        RawPeer p = new RawPeer(address);
        assertThat(p.hello("")).isEqualTo(ErrorCode.OK);
        return p;
    }

    @AfterAll
    static void stopServers() throws IOException {
        toMaster.close();
        toNode.close();
        node.close();
        master.close();
        NettyLeaks.assertNoLeaks();
    }

    @FuzzTest(maxDuration = "10m")
    void everyHandlerAnswersAnyRequestWithoutAnInternalError(FuzzedDataProvider data) throws IOException {
        Opcode opcode = data.pickValue(OPCODES);
        RawPeer peer = opcode.code() >= 100 ? toNode : toMaster;
        ByteBuf control;
        if ((opcode == Opcode.DATA_READ || opcode == Opcode.DATA_WRITE) && data.consumeBoolean()) {
            DataRequest.Builder req = DataRequest.newBuilder()
                    .setSegment(data.consumeBoolean() ? node.segmentName() : data.consumeString(40))
                    .setOffset(data.consumeBoolean() ? data.consumeLong(-1, 9L << 20) : data.consumeLong())
                    .setLength(data.consumeBoolean() ? data.consumeLong(-1, 9L << 20) : data.consumeLong());
            if (data.consumeBoolean()) {
                req.setMountEpoch(data.consumeBoolean() ? node.mountEpoch() : data.consumeLong());
            }
            if (data.consumeBoolean()) {
                req.setGrant(data.consumeBoolean() ? grant : grant.toBuilder().setOffset(data.consumeLong(-1, 9L << 20))
                        .setLength(data.consumeLong(-1, 9L << 20)).setOps(data.consumeInt(0, 3)).build());
            }
            control = Unpooled.wrappedBuffer(req.build().toByteArray());
        } else {
            control = Unpooled.wrappedBuffer(data.consumeBytes(4096));
        }
        byte[] bulk = data.consumeRemainingAsBytes();
        Frame request = new Frame(Frame.Kind.REQUEST, opcode, 7, ErrorCode.OK, control,
                bulk.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bulk));
        peer.send(RawPeer.encode(request));
        RawPeer.Answer answer = peer.readAnswer();
        assertThat(answer.status()).as("answer to %s: %s", opcode, answer.message())
                .isNotEqualTo(ErrorCode.INTERNAL_ERROR);
    }
}
