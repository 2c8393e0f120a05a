package io.tiffin.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Credentials;
import io.tiffin.core.transport.Role;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsProbe;
import io.tiffin.core.transport.TlsSettings;
import io.tiffin.core.transport.TransportSettings;
import java.io.FileInputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who may use the admin endpoints ({@link AdminAccess}), over HTTP and HTTPS, and what the server does with peers
 * that trickle requests, send nothing, speak plaintext to HTTPS, or come over a connection cap.
 */
class AdminHttpServerTest {
    private static HttpResponse<String> get(HttpClient http, String url, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void onLoopbackAnyoneOnThisHostMayAsk() throws Exception {
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, TransportSettings.defaults(), () -> "m 1",
                () -> "{}"); HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics", null);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("m 1");
        }
    }

    @Test
    void beyondLoopbackTheTokenIsNeeded() throws Exception {
        TransportSettings withToken = TransportSettings.defaults().withAuthToken("s3cret");
        try (AdminHttpServer admin = new AdminHttpServer("0.0.0.0", 0, withToken, () -> "m 1", () -> "{}");
             HttpClient http = HttpClient.newHttpClient()) {
            assertThat(admin.access().needsToken()).isTrue();
            String url = "http://127.0.0.1:" + admin.address().getPort() + "/health";
            HttpResponse<String> none = get(http, url, null);
            assertThat(none.statusCode()).isEqualTo(401);
            assertThat(none.headers().firstValue("WWW-Authenticate")).contains("Bearer realm=\"tiffin-admin\"");
            assertThat(none.body()).contains("Authorization: Bearer <transport.auth-token>");
            assertThat(get(http, url, "Bearer wrong").statusCode()).isEqualTo(401);
            assertThat(get(http, url, "Basic czNjcmV0").statusCode()).isEqualTo(401);
            HttpResponse<String> ok = get(http, url, "Bearer s3cret");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("{}");
        }
    }

    @Test
    void withRoleTokensOnlyTheAdminTokenOpensTheEndpoints() throws Exception {
        TransportSettings roles = TransportSettings.defaults().withCredentials(Credentials.NONE
                .withToken(Role.CLIENT, "client-secret").withToken(Role.NODE, "node-secret")
                .withToken(Role.ADMIN, "admin-secret"));
        try (AdminHttpServer admin = new AdminHttpServer("0.0.0.0", 0, roles, () -> "m 3", () -> "{}");
             HttpClient http = HttpClient.newHttpClient()) {
            String url = "http://127.0.0.1:" + admin.address().getPort() + "/metrics";
            HttpResponse<String> client = get(http, url, "Bearer client-secret");
            assertThat(client.statusCode()).isEqualTo(401);
            assertThat(client.body()).contains("Authorization: Bearer <transport.admin-token>, the admin role's token");
            assertThat(get(http, url, "Bearer node-secret").statusCode()).isEqualTo(401);
            HttpResponse<String> ok = get(http, url, "Bearer admin-secret");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("m 3");
        }
    }

    @Test
    void beyondLoopbackWithoutCredentialsItRefusesToStart() {
        assertThatThrownBy(() -> new AdminHttpServer("0.0.0.0", 0, TransportSettings.defaults(), () -> "", () -> ""))
                .isInstanceOf(TiffinException.class).hasMessageContaining("admin HTTP refuses to listen on 0.0.0.0")
                .hasMessageContaining("--insecure");
    }

    @Test
    void withTlsItIsHttps(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TransportSettings tls = TransportSettings.defaults().withTls(certs.server.settings());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (FileInputStream in = new FileInputStream(certs.server.ca().toFile())) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, tmf.getTrustManagers(), null);
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, tls, () -> "m 2", () -> "{}");
             HttpClient http = HttpClient.newBuilder().sslContext(context).build()) {
            HttpResponse<String> r = get(http, "https://127.0.0.1:" + admin.address().getPort() + "/metrics", null);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("m 2");
        }
    }

    /** A certificate rotated on disk is presented from the next connections on, without a restart. */
    @Test
    void aRotatedCertificateIsPresentedWithoutARestart(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        Path cert = dir.resolve("live.pem");
        Path key = dir.resolve("live-key.pem");
        TestCertificates.install(certs.server.cert(), cert);
        TestCertificates.install(certs.server.key(), key);
        TransportSettings tls = TransportSettings.defaults().withTls(io.tiffin.core.transport.TlsSettings.of(cert, key,
                certs.server.ca()).withReloadInterval(java.time.Duration.ofMillis(50)));
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, tls, () -> "m 3", () -> "{}")) {
            int port = admin.address().getPort();
            assertThat(TlsProbe.presentedSubject("127.0.0.1", port, certs.server.ca())).isEqualTo("CN=tiffin server");
            TestCertificates.Party rotated = certs.issue("rotated admin");
            TestCertificates.install(rotated.key(), key);
            TestCertificates.install(rotated.cert(), cert);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> TlsProbe
                    .presentedSubject("127.0.0.1", port, certs.server.ca()).equals("CN=rotated admin"));
        }
    }

    /** The status data needs the admin token beyond loopback; the page (no data in it) is served to all. */
    @Test
    void theStatusDataFollowsTheTokenRuleAndThePageIsServedFromTheJar() throws Exception {
        TransportSettings withToken = TransportSettings.defaults().withAuthToken("s3cret");
        try (AdminHttpServer admin = new AdminHttpServer("0.0.0.0", 0, withToken, () -> "m 1", () -> "{}",
                () -> "{\"summary\":{}}"); HttpClient http = HttpClient.newHttpClient()) {
            String base = "http://127.0.0.1:" + admin.address().getPort();
            assertThat(get(http, base + "/api/status", null).statusCode()).isEqualTo(401);
            assertThat(get(http, base + "/api/status", "Bearer wrong").statusCode()).isEqualTo(401);
            HttpResponse<String> ok = get(http, base + "/api/status", "Bearer s3cret");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("{\"summary\":{}}");
            assertThat(ok.headers().firstValue("Content-Type")).hasValue("application/json");

            HttpResponse<String> page = get(http, base + "/", null);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
            assertThat(page.headers().firstValue("Content-Security-Policy")).hasValueSatisfying(
                    csp -> assertThat(csp).contains("default-src 'none'").contains("connect-src 'self'"));
            assertThat(page.body()).contains("<title>Tiffin status</title>").contains("fetch(\"api/status\"")
                    .doesNotContain("http://").doesNotContain("https://");
            assertThat(get(http, base + "/other", null).statusCode()).isEqualTo(404);
        }
    }

    @Test
    void withoutAStatusSourceThereIsNoPage() throws Exception {
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, TransportSettings.defaults(), () -> "m 1",
                () -> "{}"); HttpClient http = HttpClient.newHttpClient()) {
            String base = "http://127.0.0.1:" + admin.address().getPort();
            assertThat(get(http, base + "/", null).statusCode()).isEqualTo(404);
            assertThat(get(http, base + "/api/status", null).statusCode()).isEqualTo(404);
        }
    }

    /**
     * Peers that send a byte of a request and nothing more hold no thread: the endpoints answer others at once, and
     * each such connection is closed after transport.handshake-timeout. Over HTTP and HTTPS (where the byte is the
     * start of a TLS record).
     */
    @Test
    void peersThatSendAByteAndStopNeitherBlockOthersNorStay(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TransportSettings plain = TransportSettings.defaults().withHandshakeTimeout(Duration.ofSeconds(1));
        TransportSettings tls = plain.withTls(certs.server.settings());
        for (TransportSettings settings : List.of(plain, tls)) {
            boolean https = settings.tls().enabled();
            try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, settings, () -> "m 1", () -> "{}");
                 HttpClient http = https ? HttpClient.newBuilder().sslContext(trusting(certs)).build()
                         : HttpClient.newHttpClient()) {
                int port = admin.address().getPort();
                List<Socket> slow = new ArrayList<>();
                try {
                    for (int i = 0; i < 8; i++) {
                        Socket s = new Socket("127.0.0.1", port);
                        s.getOutputStream().write(https ? 0x16 : 'G');
                        s.getOutputStream().flush();
                        slow.add(s);
                    }
                    long start = System.nanoTime();
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create((https ? "https" : "http")
                            + "://127.0.0.1:" + port + "/health")).timeout(Duration.ofSeconds(5)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("answered while 8 peers trickle")
                            .isLessThan(Duration.ofSeconds(3));
                    for (Socket s : slow) {
                        s.setSoTimeout(10_000);
                        assertThat(s.getInputStream().read()).as("a trickling peer is closed").isEqualTo(-1);
                    }
                } finally {
                    for (Socket s : slow) {
                        s.close();
                    }
                }
            }
        }
    }

    /**
     * With mutual TLS and transport.tls.admin-names, only a certificate named there (or the admin token) opens the
     * endpoints; a certificate of the client role, trusted for the RPC ports, gets the rule instead.
     */
    @Test
    void withMutualTlsOnlyTheAdminNamesCertificatesOrTheAdminTokenOpenTheEndpoints(@TempDir Path dir)
            throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TestCertificates.Party ops = certs.issue("ops");
        TestCertificates.Party app = certs.issue("app-1");
        Credentials names = Credentials.NONE.withCertificateNames(Role.CLIENT, List.of("app-*"))
                .withCertificateNames(Role.ADMIN, List.of("ops"));
        TransportSettings mtls = TransportSettings.defaults().withCredentials(names)
                .withTls(certs.server.settings().withClientAuth(TlsSettings.ClientAuth.REQUIRE));
        try (AdminHttpServer admin = new AdminHttpServer("0.0.0.0", 0, mtls, () -> "m 4", () -> "{}");
             HttpClient asOps = HttpClient.newBuilder().sslContext(presenting(ops, certs)).build();
             HttpClient asApp = HttpClient.newBuilder().sslContext(presenting(app, certs)).build()) {
            String url = "https://127.0.0.1:" + admin.address().getPort() + "/metrics";
            HttpResponse<String> ok = get(asOps, url, null);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("m 4");
            HttpResponse<String> refused = get(asApp, url, null);
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(refused.body()).contains("transport.tls.admin-names");
        }
        TransportSettings alsoToken = mtls.withCredentials(names.withToken(Role.ADMIN, "admin-secret"));
        try (AdminHttpServer admin = new AdminHttpServer("0.0.0.0", 0, alsoToken, () -> "m 5", () -> "{}");
             HttpClient asOps = HttpClient.newBuilder().sslContext(presenting(ops, certs)).build();
             HttpClient asApp = HttpClient.newBuilder().sslContext(presenting(app, certs)).build()) {
            String url = "https://127.0.0.1:" + admin.address().getPort() + "/health";
            assertThat(get(asOps, url, null).statusCode()).isEqualTo(200);
            assertThat(get(asApp, url, null).statusCode()).isEqualTo(401);
            assertThat(get(asApp, url, "Bearer admin-secret").statusCode()).isEqualTo(200);
        }
    }

    /** A plaintext request to the HTTPS server is told why, as the RPC ports tell a plaintext client. */
    @Test
    void aPlaintextRequestToHttpsIsToldWhy(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TransportSettings tls = TransportSettings.defaults().withTls(certs.server.settings());
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, tls, () -> "m 1", () -> "{}");
             HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics", null);
            assertThat(r.statusCode()).isEqualTo(400);
            assertThat(r.body()).contains("accepts TLS connections only");
        }
    }

    /** Over transport.max-connections a request gets 503 naming the key; oversized headers get 431. */
    @Test
    void overTheConnectionCapARequestIsToldSoAndOversizedHeadersAreRefused() throws Exception {
        TransportSettings capped = TransportSettings.defaults()
                .withLimits(io.tiffin.core.transport.ServerLimits.defaults().withConnections(2, 2));
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, capped, () -> "m 1", () -> "{}");
             Socket first = new Socket("127.0.0.1", admin.address().getPort());
             Socket second = new Socket("127.0.0.1", admin.address().getPort());
             HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics", null);
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.body()).contains("transport.max-connections = 2");
        }
        try (AdminHttpServer admin = new AdminHttpServer("127.0.0.1", 0, TransportSettings.defaults(), () -> "m 1",
                () -> "{}"); HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics",
                    "Bearer " + "x".repeat(20_000));
            assertThat(r.statusCode()).isEqualTo(431);
            HttpResponse<String> ok = get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics?a=b",
                    null);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(get(http, "http://127.0.0.1:" + admin.address().getPort() + "/metrics/x", null).statusCode())
                    .isEqualTo(404);
            HttpResponse<String> head = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + admin.address().getPort() + "/health")).method("HEAD", HttpRequest.BodyPublishers.noBody())
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(head.statusCode()).isEqualTo(200);
            assertThat(head.body()).isEmpty();
            assertThat(head.headers().firstValue("Content-Length")).hasValue("2");
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + admin.address().getPort() + "/health")).POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(post.statusCode()).isEqualTo(405);
            assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
        }
    }

    private static SSLContext trusting(TestCertificates certs) throws Exception {
        return context(null, certs.server.ca());
    }

    /** A JDK client context presenting {@code party}'s certificate (an EC key in PKCS#8 PEM) and trusting the CA. */
    private static SSLContext presenting(TestCertificates.Party party, TestCertificates certs) throws Exception {
        String pem = Files.readString(party.key());
        byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
        java.security.cert.Certificate[] chain;
        try (FileInputStream in = new FileInputStream(party.cert().toFile())) {
            chain = CertificateFactory.getInstance("X.509").generateCertificates(in)
                    .toArray(new java.security.cert.Certificate[0]);
        }
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("me", key, new char[0], chain);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        return context(kmf, certs.server.ca());
    }

    private static SSLContext context(KeyManagerFactory kmf, Path ca) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (FileInputStream in = new FileInputStream(ca.toFile())) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }
}
