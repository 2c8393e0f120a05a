package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.util.Ticker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * RESP over TLS, as Redis 6 serves it: a gateway started with the {@code transport.tls.*} certificate serves its
 * port inside TLS; Debian's redis-cli ({@code --tls --cacert}) and redis-py ({@code ssl=True}) store and read
 * values through it, small and large (a value arriving in many TLS records), and a plaintext client gets nothing.
 */
class GatewayTlsTest {
    @TempDir
    static Path dir;
    private static TestCertificates certs;
    private static Tiffin tiffin;
    private static GatewayServer gateway;

    @BeforeAll
    static void start() {
        certs = TestCertificates.create(dir);
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "256MiB").set("gateway.port", "0").build();
        tiffin = Tiffin.embedded(config);
        String master = "127.0.0.1:" + tiffin.master().address().getPort();
        gateway = GatewayServer.start(TiffinGatewayStore.over(tiffin.client(), 1, master), GatewaySettings.from(config),
                Ticker.SYSTEM, TlsContexts.load(certs.server.settings()), Duration.ofSeconds(5));
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        if (tiffin != null) {
            tiffin.close();
        }
    }

    private static RedisTools.Result cli(boolean tls, String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of(RedisTools.require(RedisTools.REDIS_CLI, "redis-tools")
                .toString(), "-h", "127.0.0.1", "-p", Integer.toString(gateway.address().getPort())));
        if (tls) {
            cmd.addAll(List.of("--tls", "--cacert", certs.server.ca().toString()));
        }
        cmd.addAll(List.of(args));
        return RedisTools.run(cmd, null, 60);
    }

    @Test
    void redisCliStoresAndReadsOverTls() {
        assertThat(cli(true, "SET", "cli-key", "hello over tls").out().strip()).isEqualTo("OK");
        assertThat(cli(true, "GET", "cli-key").out().strip()).isEqualTo("hello over tls");
        assertThat(cli(true, "PING").out().strip()).isEqualTo("PONG");
    }

    @Test
    void aPlaintextClientGetsNoAnswer() {
        RedisTools.Result r = cli(false, "PING");
        assertThat(r.out() + r.err()).doesNotContain("PONG");
        assertThat(cli(true, "PING").out().strip()).as("the gateway serves on").isEqualTo("PONG");
    }

    @Test
    void redisPyWithSslStoresAndReadsSmallAndLargeValues() {
        RedisTools.require(RedisTools.PYTHON, "python3");
        String script = String.join("\n",
                "import os, sys, redis",
                "r = redis.Redis(host='127.0.0.1', port=int(sys.argv[1]), ssl=True, ssl_ca_certs=sys.argv[2])",
                "small, large = os.urandom(100), os.urandom(3 * 1024 * 1024 + 5)",
                "assert r.set('py-small', small) and r.set('py-large', large)",
                "assert r.get('py-small') == small, 'small value differs'",
                "assert r.get('py-large') == large, 'large value differs'",
                "assert r.mget(['py-small', 'py-large']) == [small, large]",
                "print('ok')");
        RedisTools.Result r = RedisTools.run(List.of(RedisTools.PYTHON.toString(), "-c", script,
                Integer.toString(gateway.address().getPort()), certs.server.ca().toString()), null, 120);
        assertThat(r.out().strip()).as(r.err()).isEqualTo("ok");
    }

    @Test
    void tlsWithoutACertificateIsRefusedNamingTheKeys() {
        TiffinConfig config = TiffinConfig.builder().set("gateway.port", "0").build();
        String master = "127.0.0.1:" + tiffin.master().address().getPort();
        TiffinException e = catchThrowableOfType(TiffinException.class, () -> GatewayServer.start(
                TiffinGatewayStore.over(tiffin.client(), 1, master), GatewaySettings.from(config), Ticker.SYSTEM,
                TlsContexts.load(certs.server.trustOnly()), Duration.ofSeconds(5)));
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(e.getMessage()).contains("transport.tls.cert and transport.tls.key");
    }
}
