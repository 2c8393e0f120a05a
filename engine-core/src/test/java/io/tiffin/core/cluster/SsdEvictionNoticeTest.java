package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SSD eviction while the node cannot reach the master: the bucket backend evicts under its write lock, so
 * the node must not talk to the master from its listener, and the master must still hear of every evicted
 * copy once it is reachable again (before, a hung master stalled every SSD write for the RPC timeout and
 * an unreachable one never heard: it kept listing copies whose files were gone).
 *
 * <p>The node reaches the master through a {@link Link} the test can cut; the client talks to the master
 * directly. Evictions are forced by writing straight into the node's backend.
 */
class SsdEvictionNoticeTest {
    private static final long MiB = 1L << 20;
    private static final int VALUE = 100_000;
    private static final List<String> VICTIMS = List.of("victim-0", "victim-1", "victim-2", "victim-3");

    @TempDir
    Path dir;

    private final PluginRegistry plugins = PluginRegistry.classPathOnly();
    private final List<AutoCloseable> open = new ArrayList<>();
    private MasterServer master;
    private Link link;
    private NodeServer node;
    private TiffinClient client;

    @BeforeEach
    void setUp() throws Exception {
        // A long node TTL: the outages below must not make the master drop the node (and its SSD copies).
        master = MasterServer.start(Tiffin.injector(TiffinConfig.builder().set("master.port", "0")
                .set("master.admin-port", "0").set("offload.mode", "write-through").set("master.node-ttl", "60s")
                .build()).getInstance(MasterServer.Options.class));
        open.add(master);
        link = new Link(master.address().getPort());
        open.add(link);
        node = NodeServer.start(NodeOptions.builder(link.address()).nodeId("notice-node").segmentSize(16 * MiB)
                .pingInterval(Duration.ofMillis(200)).transport(TransportSettings.defaults().withRpcTimeout(Duration.ofSeconds(10))).build()
                .withStorage(new NodeOptions.Storage(plugins.storageBackend("bucket"), new PluginContext(
                        Map.of("path", dir.resolve("ssd").toString(), "capacity", "1MiB"), "notice-node")),
                        Duration.ofMillis(20)));
        open.add(node);
        client = TiffinClient.connect(TestCluster.remoteOptions("127.0.0.1:" + master.address().getPort()).build());
        open.add(client);
        for (int i = 0; i < VICTIMS.size(); i++) {
            client.put(VICTIMS.get(i), ClusterEndToEndTest.bytes(i, VALUE));
        }
        for (String key : VICTIMS) {
            await("the SSD copy of " + key).atMost(SsdTierClusterTest.SSD_WAIT)
                    .pollInterval(SsdTierClusterTest.POLL).until(() -> listsSsdCopy(key));
        }
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        plugins.close();
    }

    private boolean listsSsdCopy(String key) {
        ObjectLocation loc = client.locate(key).orElseThrow();
        return loc.replicas().stream().anyMatch(r -> r.type() == ReplicaType.LOCAL_DISK);
    }

    /** Writes 900 KB straight into the node's 1 MiB SSD tier: the backend evicts every victim first. */
    private long evictTheVictims() {
        long start = System.nanoTime();
        node.storageBackend().writeBatch(Map.of("filler", MemorySegment.ofArray(new byte[900_000])));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        for (String key : VICTIMS) {
            assertThat(node.storageBackend().size(key)).as("%s evicted from the SSD", key).isEmpty();
        }
        return tookMillis;
    }

    private void assertTheMasterForgetsTheEvictedCopies() {
        for (String key : VICTIMS) {
            await("the master to drop the evicted SSD copy of " + key).atMost(SsdTierClusterTest.SSD_WAIT)
                    .pollInterval(SsdTierClusterTest.POLL).until(() -> !listsSsdCopy(key));
        }
        for (int i = 0; i < VICTIMS.size(); i++) {
            assertThat(client.get(VICTIMS.get(i))).as("%s from memory", VICTIMS.get(i))
                    .isEqualTo(ClusterEndToEndTest.bytes(i, VALUE));
        }
    }

