package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeMetrics;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's own metrics and health ({@link NodeMetrics}, served on {@code node.admin-port}), read from a real node with
 * an SSD tier beside a real master: the data plane's writes, reads and a refused read, the tier's objects and offloads
 * as the node wrote them, and the link to the master going bad when the master stops.
 */
class NodeMetricsClusterTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private final PluginRegistry plugins = PluginRegistry.classPathOnly();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        plugins.close();
    }

    private static double value(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(
                l.substring(name.length() + 1).strip())).findFirst().orElseThrow(() -> new AssertionError(name
                + " is not exported:\n" + scrape));
    }

    @Test
    void theDataPlaneTheSsdTiersWorkAndTheLinkToTheMasterAreExported() throws Exception {
        MasterServer master = MasterServer.start(Tiffin.injector(TiffinConfig.builder().set("master.port", "0")
                .set("master.admin-port", "0").set("offload.mode", "write-through").build())
                .getInstance(MasterServer.Options.class));
        open.add(master);
        String address = "127.0.0.1:" + master.address().getPort();
        NodeServer node = NodeServer.start(NodeOptions.builder(address).nodeId("metrics-node").segmentSize(32 * MiB)
                .pingInterval(Duration.ofMillis(100)).build().withStorage(new NodeOptions.Storage(
                        plugins.storageBackend("bucket"), new PluginContext(Map.of("path", dir.toString()), "n")),
                Duration.ofMillis(20)));
        open.add(node);
        NodeMetrics metrics = new NodeMetrics(node);
        assertThat(metrics.healthJson()).contains("\"status\":\"ok\"").contains("\"node\":\"metrics-node\"")
                .contains("\"master\":\"" + address + "\"");

        TiffinClient client = TiffinClient.connect(TestCluster.remoteOptions(address).build());
        open.add(client);
        for (int i = 0; i < 3; i++) {
            client.put("k" + i, new byte[100_000 + i]);
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> value(metrics.scrape(), "tiffin_node_ssd_objects") == 3);
        String text = metrics.scrape();
        assertThat(value(text, "tiffin_node_ssd_offloads_total")).isEqualTo(3);
        assertThat(value(text, "tiffin_node_ssd_used_bytes")).isEqualTo(3 * 100_000 + 3);
        assertThat(value(text, "tiffin_node_ssd_offload_failures_total")).isZero();
        assertThat(value(text, "tiffin_node_ssd_corrupt_reads_total")).isZero();
        assertThat(value(text, "tiffin_node_segment_capacity_bytes")).isEqualTo(32 * MiB);
        assertThat(value(text, "tiffin_node_master_ping_failures")).isZero();
        assertThat(text).doesNotContain("tiffin_node_tls").doesNotContain("tiffin_node_tokens");
        assertThat(value(text, "tiffin_node_data_writes_total")).as("one slice per object").isEqualTo(3);
        assertThat(value(text, "tiffin_node_data_write_bytes_total")).isEqualTo(3 * 100_000 + 3);
        assertThat(client.get("k1")).hasSize(100_001);
        text = metrics.scrape();
        assertThat(value(text, "tiffin_node_data_reads_total")).isGreaterThanOrEqualTo(1);
        assertThat(value(text, "tiffin_node_data_read_bytes_total")).isGreaterThanOrEqualTo(100_001);
        assertThat(value(text, "tiffin_node_data_refused_total")).isZero();

        // a read without the master's grant (a peer that skipped the master): refused, and counted
        try (BlockingConnectionPool peer = new BlockingConnectionPool("no-grant", TransportSettings.defaults(), "p")) {
            assertThatThrownBy(() -> peer.call(node.endpoint(), Opcode.DATA_READ, DataRequest.newBuilder()
                    .setSegment(node.segmentName()).setOffset(0).setLength(4096).build(), Empty.parser()))
                    .isInstanceOf(TiffinException.class);
        }
        assertThat(value(metrics.scrape(), "tiffin_node_data_refused_total")).isEqualTo(1);

        client.close();
        master.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> value(metrics.scrape(), "tiffin_node_master_ping_failures")
                >= 3);
        assertThat(metrics.healthJson()).contains("\"status\":\"degraded\"");
    }
}
