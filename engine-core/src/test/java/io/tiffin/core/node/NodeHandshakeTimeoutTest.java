package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A node's data-plane server closes a peer that sends nothing after {@code transport.handshake-timeout}, as the
 * master's does; {@code client.connect-timeout} bounds only the node's own connections (to its master).
 */
class NodeHandshakeTimeoutTest {

    @Test
    void aSilentPeerOfTheDataPlaneIsClosedAfterTheHandshakeTimeoutNotTheConnectTimeout() throws Exception {
        TiffinConfig masterConfig = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0").build();
        try (MasterServer master = MasterServer.start(Tiffin.injector(masterConfig)
                .getInstance(MasterServer.Options.class))) {
            TiffinConfig nodeConfig = TiffinConfig.builder()
                    .set("master.address", "127.0.0.1:" + master.address().getPort())
                    .set("node.segment-size", "1MiB")
                    .set("transport.handshake-timeout", "1s")
                    .set("client.connect-timeout", "30s")
                    .build();
            NodeOptions options = Tiffin.injector(nodeConfig).getInstance(NodeOptions.class);
            assertThat(options.transport().handshakeTimeout()).isEqualTo(Duration.ofSeconds(1));
            assertThat(options.connectTimeout()).isEqualTo(Duration.ofSeconds(30));

            try (NodeServer node = NodeServer.start(options);
                 Socket silent = new Socket("127.0.0.1", Integer.parseInt(node.endpoint().split(":")[1]))) {
                silent.setSoTimeout(20_000);
                long start = System.nanoTime();
                InputStream in = silent.getInputStream();
                assertThat(in.read()).as("the node closes the connection").isEqualTo(-1);
                Duration waited = Duration.ofNanos(System.nanoTime() - start);
                assertThat(waited).as("closed after transport.handshake-timeout (1s), not client.connect-timeout")
                        .isBetween(Duration.ofMillis(800), Duration.ofSeconds(10));
            }
        }
    }
}
