package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
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
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.PutOptionsMsg;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A cluster whose master and nodes accept one token per role (transport.client-token, node-token,
 * admin-token): what clients, nodes and administrators may do, and the error each refusal shows.
 */
class RolesClusterTest {
    private static final Credentials SERVERS = Credentials.NONE.withToken(Role.CLIENT, "client-secret")
            .withToken(Role.NODE, "node-secret").withToken(Role.ADMIN, "admin-secret");
    private static final List<AutoCloseable> open = new ArrayList<>();
    private static MasterServer master;
    private static String address;
    private static List<NodeServer> nodes = new ArrayList<>();
    private static TiffinClient client;
    private static TiffinClient admin;

    @BeforeAll
    static void start() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("transport.client-token", "client-secret").set("transport.node-token", "node-secret")
                .set("transport.admin-token", "admin-secret").build();
        master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class));
        open.add(master);
        address = "127.0.0.1:" + master.address().getPort();
        for (int i = 0; i < 2; i++) {
            // a node presents the node role's token by itself
            NodeServer node = NodeServer.start(NodeOptions.builder(address).nodeId("role-node-" + i)
                    .segmentSize(32L << 20).pingInterval(Duration.ofMillis(200))
                    .transport(TransportSettings.defaults().withCredentials(SERVERS)).build());
            nodes.add(node);
            open.add(node);
        }
        // each process knows its own token only
        client = TiffinClient.connect(TestCluster.remoteOptions(address).transport(TransportSettings.defaults()
                .withCredentials(Credentials.NONE.withToken(Role.CLIENT, "client-secret"))).build());
        open.add(client);
        admin = TiffinClient.connect(TestCluster.remoteOptions(address).transport(TransportSettings.defaults()
                .withCredentials(Credentials.NONE.withToken(Role.ADMIN, "admin-secret").presentingAs(Role.ADMIN)))
                .build());
        open.add(admin);
        await().atMost(Duration.ofSeconds(10)).until(() -> master.service().liveNodes().size() == 2);
    }

    @AfterAll
    static void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** Raw calls to the master presenting {@code token}, with HELLO peer id {@code peerId}. */
    private static BlockingConnectionPool peer(String token, String peerId) {
        BlockingConnectionPool pool = new BlockingConnectionPool("roles", TransportSettings.defaults()
                .withAuthToken(token), peerId);
        open.add(pool);
        return pool;
    }

    private static void assertIllegal(ThrowingCallable call, String... parts) {
        var a = assertThatThrownBy(call).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT));
        for (String p : parts) {
            a.hasMessageContaining(p);
        }
    }

    @Test
    void aClientPutsGetsAndForcesOutNamedKeysButNeitherRemovesAllNorByPattern() {
        byte[] value = TestCluster.randomBytes(50_000, 1);
        client.put("roles-a", value, PutOptions.DEFAULT);
        assertThat(client.get("roles-a")).isEqualTo(value);
        assertIllegal(() -> client.removeAll(false), "refuses REMOVE_ALL", "REMOVE_ALL needs the admin role",
                "connect with transport.admin-token");
        assertIllegal(() -> client.removeByRegex("roles-.*", true), "REMOVE_BY_REGEX with force", "needs the admin role",
                "transport.admin-token");
        assertThat(client.exists("roles-a")).isTrue();
        // a key just read holds a read lease: without force its removal waits for it, with force it is the
        // client's, as replacing it (an upsert) is: the Redis gateway's DEL
        assertThatThrownBy(() -> client.remove("roles-a", false)).isInstanceOfSatisfying(TiffinException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE));
        client.remove("roles-a", true);
        assertThat(client.exists("roles-a")).isFalse();
        client.put("roles-a2", value, PutOptions.DEFAULT);
        client.put("roles-a3", value, PutOptions.DEFAULT);
        assertThat(client.get("roles-a2")).isEqualTo(value);
        assertThat(client.batchRemove(java.util.List.of("roles-a2", "roles-a3"), true)).allMatch(KeyResult::isOk);
        assertThat(client.exists("roles-a2")).isFalse();
    }

    @Test
    void anAdminRemovesEverythingAndForces() {
        client.put("roles-b", new byte[1000], PutOptions.DEFAULT);
        client.put("roles-c", new byte[1000], PutOptions.DEFAULT);
        admin.remove("roles-b", true);
        assertThat(admin.removeAll(true)).isGreaterThanOrEqualTo(1);
        assertThat(client.exists("roles-c")).isFalse();
    }

    @Test
    void aClientCannotMountUnmountOrHeartbeatAsANode() {
        BlockingConnectionPool intruder = peer("client-secret", "intruder");
        NodeServer victim = nodes.get(0);
        assertIllegal(() -> intruder.call(address, Opcode.MOUNT_SEGMENT, MountSegmentRequest.newBuilder()
                .setSegment(Segment.newBuilder().setName("fake").setNodeId(victim.nodeId()).setEndpoint("127.0.0.1:9")
                        .setCapacity(1 << 20)).build(), Empty.parser()),
                "refuses MOUNT_SEGMENT from peer intruder", "(role client)", "needs the node or admin role",
                "connect with transport.node-token");
        assertIllegal(() -> intruder.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId(victim.nodeId())
                .build(), PingReply.parser()), "refuses PING");
        assertIllegal(() -> intruder.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                .setNodeId(victim.nodeId()).setSegmentName(victim.segmentName()).build(), Empty.parser()),
                "refuses UNMOUNT_SEGMENT");
        assertThat(master.service().liveNodes()).hasSize(2);
        assertThat(master.service().segmentViews()).noneMatch(v -> v.name().equals("fake"));
    }

    @Test
    void aNodeCannotRemoveKeysNorUnmountAnotherNodeButAnAdminCan() {
        client.put("roles-d", new byte[1000], PutOptions.DEFAULT);
        NodeServer self = nodes.get(0);
        NodeServer other = nodes.get(1);
        BlockingConnectionPool node = peer("node-secret", self.nodeId());
        assertIllegal(() -> node.call(address, Opcode.REMOVE, KeyRequest.newBuilder().setKey("roles-d").build(),
                Empty.parser()), "refuses REMOVE", "(role node)", "needs the client or admin role");
        assertIllegal(() -> node.call(address, Opcode.GET_REPLICA_LIST, KeyRequest.newBuilder().setKey("roles-d")
                .build(), Empty.parser()), "refuses GET_REPLICA_LIST");
        assertThat(client.exists("roles-d")).isTrue();
        // this connection speaks for the node it named first
        node.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId(self.nodeId()).build(), PingReply.parser());
        assertIllegal(() -> node.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                .setNodeId(other.nodeId()).setSegmentName(other.segmentName()).build(), Empty.parser()),
                "UNMOUNT_SEGMENT for node " + other.nodeId() + " refused: this connection speaks for node "
                        + self.nodeId(), "needs the admin role (transport.admin-token)");
        assertThat(master.service().liveNodes()).contains(other.nodeId());
        // the admin may: the node is told to re-mount at its next heartbeat and comes back
        long remounts = other.remounts();
        peer("admin-secret", "ops").call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                .setNodeId(other.nodeId()).setSegmentName(other.segmentName()).build(), Empty.parser());
        await().atMost(Duration.ofSeconds(10)).until(() -> other.remounts() > remounts
                && master.service().liveNodes().contains(other.nodeId()));
    }

    @Test
    void aPutsWriterIsTheConnectionsPeerIdNotTheClientIdItNames() {
        BlockingConnectionPool writer = peer("client-secret", "writer-a");
        BlockingConnectionPool other = peer("client-secret", "writer-b");
        PutStartReply started = writer.call(address, Opcode.PUT_START, PutStartRequest.newBuilder().setClientId("writer-a")
                .setKey("roles-e").setSize(100).setOptions(PutOptionsMsg.newBuilder().setReplicas(1)).build(),
                PutStartReply.parser());
        assertThat(started.getReplicasCount()).isEqualTo(1);
        assertIllegal(() -> other.call(address, Opcode.PUT_END, KeyRequest.newBuilder().setClientId("writer-a")
                .setKey("roles-e").build(), Empty.parser()), "a put request naming client writer-a came on a"
                + " connection whose HELLO declared peer id writer-b");
        assertIllegal(() -> other.call(address, Opcode.PUT_REVOKE, KeyRequest.newBuilder().setKey("roles-e").build(),
                Empty.parser()), "roles-e: ILLEGAL_CLIENT");
        // the writer's own connection may name itself or no one
        writer.call(address, Opcode.PUT_REVOKE, KeyRequest.newBuilder().setKey("roles-e").build(), Empty.parser());
        assertThat(client.exists("roles-e")).isFalse();
    }

    /** Raw calls presenting {@code token} as peer {@code peerId} from another process (another peer key). */
    private static BlockingConnectionPool otherProcess(String token, String peerId) {
        BlockingConnectionPool pool = new BlockingConnectionPool("roles", TransportSettings.defaults()
                .withAuthToken(token), peerId, io.tiffin.core.util.Ticker.SYSTEM,
                io.tiffin.core.transport.PeerKeys.random());
        open.add(pool);
        return pool;
    }

    @Test
    void anotherProcessWithTheNodeTokenCannotActForAMountedNode() {
        NodeServer victim = nodes.get(0);
        String id = victim.nodeId();
        BlockingConnectionPool impostor = otherProcess("node-secret", id);
        String refused = " for node " + id + " refused: node " + id + " is mounted by another process (peer key ";
        assertIllegal(() -> impostor.call(address, Opcode.PING, PingRequest.newBuilder().setNodeId(id).build(),
                PingReply.parser()), "PING" + refused, "A node id belongs to the process that mounted it until that"
                + " process has been silent for 1000 ms or an admin unmounts it (transport.admin-token)");
        assertIllegal(() -> impostor.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                .setNodeId(id).setSegmentName(victim.segmentName()).build(), Empty.parser()), "UNMOUNT_SEGMENT" + refused);
        assertThatThrownBy(() -> impostor.call(address, Opcode.MOUNT_SEGMENT, MountSegmentRequest.newBuilder()
                .setSegment(Segment.newBuilder().setName("fake").setNodeId(id).setEndpoint("127.0.0.1:9")
                        .setCapacity(1 << 20).setIncarnation(99).setPingIntervalMs(0)).build(), Empty.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code())
                        .as("the code a restarting node retries on").isEqualTo(ErrorCode.SEGMENT_ALREADY_EXISTS))
                .hasMessageContaining("MOUNT_SEGMENT" + refused);
        assertThat(master.service().liveNodes()).contains(id);
        assertThat(master.service().segmentViews()).noneMatch(v -> v.name().equals("fake"));
        byte[] value = TestCluster.randomBytes(10_000, 3);
        client.put("roles-f", value, PutOptions.replicas(2));
        assertThat(client.get("roles-f")).as("both nodes still serve").isEqualTo(value);
    }

    @Test
    void anotherProcessCannotEndOrRevokeAPutUnderTheWritersPeerId() {
        BlockingConnectionPool writer = peer("client-secret", "writer-c");
        BlockingConnectionPool impostor = otherProcess("client-secret", "writer-c");
        writer.call(address, Opcode.PUT_START, PutStartRequest.newBuilder().setKey("roles-g").setSize(100)
                .setOptions(PutOptionsMsg.newBuilder().setReplicas(1)).build(), PutStartReply.parser());
        String held = "peer id writer-c is held by another process's connections (they presented another peer key in"
                + " HELLO; this one's is ";
        assertIllegal(() -> impostor.call(address, Opcode.PUT_END, KeyRequest.newBuilder().setKey("roles-g").build(),
                Empty.parser()), held, "give every client its own peer id");
        assertIllegal(() -> impostor.call(address, Opcode.PUT_REVOKE, KeyRequest.newBuilder().setClientId("writer-c")
                .setKey("roles-g").build(), Empty.parser()), held);
        assertThat(client.exists("roles-g")).as("still being written by its writer").isFalse();
        writer.call(address, Opcode.PUT_REVOKE, KeyRequest.newBuilder().setKey("roles-g").build(), Empty.parser());
    }

    /** A node process that crashed: once it has been silent for its lease, its restart (another process) mounts. */
    @Test
    void anotherProcessMountsANodesIdOnceItsOwnerIsSilent() {
        NodeServer crashed = NodeServer.start(NodeOptions.builder(address).nodeId("role-node-crashed")
                .segmentSize(8L << 20).pingInterval(Duration.ofMillis(200))
                .transport(TransportSettings.defaults().withCredentials(SERVERS)).build());
        open.add(crashed);
        await().atMost(Duration.ofSeconds(10)).until(() -> master.service().liveNodes().contains("role-node-crashed"));
        crashed.stopHeartbeats();
        BlockingConnectionPool restarted = otherProcess("node-secret", "role-node-crashed");
        MountSegmentRequest mount = MountSegmentRequest.newBuilder().setSegment(Segment.newBuilder()
                .setName("role-node-crashed-seg1").setNodeId("role-node-crashed").setEndpoint("127.0.0.1:9")
                .setCapacity(1 << 20).setIncarnation(77).setPingIntervalMs(200)).build();
        await("the silent owner's lease ends").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .ignoreException(TiffinException.class)
                .until(() -> restarted.call(address, Opcode.MOUNT_SEGMENT, mount, Empty.parser()) != null);
        assertThat(master.service().segmentViews()).anyMatch(v -> v.name().equals("role-node-crashed-seg1"));
        // the id is the new process's now: the old one (same key as this test's process) is refused
        assertIllegal(() -> peer("node-secret", "role-node-crashed").call(address, Opcode.UNMOUNT_SEGMENT,
                UnmountSegmentRequest.newBuilder().setNodeId("role-node-crashed")
                        .setSegmentName("role-node-crashed-seg1").build(), Empty.parser()),
                "UNMOUNT_SEGMENT for node role-node-crashed refused: node role-node-crashed is mounted by another process");
        restarted.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder().setNodeId("role-node-crashed")
                .setSegmentName("role-node-crashed-seg1").build(), Empty.parser());
    }

    /**
     * A node process that crashed after its mount and before its first heartbeat (never heard from by ping): its
     * restart mounts once the lease has passed since the mount, rather than being refused for ever.
     */
    @Test
    void aNodeThatCrashedBeforeItsFirstPingIsReplacedOnceSilent() {
        MountSegmentRequest first = MountSegmentRequest.newBuilder().setSegment(Segment.newBuilder()
                .setName("role-node-early-seg0").setNodeId("role-node-early").setEndpoint("127.0.0.1:9")
                .setCapacity(1 << 20).setIncarnation(5).setPingIntervalMs(200)).build();
        otherProcess("node-secret", "role-node-early").call(address, Opcode.MOUNT_SEGMENT, first, Empty.parser());
        BlockingConnectionPool restarted = otherProcess("node-secret", "role-node-early");
        MountSegmentRequest again = MountSegmentRequest.newBuilder().setSegment(Segment.newBuilder()
                .setName("role-node-early-seg1").setNodeId("role-node-early").setEndpoint("127.0.0.1:9")
                .setCapacity(1 << 20).setIncarnation(6).setPingIntervalMs(200)).build();
        assertThatThrownBy(() -> restarted.call(address, Opcode.MOUNT_SEGMENT, again, Empty.parser()))
                .as("right after the first process's mount, the id is still its own")
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_ALREADY_EXISTS));
        // well before master.node-ttl (10 s) would drop the silent node's segment: the lease (1 s) counts from the mount
        await("the silent owner's lease ends").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                .ignoreException(TiffinException.class)
                .until(() -> restarted.call(address, Opcode.MOUNT_SEGMENT, again, Empty.parser()) != null);
        assertThat(master.service().segmentViews()).anyMatch(v -> v.name().equals("role-node-early-seg1"));
        // their endpoint is no server: left mounted, they would take other tests' puts until master.node-ttl
        for (String seg : List.of("role-node-early-seg0", "role-node-early-seg1")) {
            if (master.service().segmentViews().stream().anyMatch(v -> v.name().equals(seg))) {
                restarted.call(address, Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                        .setNodeId("role-node-early").setSegmentName(seg).build(), Empty.parser());
            }
        }
        assertThat(master.service().segmentViews()).noneMatch(v -> v.name().startsWith("role-node-early"));
    }
}
