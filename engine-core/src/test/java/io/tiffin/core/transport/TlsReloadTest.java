package io.tiffin.core.transport;

import static io.tiffin.core.transport.TestCertificates.install;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.channel.EventLoopGroup;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Certificates rotated without a restart ({@code transport.tls.reload-interval}): a server presents the new
 * certificate to new connections while the connections made before go on, files that do not load leave the
 * certificate loaded before in use until they are fixed, and a client trusts a replaced CA file.
 */
class TlsReloadTest {
    private static final String HOST = "127.0.0.1";
    private static final Duration RELOAD = Duration.ofMillis(50);
    @TempDir
    static Path dir;
    private static TestCertificates certs;
    private static EventLoopGroup clientGroup;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private Path cert;
    private Path key;

    @BeforeAll
    static void setUpAll() {
        NettyLeaks.install();
        certs = TestCertificates.create(dir);
        clientGroup = EventLoops.newGroup("tls-reload-test-client", 1, true);
    }

    @AfterAll
    static void tearDownAll() {
        clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        NettyLeaks.assertNoLeaks();
    }

    @BeforeEach
    void liveFiles(@TempDir Path live) {
        cert = live.resolve("cert.pem");
        key = live.resolve("key.pem");
        install(certs.server.cert(), cert);
        install(certs.server.key(), key);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private static TransportSettings settings(TlsSettings tls) {
        return TransportSettings.defaults().withIoThreads(1).withHandshakeTimeout(Duration.ofSeconds(5)).withTls(tls);
    }

    private TransportServer server(TlsSettings tls) {
        TransportServer server = new TransportServer("tls-reload-test", settings(tls));
        resources.add(server);
        server.register(Opcode.PING, (request, responder) -> responder.ok(PingReply.newBuilder()
                .setNeedRemount(true).build()), null);
        return server.start(HOST, 0);
    }

    private static String presented(TransportServer server) {
        try {
            return TlsProbe.presentedSubject(HOST, server.localAddress().getPort(), certs.server.ca());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @ParameterizedTest
    @EnumSource(value = TlsSettings.Provider.class, names = {"OPENSSL", "JDK"})
    void aRotatedCertificateIsPresentedToNewConnectionsWhileTheOnesMadeBeforeGoOn(TlsSettings.Provider provider) {
        TransportServer server = server(TlsSettings.of(cert, key, certs.server.ca()).withProvider(provider)
                .withReloadInterval(RELOAD));
        assertThat(presented(server)).isEqualTo("CN=tiffin server");
        TransportClient before = TransportClient.connect(HOST, server.localAddress().getPort(),
                settings(certs.client.trustOnly().withProvider(provider)), "before", clientGroup);
        resources.add(before);
        assertThat(before.callSync(Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()).getNeedRemount())
                .isTrue();

        TestCertificates.Party rotated = certs.issue("rotated server");
        install(rotated.key(), key);
        install(rotated.cert(), cert);
        // each new connection past the interval has the files looked at; the reload happens beside it
        await().atMost(Duration.ofSeconds(10)).until(() -> presented(server).equals("CN=rotated server"));
        assertThat(server.tls().reloads()).isEqualTo(1);
        assertThat(server.tls().certificate().getSubjectX500Principal().getName()).isEqualTo("CN=rotated server");
        assertThat(before.callSync(Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()).getNeedRemount())
                .as("a connection made before the rotation keeps its session").isTrue();
        TransportClient after = TransportClient.connect(HOST, server.localAddress().getPort(),
                settings(certs.client.trustOnly().withProvider(provider)), "after", clientGroup);
        resources.add(after);
        assertThat(after.callSync(Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()).getNeedRemount())
                .isTrue();
    }

    @Test
    void filesThatDoNotLoadLeaveTheCertificateLoadedBeforeInUseUntilTheyAreFixed() {
        TransportServer server = server(TlsSettings.of(cert, key, certs.server.ca()).withReloadInterval(RELOAD));
        TestCertificates.Party rotated = certs.issue("half rotated");
        install(rotated.cert(), cert); // its key not there yet: the old key does not belong to it
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            assertThat(presented(server)).isEqualTo("CN=tiffin server");
            return server.tls().failedReloads() == 1;
        });
        assertThat(presented(server)).isEqualTo("CN=tiffin server");
        assertThat(server.tls().reloads()).isZero();

        install(rotated.key(), key);
        await().atMost(Duration.ofSeconds(10)).until(() -> presented(server).equals("CN=half rotated"));
        assertThat(server.tls().failedReloads()).as("the refused files are looked at once").isEqualTo(1);
        assertThat(server.tls().reloads()).isEqualTo(1);
    }

    @Test
    void aClientTrustsTheAuthoritiesOfItsReplacedCaFile(@TempDir Path clientDir) {
        TransportServer server = server(certs.strangerServer.settings());
        Path ca = clientDir.resolve("ca.pem");
        install(certs.server.ca(), ca);
        BlockingConnectionPool pool = new BlockingConnectionPool("tls-reload-client", settings(
                TlsSettings.of(null, null, ca).withReloadInterval(RELOAD)), "reloading-client");
        resources.add(pool);
        String endpoint = HOST + ":" + server.localAddress().getPort();
        assertThatThrownBy(() -> pool.call(endpoint, Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()))
                .as("a server of another CA").isInstanceOf(TiffinException.class);

        install(certs.strangerServer.ca(), ca);
        await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> pool.call(endpoint, Opcode.PING,
                PingRequest.getDefaultInstance(), PingReply.parser()).getNeedRemount());
    }

