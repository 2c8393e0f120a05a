package io.tiffin.core.cluster;

import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A master and several nodes as separate servers on loopback, each with its own ports, connections and
 * threads, plus clients that reach nodes over the network only (no same-JVM memory copy), so the test
 * exercises the real data plane.
 *
 * <p>Not thread-safe: built and closed by one test.
 */
final class TestCluster implements AutoCloseable {
    final MasterServer master;
    final List<NodeServer> nodes = new ArrayList<>();
    final List<TiffinClient> clients = new ArrayList<>();
    private final TiffinConfig config;

    TestCluster(Map<String, String> settings, int nodeCount, long segmentSize) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0");
        settings.forEach(b::set);
        config = b.build();
        master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class));
        for (int i = 0; i < nodeCount; i++) {
            addNode("node-" + i, segmentSize);
        }
    }

    /** {@code size} bytes from a seeded generator: the same seed gives the same bytes. */
    static byte[] randomBytes(int size, long seed) {
        byte[] b = new byte[size];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    String masterAddress() {
        return "127.0.0.1:" + master.address().getPort();
    }

    NodeServer addNode(String id, long segmentSize) {
        return addNode(id, segmentSize, null);
    }

    /** A node whose segment is a shared-memory file in {@code sharedDir} (null: anonymous memory). */
    NodeServer addNode(String id, long segmentSize, java.nio.file.Path sharedDir) {
        NodeServer n = NodeServer.start(NodeOptions.builder(masterAddress()).nodeId(id).segmentSize(segmentSize)
                .pingInterval(Duration.ofMillis(200)).sharedMemoryDir(sharedDir).build());
        nodes.add(n);
        return n;
    }

    /** A port free now, below the ephemeral range (a restarted master binds it again). */
    static int freeFixedPort() throws IOException {
        java.util.SplittableRandom random = new java.util.SplittableRandom();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = 10_000 + random.nextInt(20_000);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException e) {
                // taken: try another
            }
        }
        throw new IOException("no free port found in 10000..29999");
    }

    /**
     * Options of a client that reads and writes every replica over the network: no same-JVM or same-host
     * shortcut, no location cache (read hints and the rest as by default).
     */
    static TiffinClient.Options.Builder remoteOptions(String masterAddress) {
        return TiffinClient.Options.builder(masterAddress).localMemcpy(false).sharedMemory(false)
                .locationCache(io.tiffin.core.client.LocationCache.Settings.DISABLED);
    }

    /** A client that maps same-host shared-memory segments and uses the network for everything else. */
    TiffinClient sharedMemoryClient() {
        TiffinClient c = TiffinClient.connect(remoteOptions(masterAddress()).sharedMemory(true).build());
        clients.add(c);
        return c;
    }

    /** A remote client (as {@link #remoteClient()}) that reuses lookups for up to {@code ttl}. */
    TiffinClient locationCachingClient(Duration ttl) {
        TiffinClient c = TiffinClient.connect(remoteOptions(masterAddress())
                .locationCache(new io.tiffin.core.client.LocationCache.Settings(ttl, 10_000)).build());
        clients.add(c);
        return c;
    }

    /** A client that reads and writes every replica over the network. */
    TiffinClient remoteClient() {
        TiffinClient c = TiffinClient.connect(remoteOptions(masterAddress()).build());
        clients.add(c);
        return c;
    }

    @Override
    public void close() {
        clients.forEach(TiffinClient::close);
        nodes.forEach(NodeServer::close);
        master.close();
    }
}