    @Test
    void anEvictionDoesNotWaitForAMasterThatDoesNotAnswer() throws Exception {
        link.hang();

        long tookMillis = evictTheVictims();

        assertThat(tookMillis).as("ms the evicting write took (the node's RPC timeout is 10 s)").isLessThan(2_000);
        link.heal();
        assertTheMasterForgetsTheEvictedCopies();
    }

    @Test
    void anEvictionTheMasterCouldNotHearOfIsToldOnceItIsReachableAgain() throws Exception {
        link.refuse();
        evictTheVictims();
        // Awaitility's during(): for a second, while the node's notice attempts fail, every copy stays listed.
        await("the evicted copies still listed while the master cannot hear").during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
                    for (String key : VICTIMS) {
                        assertThat(listsSsdCopy(key)).as("%s still listed: the master has not heard yet", key).isTrue();
                    }
                });

        link.heal();

        assertTheMasterForgetsTheEvictedCopies();
    }

    /**
     * A TCP relay from a local port to the master that can refuse connections (a dead master) or keep them
     * open and deliver nothing (a hung one). Thread-safe; owns its sockets and threads, released by close.
     */
    private static final class Link implements AutoCloseable {
        private enum Mode { RELAY, REFUSE, HANG }

        private final int targetPort;
        private final ServerSocket server;
        private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
        private volatile Mode mode = Mode.RELAY;

        Link(int targetPort) throws IOException {
            this.targetPort = targetPort;
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofPlatform().daemon().name("test-link-accept").start(this::accept);
        }

        String address() {
            return "127.0.0.1:" + server.getLocalPort();
        }

        /** New connections are closed at once and the open ones dropped. */
        void refuse() {
            mode = Mode.REFUSE;
            dropConnections();
        }

        /** Connections stay open (new ones are accepted) but no byte gets through either way. */
        void hang() {
            mode = Mode.HANG;
        }

        /** The outage ends: the connections it broke are dropped, new ones are relayed. */
        void heal() {
            mode = Mode.REFUSE;
            dropConnections();
            mode = Mode.RELAY;
        }

        private void accept() {
            while (!server.isClosed()) {
                Socket in;
                try {
                    in = server.accept();
                } catch (IOException e) {
                    return;
                }
                Mode m = mode;
                if (m == Mode.REFUSE) {
                    closeQuietly(in);
                    continue;
                }
                sockets.add(in);
                if (m == Mode.HANG) {
                    Thread.ofVirtual().start(() -> pump(in, null));
                    continue;
                }
                Socket out;
                try {
                    out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                } catch (IOException e) {
                    closeQuietly(in);
                    continue;
                }
                sockets.add(out);
                Thread.ofVirtual().start(() -> pump(in, out));
                Thread.ofVirtual().start(() -> pump(out, in));
            }
        }

        /** Copies {@code from} to {@code to} (null: nowhere) while relaying; closes both at the end. */
        private void pump(Socket from, Socket to) {
            byte[] buffer = new byte[64 << 10];
            try {
                InputStream is = from.getInputStream();
                OutputStream os = to == null ? null : to.getOutputStream();
                int n;
                while ((n = is.read(buffer)) >= 0) {
                    if (os != null && mode == Mode.RELAY) {
                        os.write(buffer, 0, n);
                    }
                }
            } catch (IOException e) {
                // The other side or the test closed the connection.
            } finally {
                closeQuietly(from);
                if (to != null) {
                    closeQuietly(to);
                }
            }
        }

        private void dropConnections() {
            for (Socket s : List.copyOf(sockets)) {
                closeQuietly(s);
            }
        }

        private void closeQuietly(Socket s) {
            sockets.remove(s);
            try {
                s.close();
            } catch (IOException e) {
                // Nothing to do: it is gone either way.
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            dropConnections();
        }
    }
}
