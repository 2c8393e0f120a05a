package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeMetrics;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.transport.TlsSettings;
import io.tiffin.core.transport.TransportSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole cluster over mutual TLS: master configured by its keys, nodes and a remote client with TLS
 * settings; puts, gets and batch gets of small and large values through the master RPC and the data plane.
 */
class TlsClusterTest {
    @TempDir
    Path dir;

    @Test
    void putsAndGetsOfEverySizeGoOverMutualTls() {
        TestCertificates certs = TestCertificates.create(dir);
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("transport.tls.enabled", "true").set("transport.tls.cert", certs.server.cert().toString())
                .set("transport.tls.key", certs.server.key().toString())
                .set("transport.tls.ca", certs.server.ca().toString()).set("transport.tls.client-auth", "require")
                .build();
        TlsSettings clientTls = certs.client.settings();
        List<AutoCloseable> open = new ArrayList<>();
        try {
            MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class));
            open.add(master); // closed last
            String address = "127.0.0.1:" + master.address().getPort();
            TransportSettings nodeTransport = TransportSettings.defaults().withTls(certs.server.settings()
                    .withClientAuth(TlsSettings.ClientAuth.REQUIRE));
            List<NodeServer> nodes = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                nodes.add(NodeServer.start(NodeOptions.builder(address).nodeId("tls-node-" + i)
                        .segmentSize(64L << 20).pingInterval(Duration.ofMillis(200)).transport(nodeTransport).build()));
                open.add(nodes.getLast());
            }
            TiffinClient client = TiffinClient.connect(TestCluster.remoteOptions(address)
                    .transport(TransportSettings.defaults().withTls(clientTls)).build());
            open.add(client);
            for (int size : new int[] {100, 4096, 1 << 20, 16 << 20}) {
                byte[] value = TestCluster.randomBytes(size, size);
                client.put("tls-" + size, value, PutOptions.DEFAULT);
                assertThat(client.get("tls-" + size)).isEqualTo(value);
            }
            List<KeyResult<byte[]>> batch = client.batchGet(List.of("tls-100", "tls-4096", "tls-1048576"));
            assertThat(batch).allMatch(KeyResult::isOk);
            assertThat(batch.get(1).value()).isEqualTo(TestCluster.randomBytes(4096, 4096));
            assertThat(master.service().liveNodes()).hasSize(2);
            // the node exports when the certificate its data plane presents expires (node.admin-port's /metrics)
            String metrics = new NodeMetrics(nodes.getFirst()).scrape();
            long notAfter = TlsContexts.load(certs.server.settings()).certificate().getNotAfter().getTime() / 1000;
            assertThat(metrics).contains("tiffin_node_tls_certificate_not_after_seconds " + (double) notAfter)
                    .contains("tiffin_node_tls_reload_failures_total 0.0");
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }
    }
}
