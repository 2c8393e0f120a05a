package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link TiffinClient#getRangeInto}: a byte range of an object, read over the network (in slices, from the source
 * offset on), from a segment of this JVM, and into heap or confined memory; the end of the object, and the
 * refusals.
 */
class RangeReadClusterTest {
    private static final int SIZE = 3 << 20;

    @Test
    void rangesComeBackExactOverTheNetworkAndFromThisJvm() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            byte[] value = TestCluster.randomBytes(SIZE, 11);
            TiffinClient local = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(local);
            // slices of 256 KiB: a 1 MiB range takes five requests, the first and last partial
            TiffinClient remote = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .sliceSize(256 << 10).build());
            cluster.clients.add(remote);
            local.put("obj", value, PutOptions.replicas(1));
            for (TiffinClient c : List.of(remote, local)) {
                byte[] small = new byte[100];
                assertThat(c.getRangeInto("obj", 1_000_000, MemorySegment.ofArray(small))).isEqualTo(100);
                assertThat(small).isEqualTo(Arrays.copyOfRange(value, 1_000_000, 1_000_100));

                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment big = arena.allocate(1 << 20); // confined: received through a staging buffer
                    assertThat(c.getRangeInto("obj", 100_001, big)).isEqualTo(1 << 20);
                    assertThat(big.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                            .isEqualTo(Arrays.copyOfRange(value, 100_001, 100_001 + (1 << 20)));
                }

                byte[] tail = new byte[100];
                assertThat(c.getRangeInto("obj", SIZE - 10, MemorySegment.ofArray(tail))).as("the object ends first")
                        .isEqualTo(10);
                assertThat(Arrays.copyOf(tail, 10)).isEqualTo(Arrays.copyOfRange(value, SIZE - 10, SIZE));
                assertThat(tail[10]).isZero();
                assertThat(c.getRangeInto("obj", SIZE, MemorySegment.ofArray(tail))).isZero();
            }
        }
    }

    @Test
    void badRangesAndMissingKeysAreRefused() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress()).build());
            cluster.clients.add(c);
            c.put("obj", new byte[1000], PutOptions.replicas(1));
            MemorySegment dst = MemorySegment.ofArray(new byte[10]);
            assertThatThrownBy(() -> c.getRangeInto("obj", 1001, dst)).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
            assertThatThrownBy(() -> c.getRangeInto("obj", -1, dst)).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
            assertThatThrownBy(() -> c.getRangeInto("missing", 0, dst)).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            assertThatThrownBy(() -> c.getRangeInto("obj", 0, MemorySegment.ofArray(new byte[1]).asReadOnly()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
        }
    }
}
