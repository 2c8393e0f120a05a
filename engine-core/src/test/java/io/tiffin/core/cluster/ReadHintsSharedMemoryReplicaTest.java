package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.local.SharedMemoryFiles;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Read hints and mapped replicas: when an object has a replica this client copies through a mapping
 * (same-host shared memory, or a segment of this JVM), the usual read copies it from memory, so such an
 * object gets no hint and its gets never go over the socket speculatively (as the hot cache leaves such
 * objects alone).
 */
class ReadHintsSharedMemoryReplicaTest {
    @TempDir
    Path dir;

    @Test
    void anObjectWithAMappedReplicaIsNotReadOverTheSocketUnderAHint() {
        Assumptions.assumeFalse(SharedMemoryFiles.hostId().isEmpty() || SharedMemoryFiles.pidNamespace().isEmpty(),
                "needs /proc/sys/kernel/random/boot_id and /proc/self/ns/pid (Linux)");
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            NodeServer remote = cluster.addNode("plain-0", 16L << 20);
            NodeServer mapped = cluster.addNode("shm-0", 16L << 20, dir);
            TiffinClient c = cluster.sharedMemoryClient();
            byte[] v = TestCluster.randomBytes(1 << 20, 1);
            c.put("k", v, PutOptions.replicas(2).withPreferredSegment(remote.segmentName()));
            ObjectLocation loc = c.locate("k").orElseThrow();
            assertThat(loc.replicas()).as("scenario").hasSize(2);
            assertThat(loc.replicas().get(0).nodeId()).as("scenario: first replica remote").isEqualTo(remote.nodeId());
            assertThat(loc.replicas().get(1).nodeId()).as("scenario: second replica mapped").isEqualTo(mapped.nodeId());
            assertThat(c.sharedSegmentsMapped()).as("scenario: the put mapped the shared segment").isEqualTo(1);

            for (int i = 0; i < 3; i++) {
                assertThat(c.get("k")).isEqualTo(v);
            }
            assertThat(c.readHintStats().orElseThrow().confirmed())
                    .as("gets of an object with a replica mapped here that went over the socket under a hint")
                    .isZero();
        }
    }
}
