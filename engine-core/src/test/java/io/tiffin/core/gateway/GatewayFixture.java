package io.tiffin.core.gateway;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
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

    @Override
    public void close() {
        try {
            gateway.close();
        } finally {
            tiffin.close();
        }
    }
}
