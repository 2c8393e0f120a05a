package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.CommitRecord;
import io.tiffin.core.transport.proto.DataGrant;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.Replica;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Master-signed data-plane access on real servers: a node serves DATA_READ / DATA_WRITE only with a grant the
 * master signed into a descriptor, and refuses (with a message naming why) a missing grant, an altered or forged
 * one, an expired one, one of another operation, a request outside its range, and a grant of another node.
 */
class DataAccessClusterTest {
    private static final long MiB = 1L << 20;

    @Test
    void aLookupsGrantReadsItsReplicaAndNothingElse() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "t");
             Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient c = cluster.remoteClient();
            c.put("before", TestCluster.randomBytes(4096, 1));
            byte[] v = TestCluster.randomBytes(4096, 2);
            c.put("k", v);
            ReplicaDescriptor d = c.locate("k").orElseThrow().replicas().getFirst();
            assertThat(d.grant()).isNotNull();
            assertThat(d.grant().allows(io.tiffin.api.DataGrant.WRITE)).as("a lookup grants reads only").isFalse();
            DataGrant grant = Messages.grantOf(d);
            MemorySegment dst = arena.allocate(4096);
            DataRequest read = request(d, d.offset(), 4096).setGrant(grant).build();
            pool.call(node.endpoint(), Opcode.DATA_READ, read, null, Empty.parser(), dst);
            assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(v);

            assertRefused(pool, node, Opcode.DATA_READ, request(d, d.offset(), 4096).build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "DATA_READ of segment " + d.segment() + " refused: it carries no access grant");
            // another object's bytes: a client moves the grant's range onto them
            long earlier = c.locate("before").orElseThrow().replicas().getFirst().offset();
            assertRefused(pool, node, Opcode.DATA_READ, request(d, earlier, 4096)
                            .setGrant(grant.toBuilder().setOffset(earlier)).build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            assertRefused(pool, node, Opcode.DATA_READ, request(d, d.offset(), 8192)
                            .setGrant(grant.toBuilder().setLength(8192)).build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            assertRefused(pool, node, Opcode.DATA_READ, request(d, d.offset(), 4096)
                            .setGrant(grant.toBuilder().setExpiresMs(grant.getExpiresMs() + 3_600_000)).build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            // within the segment, beyond the granted bytes: the grant is genuine, the request is not covered
            assertRefused(pool, node, Opcode.DATA_READ, request(d, d.offset() + 4000, 200).setGrant(grant).build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "bytes [" + (d.offset() + 4000) + ", +200) are out of its grant's range ["
                            + d.offset() + ", +4096)");

            MemorySegment evil = arena.allocate(4096).fill((byte) 7);
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, d.offset(), 4096).setGrant(grant).build(), evil,
                    ErrorCode.ILLEGAL_CLIENT, "its grant allows read, not write");
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, d.offset(), 4096)
                            .setGrant(grant.toBuilder().setOps(3)).build(), evil,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            assertThat(c.get("k")).as("no refused write landed").isEqualTo(v);
            assertThat(c.get("before")).isEqualTo(TestCluster.randomBytes(4096, 1));
        }
    }

    @Test
    void aPutsGrantWritesItsOwnBufferOnly() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "writer");
             Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient c = cluster.remoteClient();
            byte[] other = TestCluster.randomBytes(4096, 3);
            c.put("other", other);
            PutStartReply started = pool.call(cluster.masterAddress(), Opcode.PUT_START, PutStartRequest.newBuilder()
                    .setKey("mine").setSize(4096).setPutId(42).build(), PutStartReply.parser());
            Replica r = started.getReplicas(0);
            ReplicaDescriptor d = Messages.fromMsg(r);
            DataGrant grant = Messages.grantOf(d);
            assertThat(grant.getOps()).as("a writer may write, and read back what it wrote").isEqualTo(3);
            MemorySegment src = arena.allocate(4096).fill((byte) 5);
            pool.call(node.endpoint(), Opcode.DATA_WRITE, request(d, d.offset(), 4096).setGrant(grant).build(), src,
                    Empty.parser(), null);

            ReplicaDescriptor o = c.locate("other").orElseThrow().replicas().getFirst();
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, o.offset(), 4096).setGrant(grant).build(), src,
                    ErrorCode.ILLEGAL_CLIENT, "out of its grant's range");
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, o.offset(), 4096)
                            .setGrant(grant.toBuilder().setOffset(o.offset())).build(), src,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            // a commit record naming another object's bytes would let a taken-over master recover it as this one
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, d.offset(), 0).setGrant(grant)
                            .setCommit(CommitRecord.newBuilder().setKey("mine").setOffset(o.offset()).setSize(4096))
                            .build(), null,
                    ErrorCode.ILLEGAL_CLIENT, "its commit record's object [" + o.offset() + ", +4096) is out of its"
                            + " grant's range");
            assertThat(c.get("other")).isEqualTo(other);
        }
    }

    /**
     * Writes large enough that the node receives their bulk straight into its segment (on a plaintext
     * connection): the checks still come first, so a refused one leaves the object it aimed at as it was.
     */
    @Test
    void aRefusedLargeWriteLeavesTheBytesItAimedAtUntouched() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "writer");
             Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient c = cluster.remoteClient();
            int size = (int) MiB;
            byte[] other = TestCluster.randomBytes(size, 4);
            c.put("other", other);
            PutStartReply started = pool.call(cluster.masterAddress(), Opcode.PUT_START, PutStartRequest.newBuilder()
                    .setKey("mine").setSize(size).setPutId(43).build(), PutStartReply.parser());
            ReplicaDescriptor d = Messages.fromMsg(started.getReplicas(0));
            DataGrant grant = Messages.grantOf(d);
            ReplicaDescriptor o = c.locate("other").orElseThrow().replicas().getFirst();
            MemorySegment evil = arena.allocate(size, 64).fill((byte) 9);
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, o.offset(), size).setGrant(grant).build(), evil,
                    ErrorCode.ILLEGAL_CLIENT, "out of its grant's range");
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, o.offset(), size)
                            .setGrant(grant.toBuilder().setOffset(o.offset())).build(), evil,
                    ErrorCode.ILLEGAL_CLIENT, "its grant's MAC does not match");
            assertRefused(pool, node, Opcode.DATA_WRITE, request(d, o.offset(), size).setMountEpoch(d.mountEpoch() + 1)
                            .setGrant(grant).build(), evil, ErrorCode.REPLICA_IS_GONE, "was re-mounted");
            assertThat(c.get("other")).as("no refused write landed").isEqualTo(other);

            MemorySegment mine = arena.allocate(size, 64).fill((byte) 5);
            pool.call(node.endpoint(), Opcode.DATA_WRITE, request(d, d.offset(), size).setGrant(grant).build(), mine,
                    Empty.parser(), null);
            MemorySegment back = arena.allocate(size, 64);
            pool.call(node.endpoint(), Opcode.DATA_READ, request(d, d.offset(), size).setGrant(grant).build(), null,
                    Empty.parser(), back);
            assertThat(back.mismatch(mine)).as("the granted write landed whole").isEqualTo(-1L);
            assertThat(c.get("other")).isEqualTo(other);
        }
    }

    @Test
    void anExpiredGrantIsRefused() {
        // grants of a lookup last as long as its lease
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "300ms"), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "t");
             Arena arena = Arena.ofShared()) {
            NodeServer node = cluster.nodes.getFirst();
            TiffinClient c = cluster.remoteClient();
            c.put("k", TestCluster.randomBytes(4096, 4));
            ReplicaDescriptor d = c.locate("k").orElseThrow().replicas().getFirst();
            DataRequest read = Messages.withGrant(request(d, d.offset(), 4096), d).build();
            MemorySegment dst = arena.allocate(4096);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                try {
                    pool.call(node.endpoint(), Opcode.DATA_READ, read, null, Empty.parser(), dst);
                    return false;
                } catch (TiffinException e) {
                    assertThat(e.code()).isEqualTo(ErrorCode.REPLICA_IS_GONE);
                    assertThat(e.getMessage()).contains("DATA_READ of segment " + d.segment() + " refused: its grant"
                            + " expired", "look the key up again");
                    return true;
                }
            });
            assertThat(c.get("k")).as("a fresh lookup reads again").isEqualTo(TestCluster.randomBytes(4096, 4));
        }
    }

    @Test
    void aGrantSignedWithAnotherNodesKeyIsRefused() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "t");
             Arena arena = Arena.ofShared()) {
            TiffinClient c = cluster.remoteClient();
            c.put("k", TestCluster.randomBytes(4096, 5));
            ReplicaDescriptor d = c.locate("k").orElseThrow().replicas().getFirst();
            NodeServer other = cluster.nodes.stream().filter(n -> !n.endpoint().equals(d.endpoint())).findFirst()
                    .orElseThrow();
            // the same range, epoch and grant, presented to the other node for its own segment
            DataRequest read = DataRequest.newBuilder().setSegment(other.segmentName()).setOffset(d.offset())
                    .setLength(4096).setMountEpoch(other.mountEpoch()).setGrant(Messages.grantOf(d)).build();
            assertRefused(pool, other, Opcode.DATA_READ, read, null, ErrorCode.ILLEGAL_CLIENT,
                    "DATA_READ of segment " + other.segmentName() + " refused: its grant's MAC does not match: the grant"
                            + " was altered or forged (its range, operations or expiry changed), or signed for another"
                            + " node or another mount of this segment");
        }
    }

    private static DataRequest.Builder request(ReplicaDescriptor d, long offset, long length) {
        return DataRequest.newBuilder().setSegment(d.segment()).setOffset(offset).setLength(length)
                .setMountEpoch(d.mountEpoch());
    }

    private static void assertRefused(BlockingConnectionPool pool, NodeServer node, Opcode op, DataRequest req,
                                      MemorySegment bulk, ErrorCode code, String message) {
        MemorySegment dst = op == Opcode.DATA_READ ? Arena.ofAuto().allocate(Math.max(1, req.getLength())) : null;
        TiffinException e = catchThrowableOfType(TiffinException.class,
                () -> pool.call(node.endpoint(), op, req, bulk, Empty.parser(), dst));
        assertThat(e).as(op + " " + req).isNotNull();
        assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
        assertThat(e.getMessage()).contains(message);
    }
}