    @Test
    void withoutAReloadIntervalTheFilesAreReadOnce() throws InterruptedException {
        TransportServer server = server(TlsSettings.of(cert, key, certs.server.ca())
                .withReloadInterval(Duration.ZERO));
        TestCertificates.Party rotated = certs.issue("never seen");
        install(rotated.key(), key);
        install(rotated.cert(), cert);
        for (int i = 0; i < 5; i++) {
            assertThat(presented(server)).isEqualTo("CN=tiffin server");
            Thread.sleep(RELOAD.toMillis());
        }
        assertThat(server.tls().reloads()).isZero();
    }

    @Test
    void rsaKeysAreCheckedAgainstTheirCertificateAsEcKeysAre(@TempDir Path rsaDir) throws Exception {
        var rsa = new io.netty.pkitesting.CertificateBuilder().subject("CN=rsa server").addSanIpAddress(HOST)
                .rsa2048().setIsCertificateAuthority(true).buildSelfSigned();
        Path rsaCert = Files.writeString(rsaDir.resolve("rsa.pem"), rsa.getCertificatePathPEM());
        Path rsaKey = Files.writeString(rsaDir.resolve("rsa-key.pem"), rsa.getPrivateKeyPEM());
        TransportServer server = server(TlsSettings.of(rsaCert, rsaKey, null));
        assertThat(server.tls().certificate().getPublicKey().getAlgorithm()).isEqualTo("RSA");
        assertThatThrownBy(() -> new TransportServer("bad", settings(TlsSettings.of(rsaCert, certs.server.key(),
                null)))).isInstanceOf(TiffinException.class).hasMessageContaining("is not the key of the certificate");
        assertThatThrownBy(() -> new TransportServer("bad", settings(TlsSettings.of(certs.server.cert(), rsaKey,
                null)))).isInstanceOf(TiffinException.class).hasMessageContaining("is not the key of the certificate");
    }

    @Test
    void aKeyOfAnotherCertificateIsRefusedAtStartNamingBothFiles() {
        assertThatThrownBy(() -> new TransportServer("bad", settings(TlsSettings.of(certs.server.cert(),
                certs.client.key(), null)))).isInstanceOf(TiffinException.class)
                .hasMessageContaining("transport.tls.key = " + certs.client.key())
                .hasMessageContaining("is not the key of the certificate in transport.tls.cert = "
                        + certs.server.cert());
    }
}
