package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.local.SharedMemoryFiles;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import io.tiffin.core.transport.proto.SegmentInfoRequest;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Nodes that keep their segment in a shared-memory file ({@code node.shared-memory-dir}) and clients on
 * the same host that map it: the bytes are the same whichever path wrote or reads them, files are
 * private to the owner, deleted at stop, orphans of dead processes are cleaned up, and a directory
 * without room is a clear start-up error. Also: a node restarted under the same id gets a new segment,
 * and the master drops the objects of the previous run instead of serving their dead bytes.
 */
class SharedMemoryClusterTest {
    @TempDir
    Path dir;

    private static byte[] random(int size, long seed) {
        return TestCluster.randomBytes(size, seed);
    }

    private List<Path> segmentFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".seg")).toList();
        }
    }

    @Test
    void sameHostClientsMapTheSegmentAndSeeTheSameBytesAsTheSocketPath() throws IOException {
        Assumptions.assumeFalse(SharedMemoryFiles.hostId().isEmpty() || SharedMemoryFiles.pidNamespace().isEmpty(),
                "needs /proc/sys/kernel/random/boot_id and /proc/self/ns/pid (Linux)");
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            cluster.addNode("shm-0", 32L << 20, dir);
            cluster.addNode("shm-1", 32L << 20, dir);
            List<Path> files = segmentFiles();
            assertThat(files).hasSize(2);
            for (Path f : files) {
                assertThat(f.getFileName().toString()).startsWith("tiffin-" + ProcessHandle.current().pid() + "-shm-");
                assertThat(Files.size(f)).as("the segment, then a page for its mount epoch").isEqualTo((32L << 20) + 4096);
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo("rw-------");
            }
            TiffinClient shm = cluster.sharedMemoryClient();
            TiffinClient socket = cluster.remoteClient();
            int[] sizes = {1, 4096, 100_000, 3 << 20};
            for (int i = 0; i < sizes.length; i++) {
                byte[] a = random(sizes[i], i);
                byte[] b = random(sizes[i], 100 + i);
                shm.put("shm-" + i, a, PutOptions.replicas(2));
                socket.put("socket-" + i, b, PutOptions.DEFAULT);
                assertThat(socket.get("shm-" + i)).as("written through the mapping, read over the socket").isEqualTo(a);
                assertThat(shm.get("socket-" + i)).as("written over the socket, read through the mapping").isEqualTo(b);
                assertThat(shm.get("shm-" + i)).isEqualTo(a);
            }
            assertThat(shm.sharedSegmentsMapped()).isEqualTo(2);
            assertThat(socket.sharedSegmentsMapped()).isZero();
            Map<String, byte[]> batch = Map.of("x", random(70_000, 7), "y", random(5, 8));
            shm.batchPut(batch, PutOptions.DEFAULT);
            assertThat(shm.batchGet(List.of("x", "y", "missing"))).satisfiesExactly(
                    r -> assertThat(r.value()).isEqualTo(batch.get("x")),
                    r -> assertThat(r.value()).isEqualTo(batch.get("y")),
                    r -> assertThat(r.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            shm.remove("x", true);
            assertThat(catchThrowableOfType(TiffinException.class, () -> shm.get("x")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }
        assertThat(segmentFiles()).as("each node deletes its file when it stops").isEmpty();
    }

    @Test
    void segmentInfoAnswersForTheNodesOwnSegmentOnly() {
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "t")) {
            NodeServer shared = cluster.addNode("info-shm", 8L << 20, dir);
            NodeServer plain = cluster.addNode("info-plain", 8L << 20);
            SegmentInfoReply info = pool.call(shared.endpoint(), Opcode.SEGMENT_INFO,
                    SegmentInfoRequest.newBuilder().setSegment(shared.segmentName()).build(), SegmentInfoReply.parser());
            assertThat(info.getSize()).isEqualTo(8L << 20);
            assertThat(Path.of(info.getSharedMemoryPath()).getParent()).isEqualTo(dir.toAbsolutePath());
            assertThat(info.getPid()).isEqualTo(ProcessHandle.current().pid());
            SegmentInfoReply none = pool.call(plain.endpoint(), Opcode.SEGMENT_INFO,
                    SegmentInfoRequest.newBuilder().setSegment(plain.segmentName()).build(), SegmentInfoReply.parser());
            assertThat(none.getSharedMemoryPath()).as("anonymous memory: nothing to map").isEmpty();
            TiffinException wrong = catchThrowableOfType(TiffinException.class, () -> pool.call(shared.endpoint(),
                    Opcode.SEGMENT_INFO, SegmentInfoRequest.newBuilder().setSegment(plain.segmentName()).build(),
                    SegmentInfoReply.parser()));
            assertThat(wrong.code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND);
            assertThat(wrong.getMessage()).contains(shared.segmentName(), plain.segmentName());
        }
    }

    @Test
    void aClientIgnoresNodesWithoutSharedMemory() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16L << 20)) {
            TiffinClient shm = cluster.sharedMemoryClient();
            byte[] v = random(50_000, 3);
            shm.put("k", v, PutOptions.DEFAULT);
            assertThat(shm.get("k")).isEqualTo(v);
            assertThat(shm.sharedSegmentsMapped()).isZero();
        }
    }

    @Test
    void filesOfDeadNodeProcessesAreRemovedAtStartAndLiveOnesKept() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        long deadPid = p.pid();
        Path orphan = dir.resolve("tiffin-" + deadPid + "-gone-seg0-0000abcd.seg");
        Path live = dir.resolve("tiffin-" + ProcessHandle.current().pid() + "-other-seg0-0000abcd.seg");
        Path unrelated = dir.resolve("notes.seg");
        Files.write(orphan, new byte[4096]);
        Files.write(live, new byte[16]);
        Files.write(unrelated, new byte[16]);
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            cluster.addNode("cleaner", 8L << 20, dir);
            assertThat(orphan).doesNotExist();
            assertThat(live).exists();
            assertThat(unrelated).exists();
        }
    }

    @Test
    void aDirectoryWithoutRoomOrMissingIsAClearStartUpError() {
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            TiffinException tooBig = catchThrowableOfType(TiffinException.class,
                    () -> cluster.addNode("huge", 1L << 50, dir));
            assertThat(tooBig.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            assertThat(tooBig.getMessage()).contains("node.shared-memory-dir", "has room for", "node.segment-size");
            assertThatThrownBy(() -> cluster.addNode("nowhere", 8L << 20, dir.resolve("missing")))
                    .isInstanceOf(TiffinException.class).hasMessageContaining("not a directory");
            assertThat(dir.toFile().list()).as("nothing left behind").isEmpty();
            assertThat(cluster.master.service().liveNodes()).isEmpty();
        }
    }

    @Test
    void aNodeRestartedUnderTheSameIdDropsThePreviousRunsObjects() {
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            NodeServer first = cluster.addNode("steady", 16L << 20);
            TiffinClient c = cluster.remoteClient();
            c.put("before", random(10_000, 1), PutOptions.DEFAULT);
            first.crash(); // its memory is gone; the master has not noticed (TTL not passed)
            NodeServer second = NodeServer.start(NodeOptions.builder(cluster.masterAddress())
                    .nodeId("steady").segmentSize(16L << 20)
                .pingInterval(Duration.ofMillis(200)).build());
            cluster.nodes.add(second);
            assertThat(second.segmentName()).isNotEqualTo(first.segmentName()).startsWith("steady-seg0-");
            assertThat(cluster.master.service().segmentViews()).extracting(s -> s.name())
                    .containsExactly(second.segmentName());
            assertThat(catchThrowableOfType(TiffinException.class, () -> c.get("before")).code())
                    .as("the previous run's bytes are gone: not found, never garbage")
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            byte[] after = random(10_000, 2);
            c.put("after", after, PutOptions.DEFAULT);
            assertThat(c.get("after")).isEqualTo(after);
        }
    }

    /**
     * Readers that copy straight out of the nodes' memory (same host through the shared-memory files, same JVM through
     * the segments themselves) race a writer that rewrites keys on small segments, whose buffers are freed and given
     * to new objects all along ({@link ConcurrentRewrites}). With checksums off, so that a wrong copy is not caught
     * and retried on the way but reaches the check: no stale, torn or wrongly missing value.
     */
    @Test
    void readersCopyingStraightFromNodeMemoryNeverSeeABufferGivenToAnotherObject() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "200ms"), 0, 0)) {
            cluster.addNode("race-shm-0", 4L << 20, dir);
            cluster.addNode("race-shm-1", 4L << 20, dir);
            TiffinClient writer = cluster.remoteClient();
            TiffinClient shm = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .sharedMemory(true).verifyChecksums(false).build());
            TiffinClient sameJvm = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .localMemcpy(true).verifyChecksums(false)
                    .locationCache(new io.tiffin.core.client.LocationCache.Settings(Duration.ofSeconds(30), 100)).build());
            cluster.clients.add(shm);
            cluster.clients.add(sameJvm);
            ConcurrentRewrites race = new ConcurrentRewrites("shm-race-", 10, 200_003); // 2 MB of 8 MiB

            long rewrites = race.run(writer, List.of(shm, shm, sameJvm), Duration.ofSeconds(4));

            race.assertNoWrongAnswer(rewrites);
        }
    }
}
