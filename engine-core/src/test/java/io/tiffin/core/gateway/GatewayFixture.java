package io.tiffin.core.gateway;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import static io.tiffin.core.gateway.RespSocket.command;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A real in-process Tiffin (master, node, client: {@link Tiffin#embedded}) with a {@link GatewayServer} in
 * front of it on a free port, for tests that drive the gateway with real Redis clients.
 *
 * <p>Not thread-safe: built and closed by one test class.
 */
final class GatewayFixture implements AutoCloseable {
    final Tiffin tiffin;
    final GatewayServer gateway;
    final TiffinConfig config;

    private GatewayFixture(Map<String, String> settings, java.util.function.UnaryOperator<GatewayStore> wrap) {
        LeakCheck.install();
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "512MiB").set("gateway.port", "0");
        settings.forEach(b::set);
        config = b.build();
        tiffin = Tiffin.embedded(config);
        String master = "127.0.0.1:" + tiffin.master().address().getPort();
        GatewayServer g;
        try {
            g = GatewayServer.start(wrap.apply(TiffinGatewayStore.over(tiffin.client(), 1, master)),
                    GatewaySettings.from(config));
        } catch (RuntimeException e) {
            tiffin.close();
            throw e;
        }
        gateway = g;
    }

    /** With the defaults (a 512 MiB segment). */
    static GatewayFixture start() {
        return start(Map.of());
    }

    /** With configuration keys set, e.g. {@code gateway.idle-timeout=1s}. */
    static GatewayFixture start(Map<String, String> settings) {
        return new GatewayFixture(new LinkedHashMap<>(settings), s -> s);
    }

    /** With configuration keys set and the store seen through {@code wrap} (e.g. one that records calls). */
    static GatewayFixture start(Map<String, String> settings, java.util.function.UnaryOperator<GatewayStore> wrap) {
        return new GatewayFixture(new LinkedHashMap<>(settings), wrap);
    }

    /** {@code size} bytes of {@code seed}'s pseudo-random sequence: a value a test can tell apart from others. */
    static byte[] randomValue(int size, long seed) {
        byte[] b = new byte[size];
        new java.util.SplittableRandom(seed).nextBytes(b);
        return b;
    }

    int port() {
        return gateway.address().getPort();
    }

    /**
     * Sends GET {@code key} on {@code s} (every earlier reply read) until the gateway lends its reply
     * ({@link LentValue}), which is then left unread: a GET the usual path answered (the location not at hand yet,
     * or the connection not seen idle yet) is read, checked and sent again, {@code lendWait} after it was sent
     * (shorter than the location's reuse, so that the next GET finds it at hand).
     */
    void sendLentGet(RespSocket s, String key, byte[] value, Duration lendWait) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            s.send(command("GET", key));
            try {
                await().atMost(lendWait).until(() -> gateway.lentValues() > 0);
                return true;
            } catch (org.awaitility.core.ConditionTimeoutException servedTheUsualWay) {
                assertThat((byte[]) s.read()).isEqualTo(value);
                return false;
            }
        });
    }

    /**
     * Reads up to {@code total} bytes in 64 KiB steps, {@code pauseMillis} apart (0: none), until the gateway
     * closes the connection (a reset ends the stream as well); what arrived.
     */
    static byte[] readPaced(InputStream in, int total, long pauseMillis) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] chunk = new byte[64 * 1024];
        try {
            while (got.size() < total) {
                int n = in.read(chunk, 0, Math.min(chunk.length, total - got.size()));
                if (n < 0) {
                    break;
                }
                got.write(chunk, 0, n);
                if (pauseMillis > 0) {
                    Thread.sleep(pauseMillis);
                }
            }
        } catch (SocketException reset) {
            // closed with bytes unsent
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading", e);
        }
        return got.toByteArray();
    }

    /** Waits (30 s at most) until the gateway holds no lent value and no buffered byte: the last test's replies are gone. */
    void awaitNothingInFlight() {
        await().atMost(java.time.Duration.ofSeconds(30)).until(() -> gateway.lentValues() == 0
                && gateway.bufferedBytes() == 0);
    }

    /**
     * Checks that the gateway is clean once its connections are gone ({@link LeakCheck#assertClean}: no memory
     * counted, no value lent, no buffer leaked), then stops it and the cluster whatever the check found.
     */
    @Override
    public void close() {
        try {
            LeakCheck.assertClean(gateway);
        } finally {
            try {
                gateway.close();
            } finally {
                tiffin.close();
            }
        }
    }
}
