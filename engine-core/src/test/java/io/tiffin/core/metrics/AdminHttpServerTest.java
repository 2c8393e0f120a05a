package io.tiffin.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Credentials;
import io.tiffin.core.transport.Role;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsProbe;
import io.tiffin.core.transport.TransportSettings;
import java.io.FileInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Who may use the admin endpoints ({@link AdminAccess}), over HTTP and HTTPS. */
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
}
