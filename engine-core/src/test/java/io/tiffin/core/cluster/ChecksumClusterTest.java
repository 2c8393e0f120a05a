package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.util.Crc32c;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Map;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.LocalSegmentDirectory;
import org.junit.jupiter.api.Test;

/**
 * End-to-end checksums on real servers: a replica whose bytes were changed on its node (overwritten in the
 * node's memory, as a bit flip or a writer within its grant could) is named by the reader, which reads the other replica; a
 * writer that sends no checksum gets objects that are not verified.
 */
class ChecksumClusterTest {
    private static final long MiB = 1L << 20;

    /**
     * Overwrites 16 bytes in the middle of replica {@code d} in its node's segment memory (the node runs in this
     * JVM): a bit flip, or a writer that overwrote the bytes within its grant, as the node would hold them.
     */
    private static void corrupt(ReplicaDescriptor d) {
        LocalSegment segment = LocalSegmentDirectory.find(d.segment());
        assertThat(segment).as("segment %s of an in-JVM node", d.segment()).isNotNull();
        segment.slice(d.offset() + d.size() / 2, 16).fill((byte) 0x5a);
    }

    @Test
    void aCorruptReplicaIsNamedAndReadersReadTheOtherOne() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "corrupter")) {
            TiffinClient writer = cluster.remoteClient();
            byte[] v = TestCluster.randomBytes(300_000, 21);
            writer.put("k", v, PutOptions.replicas(2));
            ObjectLocation loc = writer.locate("k").orElseThrow();
            assertThat(loc.replicas()).hasSize(2);
            assertThat(loc.crc32c()).as("the master hands out the writer's checksum")
                    .isEqualTo(Crc32c.of(MemorySegment.ofArray(v)));
            ReplicaDescriptor first = loc.replicas().get(0);
            corrupt(first);

            TiffinClient trusting = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .verifyChecksums(false).build());
            cluster.clients.add(trusting);
            assertThat(trusting.get("k")).as("without verification the corrupt first replica is read as it is")
                    .isNotEqualTo(v);

            TiffinClient reader = cluster.remoteClient();
            assertThat(reader.get("k")).as("get: the other replica").isEqualTo(v);
            assertThat(writer.get("k")).as("a hinted get (the writer's hint names the corrupt replica)").isEqualTo(v);
            TiffinClient sameJvm = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(sameJvm);
            assertThat(sameJvm.get("k")).as("a same-JVM copy of the corrupt replica is skipped as well").isEqualTo(v);
            try (Arena arena = Arena.ofShared()) {
                MemorySegment dst = arena.allocate(v.length);
                assertThat(reader.getInto("k", dst)).isEqualTo(v.length);
                assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).as("getInto").isEqualTo(v);
            }
            List<KeyResult<byte[]>> batch = reader.batchGet(List.of("k", "k"));
            assertThat(batch).allSatisfy(r -> assertThat(r.value()).as("batchGet").isEqualTo(v));

            ReplicaDescriptor second = loc.replicas().get(1);
            corrupt(second);
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> reader.get("k"));
            assertThat(e.code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH);
            assertThat(e.getMessage()).as("names a corrupt replica: node, segment, offset")
                    .containsAnyOf("node " + first.nodeId() + " (" + first.endpoint() + "), segment " + first.segment()
                                    + ", offset " + first.offset(),
                            "node " + second.nodeId() + " (" + second.endpoint() + "), segment " + second.segment()
                                    + ", offset " + second.offset())
                    .contains("key k", "CRC32C", Crc32c.hex(loc.crc32c()), "corrupt");
            assertThat(reader.batchGet(List.of("k")).getFirst().code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH);
        }
    }

    /**
     * A hot-cache reader of a corrupt replica: every read API fails CHECKSUM_MISMATCH and nothing enters the cache
     * (the fill's copy takes the checksum on the way, split with the chunk helper thread: the value is large
     * enough to be shared and spans several blocks); once the replica's bytes are whole again the same reads
     * fill the cache, and its hits return the object's bytes.
     */
    @Test
    void aHotCacheReaderNeverCachesACorruptCopy() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 32 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly();
             Arena arena = Arena.ofShared()) {
            TiffinClient writer = cluster.remoteClient();
            byte[] v = TestCluster.randomBytes((int) (6 * MiB + 4321), 33);
            writer.put("k", v);
            ReplicaDescriptor d = writer.locate("k").orElseThrow().replicas().getFirst();
            MemorySegment middle = LocalSegmentDirectory.find(d.segment()).slice(d.offset() + d.size() / 2, 16);
            byte[] whole = middle.toArray(ValueLayout.JAVA_BYTE);
            corrupt(d);

            TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new HotCacheSettings(64 * MiB, MiB, 1.0, 1024, plugins.hotCachePolicy("lru"))).build());
            cluster.clients.add(reader);
            MemorySegment dst = arena.allocate(v.length);
            List<Runnable> reads = List.of(() -> reader.get("k"), () -> reader.getInto("k", dst),
                    () -> reader.getPinned("k").close());
            for (int round = 0; round < 2; round++) {
                for (Runnable read : reads) {
                    assertThatThrownBy(read::run).as("round %d: a corrupt copy is neither returned nor cached", round)
                            .isInstanceOfSatisfying(TiffinException.class,
                                    e -> assertThat(e.code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH));
                }
                assertThat(reader.batchGet(List.of("k")).getFirst().code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH);
                assertThat(reader.batchGetInto(List.of("k"), List.of(dst)).getFirst().code())
                        .isEqualTo(ErrorCode.CHECKSUM_MISMATCH);
            }
            int free = reader.hotCache().freeBlocksWhenQuiet();
            assertThat(reader.hotCacheStats().orElseThrow().fills()).as("fills of corrupt bytes").isZero();
            assertThat(free).as("every reserved block came back").isEqualTo(reader.hotCache().blockCount());

            middle.copyFrom(MemorySegment.ofArray(whole));
            byte[] w = TestCluster.randomBytes((int) (5 * MiB + 99), 34);
            writer.put("w", w);
            try (PinnedValue pinned = reader.getPinned("k")) { // a zero-copy fill, checked in its blocks
                assertThat(pinned.fromCache()).isFalse();
                assertThat(bytesOf(pinned)).isEqualTo(v);
            }
            assertThat(reader.getInto("w", dst)).isEqualTo(w.length); // a fill copied from the destination
            assertThat(dst.asSlice(0, w.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(w);
            reader.hotCache().freeBlocksWhenQuiet();
            assertThat(reader.hotCacheStats().orElseThrow().fills()).isEqualTo(2);
            dst.fill((byte) 0);
            assertThat(reader.getInto("k", dst)).isEqualTo(v.length);
            assertThat(dst.toArray(ValueLayout.JAVA_BYTE)).as("a hit of the zero-copy fill").isEqualTo(v);
            try (PinnedValue pinned = reader.getPinned("w")) {
                assertThat(pinned.fromCache()).isTrue();
                assertThat(bytesOf(pinned)).as("a hit of the copied fill").isEqualTo(w);
            }
            assertThat(reader.get("k")).isEqualTo(v);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).isEqualTo(3);
        }
    }

    private static byte[] bytesOf(PinnedValue value) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (MemorySegment m : value.segments()) {
            out.writeBytes(m.toArray(ValueLayout.JAVA_BYTE));
        }
        return out.toByteArray();
    }

    /** An older writer (or any that sends no checksum): the object's checksum is 0, and readers do not verify it. */
    @Test
    void anObjectWrittenWithoutAChecksumIsReadUnverified() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "old-writer");
             Arena arena = Arena.ofShared()) {
            byte[] v = TestCluster.randomBytes(50_000, 5);
            PutStartReply grant = pool.call(cluster.masterAddress(), Opcode.PUT_START, PutStartRequest.newBuilder()
                    .setKey("old").setSize(v.length).setOptions(Messages.toMsg(PutOptions.DEFAULT)).setPutId(7).build(),
                    PutStartReply.parser());
            ReplicaDescriptor d = Messages.fromMsg(grant.getReplicas(0));
            MemorySegment src = arena.allocate(v.length);
            src.copyFrom(MemorySegment.ofArray(v));
            pool.call(d.endpoint(), Opcode.DATA_WRITE, DataRequest.newBuilder().setSegment(d.segment())
                    .setOffset(d.offset()).setLength(v.length).setMountEpoch(d.mountEpoch())
                    .setGrant(Messages.grantOf(d)).build(), src,
                    Empty.parser(), null);
            pool.call(cluster.masterAddress(), Opcode.PUT_END, KeyRequest.newBuilder().setKey("old").build(),
                    Empty.parser());

            TiffinClient reader = cluster.remoteClient();
            assertThat(reader.locate("old").orElseThrow().crc32c()).isEqualTo(ObjectLocation.NO_CHECKSUM);
            assertThat(reader.get("old")).isEqualTo(v);
            corrupt(d);
            assertThat(reader.get("old")).as("nothing to verify against: read as it is").isNotEqualTo(v);
        }
    }
}
