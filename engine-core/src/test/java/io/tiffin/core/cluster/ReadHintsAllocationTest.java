package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.lang.management.ManagementFactory;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Read hints and memory: a get allocates the hinted object's size only once the lookup confirmed the hint,
 * so a stale hint of a large object costs a get of a small or missing key no large allocation (up to 2 GiB
 * would be an OutOfMemoryError for a get that should return a few bytes or OBJECT_NOT_FOUND).
 */
class ReadHintsAllocationTest {
    private static final long MiB = 1L << 20;

    @Test
    void aStaleHintOfALargeObjectDoesNotAllocateItsSize() {
        java.lang.management.ThreadMXBean plain = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(plain instanceof com.sun.management.ThreadMXBean);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) plain;
        Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            byte[] warm = TestCluster.randomBytes(100, 1);
            reader.put("warm", warm);
            for (int i = 0; i < 50; i++) {
                assertThat(reader.get("warm")).isEqualTo(warm); // classes loaded, paths warm
            }

            // replaced by a small object
            reader.put("k", TestCluster.randomBytes((int) (16 * MiB), 2)); // the reader's hint: 16 MiB
            byte[] small = TestCluster.randomBytes(100, 3);
            writer.remove("k", true);
            writer.put("k", small);
            long before = mx.getCurrentThreadAllocatedBytes();
            assertThat(reader.get("k")).isEqualTo(small);
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            assertThat(allocated).as("heap bytes a get of a 100-byte object allocated").isLessThan(4 * MiB);

            // removed
            reader.put("j", TestCluster.randomBytes((int) (16 * MiB), 4));
            writer.remove("j", true);
            before = mx.getCurrentThreadAllocatedBytes();
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> reader.get("j"));
            allocated = mx.getCurrentThreadAllocatedBytes() - before;
            assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(allocated).as("heap bytes a get of a missing key allocated").isLessThan(4 * MiB);
        }
    }
}
