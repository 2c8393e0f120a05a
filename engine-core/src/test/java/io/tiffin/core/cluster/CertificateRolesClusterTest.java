package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Credentials;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Role;
import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsSettings;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Roles from mutual-TLS identities: client certificates whose common name is listed in
 * transport.tls.client-names, node-names or admin-names hold those roles, with no token at all; a node's
 * certificate names the one node id it may act for.
 */
class CertificateRolesClusterTest {
    @TempDir
    Path dir;
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    @Test
    void certificatesNameTheRolesAndTheNodeIdsOfTheirHolders() {
        TestCertificates certs = TestCertificates.create(dir);
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("transport.tls.enabled", "true").set("transport.tls.cert", certs.server.cert().toString())
                .set("transport.tls.key", certs.server.key().toString())
                .set("transport.tls.ca", certs.server.ca().toString()).set("transport.tls.client-auth", "require")
                .set("transport.tls.client-names", "app-*").set("transport.tls.node-names", "node-*")
                .set("transport.tls.admin-names", "ops").build();
        MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class));
        open.add(master);
        String address = "127.0.0.1:" + master.address().getPort();
        Credentials names = Credentials.NONE.withCertificateNames(Role.CLIENT, List.of("app-*"))
                .withCertificateNames(Role.NODE, List.of("node-*")).withCertificateNames(Role.ADMIN, List.of("ops"));
        List<NodeServer> nodes = new ArrayList<>();
        for (String id : List.of("node-a", "node-b")) {
            NodeServer node = NodeServer.start(NodeOptions.builder(address).nodeId(id).segmentSize(32L << 20)
                    .pingInterval(Duration.ofMillis(200)).transport(TransportSettings.defaults().withCredentials(names)
                            .withTls(certs.issue(id).settings().withClientAuth(TlsSettings.ClientAuth.REQUIRE)))
                    .build());
            open.add(node);
            nodes.add(node);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> master.service().liveNodes().size() == 2);

        TiffinClient app = TiffinClient.connect(TestCluster.remoteOptions(address)
                .transport(TransportSettings.defaults().withTls(certs.issue("app-1").settings())).build());
        open.add(app);
        byte[] value = TestCluster.randomBytes(300_000, 3);
        app.put("cert-a", value, PutOptions.DEFAULT);
        assertThat(app.get("cert-a")).isEqualTo(value);
        assertThatThrownBy(() -> app.removeAll(true)).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.ILLEGAL_CLIENT)).hasMessageContaining("(role client)")
                .hasMessageContaining("REMOVE_ALL needs the admin role");

        // a node's certificate lets it act for the node it names, not another
        BlockingConnectionPool nodeA = new BlockingConnectionPool("cert-roles", TransportSettings.defaults()
                .withTls(certs.issue("node-a").settings()), "node-a");
        open.add(nodeA);
        nodeA.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId("node-a").build(), PingReply.parser());
        NodeServer b = nodes.get(1);
        assertThatThrownBy(() -> nodeA.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                .setNodeId("node-b").setSegmentName(b.segmentName()).build(), Empty.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                .hasMessageContaining("UNMOUNT_SEGMENT for node node-b refused: this connection speaks for node node-a"
                        + " (its client certificate's common name)");
        assertThat(master.service().liveNodes()).contains("node-b");

        // a certificate of the CA that names no role proves nothing
        BlockingConnectionPool stranger = new BlockingConnectionPool("cert-roles", TransportSettings.defaults()
                .withTls(certs.issue("visitor").settings()), "visitor");
        open.add(stranger);
        assertThatThrownBy(() -> stranger.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId("node-a")
                .build(), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                .hasMessageContaining("client certificate's common name visitor is in none of transport.tls.client-names");

        TiffinClient ops = TiffinClient.connect(TestCluster.remoteOptions(address)
                .transport(TransportSettings.defaults().withTls(certs.issue("ops").settings())).build());
        open.add(ops);
        assertThat(ops.removeAll(true)).isEqualTo(1);
    }

    @Test
    void certificateNamesWithoutMutualTlsAreAConfigurationError() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("transport.tls.node-names", "node-*").build();
        assertThatThrownBy(() -> MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class)))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("which only mutual TLS asks for");
        assertThatThrownBy(() -> TiffinConfig.builder().set("transport.tls.admin-names", "ops,*x").build()
                .get(io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_TLS_ADMIN_NAMES))
                .hasMessageContaining("transport.tls.admin-names");
    }
}
