package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits a server puts on its peers ({@link ServerLimits}), each shown with a peer that breaks it:
 * slow-loris peers (a handshake that never completes, a frame that trickles in), big frames before the
 * handshake, thousands of idle connections, connection caps, and a peer that never reads its answers.
 */
class ServerLimitsTest {
    private static final String HOST = "127.0.0.1";
    private static EventLoopGroup clientGroup;
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeAll
    static void setUpAll() {
        NettyLeaks.install();
        clientGroup = EventLoops.newGroup("limits-test-client", 1, true);
    }

    @AfterAll
    static void tearDownAll() {
        clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        NettyLeaks.assertNoLeaks();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private static TransportSettings settings(ServerLimits limits) {
        return TransportSettings.defaults().withIoThreads(1).withHandshakeTimeout(Duration.ofSeconds(10))
                .withLimits(limits);
    }

    private TransportServer server(TransportSettings settings) {
        TransportServer server = new TransportServer("limits", settings);
        resources.add(server);
        server.register(Opcode.DATA_READ, (request, responder) ->
                responder.ok(request.parseControl(DataRequest.parser()), request.bulk().retain()), null);
        server.register(Opcode.PING, (request, responder) -> responder.ok(PingReply.getDefaultInstance()), null);
        return server.start(HOST, 0);
    }

    private RawPeer peer(TransportServer server) throws IOException {
        RawPeer p = new RawPeer(server.localAddress());
        resources.add(p);
        return p;
    }

    @Test
    void aFrameOverTheHandshakeLimitBeforeHelloClosesTheConnectionAndIsFineAfterIt() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults()));
        RawPeer early = peer(server);
        early.send(early.request(Opcode.HELLO, Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .setPeerId("x".repeat(100_000)).build(), null));
        assertThat(early.closedWithin(5_000)).as("closed without an answer").isTrue();

        RawPeer late = peer(server);
        assertThat(late.hello("")).isEqualTo(ErrorCode.OK);
        late.send(late.request(Opcode.DATA_READ, DataRequest.newBuilder().setSegment("s").build(),
                Unpooled.wrappedBuffer(new byte[100_000])));
        RawPeer.Answer a = late.readAnswer();
        assertThat(a.status()).isEqualTo(ErrorCode.OK);
        assertThat(a.bulkLength()).isEqualTo(100_000);
    }

    @Test
    void aHandshakeThatNeverCompletesIsClosedAtTheHandshakeTimeout() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults()).withHandshakeTimeout(Duration.ofMillis(300)));
        RawPeer silent = peer(server);
        RawPeer half = peer(server);
        byte[] hello = half.request(Opcode.HELLO, Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .build(), null);
        half.send(Arrays.copyOf(hello, hello.length / 2));
        assertThat(silent.closedWithin(5_000)).isTrue();
        assertThat(half.closedWithin(5_000)).isTrue();
        await().atMost(Duration.ofSeconds(5)).until(() -> server.connections() == 0);
    }

    @Test
    void aTlsHandshakeThatNeverCompletesIsClosedAtTheHandshakeTimeout(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TransportServer server = server(settings(ServerLimits.defaults()).withHandshakeTimeout(Duration.ofMillis(300))
                .withTls(certs.server.settings()));
        RawPeer partial = peer(server);
        partial.send(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01}); // the start of a ClientHello, never finished
        assertThat(partial.closedWithin(5_000)).isTrue();
    }

    @Test
    void aFrameThatTricklesInIsClosedAtTheFrameTimeout() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults().withFrameTimeout(Duration.ofMillis(500))));
        RawPeer slow = peer(server);
        assertThat(slow.hello("")).isEqualTo(ErrorCode.OK);
        byte[] ping = slow.request(Opcode.PING, PingRequest.newBuilder().setNodeId("slow").build(), null);
        try {
            slow.trickle(Arrays.copyOf(ping, 25), 50); // 1.25 s for 25 bytes of a 64-byte frame
        } catch (IOException closedMeanwhile) {
            // the server may close before the last bytes
        }
        assertThat(slow.closedWithin(5_000)).isTrue();

        RawPeer prompt = peer(server);
        assertThat(prompt.hello("")).isEqualTo(ErrorCode.OK);
        prompt.send(ping);
        assertThat(prompt.readAnswer().status()).isEqualTo(ErrorCode.OK);
    }

    @Test
    void thousandsOfIdleConnectionsAreHeldWhileOthersAreServed() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults().withConnections(10_000, 10_000)));
        int n = 2000;
        for (int i = 0; i < n; i++) {
            RawPeer p = peer(server);
            if (i % 2 == 0) {
                assertThat(p.hello("")).isEqualTo(ErrorCode.OK); // half handshaken, half that never said a word
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> server.connections() == n);
        TransportClient client = TransportClient.connect(HOST, server.localAddress().getPort(),
                settings(ServerLimits.defaults()), "busy", clientGroup);
        resources.add(client);
        assertThat(client.callSync(Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser())).isNotNull();
    }

    @Test
    void idleConnectionsAreClosedByTheIdleTimeout() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults().withIdleTimeout(Duration.ofMillis(500))));
        List<RawPeer> idle = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            RawPeer p = peer(server);
            assertThat(p.hello("")).isEqualTo(ErrorCode.OK);
            idle.add(p);
        }
        TransportClient client = TransportClient.connect(HOST, server.localAddress().getPort(),
                settings(ServerLimits.defaults()), "idle", clientGroup);
        resources.add(client);
        await().atMost(Duration.ofSeconds(20)).until(() -> server.connections() == 0);
        assertThat(idle.getFirst().closedWithin(1_000)).isTrue();
        await().atMost(Duration.ofSeconds(5)).until(() -> !client.isActive());
    }

    @Test
    void connectionsOverTheCapsAreRefusedNamingTheLimit() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults().withConnections(3, 1000)));
        List<RawPeer> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            RawPeer p = peer(server);
            assertThat(p.hello("")).isEqualTo(ErrorCode.OK);
            held.add(p);
        }
        RawPeer fourth = peer(server);
        fourth.send(fourth.request(Opcode.HELLO, Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .build(), null));
        RawPeer.Answer refused = fourth.readAnswer();
        assertThat(refused.status()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
        assertThat(refused.message()).contains("transport.max-connections = 3");
        assertThat(fourth.closedWithin(5_000)).isTrue();
        // what a client sees
        BlockingConnectionPool pool = new BlockingConnectionPool("caps", settings(ServerLimits.defaults()), "p");
        resources.add(pool);
        String endpoint = HOST + ":" + server.localAddress().getPort();
        assertThatThrownBy(() -> pool.call(endpoint, Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS))
                .hasMessageContaining("transport.max-connections = 3");
        held.getFirst().close();
        await().atMost(Duration.ofSeconds(5)).until(() -> server.connections() == 2);
        assertThat(pool.call(endpoint, Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser())).isNotNull();
    }

    @Test
    void connectionsOverThePerAddressCapAreRefusedNamingTheLimit() throws Exception {
        TransportServer server = server(settings(ServerLimits.defaults().withConnections(100, 2)));
        for (int i = 0; i < 2; i++) {
            assertThat(peer(server).hello("")).isEqualTo(ErrorCode.OK);
        }
        RawPeer third = peer(server);
        third.send(third.request(Opcode.HELLO, Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .build(), null));
        RawPeer.Answer refused = third.readAnswer();
        assertThat(refused.status()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
        assertThat(refused.message()).contains("from 127.0.0.1").contains("transport.max-connections-per-address = 2");
    }

    @Test
    void aPeerThatNeverReadsIsNoLongerReadAndTheServersQueueStaysBounded() throws Exception {
        int answer = 256 * 1024;
        ByteBuf base = Unpooled.directBuffer(answer).writeZero(answer);
        resources.add(base::release); // closed last, after the server
        ByteBuf shared = Unpooled.unreleasableBuffer(base);
        AtomicInteger handled = new AtomicInteger();
        TransportServer server = new TransportServer("never-reads",
                settings(ServerLimits.defaults().withWriteBufferLimit(512 * 1024)));
        resources.add(server);
        server.register(Opcode.DATA_READ, (request, responder) -> {
            handled.incrementAndGet();
            responder.ok(DataRequest.getDefaultInstance(), shared.retainedDuplicate());
        }, null);
        server.start(HOST, 0);
        RawPeer peer = new RawPeer(server.localAddress(), 64 * 1024);
        resources.add(peer);
        assertThat(peer.hello("")).isEqualTo(ErrorCode.OK);
        int requests = 200; // 50 MiB of answers if the server queued them all
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int i = 0; i < requests; i++) {
            all.writeBytes(peer.request(Opcode.DATA_READ, DataRequest.getDefaultInstance(), null));
        }
        peer.send(all.toByteArray());
        // Answers past the limit wait unsent, and the requests behind them unread or unhandled. The kernel's
        // socket buffers take a few MiB first: 64 answers (16 MiB) is far more than they hold, far less than 200.
        await().atMost(Duration.ofSeconds(5)).until(() -> handled.get() > 0);
        await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(3)).until(() -> handled.get() <= 64);
        for (int i = 0; i < requests; i++) {
            assertThat(peer.readAnswer().bulkLength()).isEqualTo(answer);
        }
        assertThat(handled.get()).isEqualTo(requests);
    }

    @Test
    void limitsOutOfRangeNameTheirKey() {
        assertThatThrownBy(() -> ServerLimits.defaults().withConnections(0, 1))
                .hasMessageContaining("transport.max-connections = 0");
        assertThatThrownBy(() -> ServerLimits.defaults().withMaxQueryAnswerSize(64 << 20))
                .hasMessageContaining("transport.max-query-answer-size");
        assertThatThrownBy(() -> ServerLimits.defaults().checkBatch(Opcode.BATCH_REMOVE, 100_001))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("transport.max-batch-keys = 100000");
    }

    @Test
    void protectedModeRefusesAWildcardAddressWithoutCredentials(@TempDir Path dir) {
        TransportSettings open = settings(ServerLimits.defaults());
        assertThatThrownBy(() -> new TransportServer("guarded", open).start("0.0.0.0", 0))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("server guarded refuses to listen on 0.0.0.0:0")
                .hasMessageContaining("transport.auth-token").hasMessageContaining("--insecure");
        TestCertificates certs = TestCertificates.create(dir);
        assertThatThrownBy(() -> new TransportServer("tls-only", open.withTls(certs.server.settings())).start("0.0.0.0", 0))
                .as("TLS without client certificates is no credential").isInstanceOf(TiffinException.class);
        for (TransportSettings allowed : List.of(open.withAuthToken("s3cret"), open.withInsecure(true),
                open.withTls(certs.server.settings().withClientAuth(TlsSettings.ClientAuth.REQUIRE)))) {
            try (TransportServer s = new TransportServer("allowed", allowed)) {
                assertThat(s.start("0.0.0.0", 0).localAddress().getPort()).isPositive();
            }
        }
        assertThat(ProtectedMode.isLoopback("127.0.0.1")).isTrue();
        assertThat(ProtectedMode.isLoopback("localhost")).isTrue();
        assertThat(ProtectedMode.isLoopback("::1")).isTrue();
        assertThat(ProtectedMode.isLoopback("0.0.0.0")).isFalse();
        assertThat(ProtectedMode.isLoopback("no-such-host.invalid")).isFalse();
    }
}
