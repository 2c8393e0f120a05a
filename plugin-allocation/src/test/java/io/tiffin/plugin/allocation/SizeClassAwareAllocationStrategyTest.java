package io.tiffin.plugin.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.plugins.testkit.RecordingReplicaSink;
import io.tiffin.plugins.testkit.SimulatedSegment;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** What {@code size-class-aware} does per size class, on hand-made segments. */
class SizeClassAwareAllocationStrategyTest {
    private static final long KiB = 1L << 10;
    private static final long MiB = 1L << 20;

    private static List<String> place(long size, SimulatedSegment... segments) {
        AllocationRequest request = AllocationRequest.of(size, 1);
        RecordingReplicaSink sink = new RecordingReplicaSink(request, new SplittableRandom(1));
        new SizeClassAwareAllocationStrategy().place(request, List.of(segments), sink);
        return sink.placed();
    }

    /** A 64 MiB segment with a free hole of {@code hole} bytes at offset 0, then {@code used} bytes in use. */
    private static SimulatedSegment withHole(String name, long hole, long used) {
        SimulatedSegment s = new SimulatedSegment(name, "node", 64 * MiB);
        long first = s.allocate(hole);
        s.allocate(used);
        s.free(first);
        return s;
    }

    @Test
    void classesAreRelativeToTheSegmentCapacity() {
        double capacity = 64 * MiB;
        assertThat(SizeClassAwareAllocationStrategy.sizeClass(4 * KiB, capacity))
                .isEqualTo(SizeClassAwareAllocationStrategy.SMALL);
        assertThat(SizeClassAwareAllocationStrategy.sizeClass(643 * KiB, capacity))
                .isEqualTo(SizeClassAwareAllocationStrategy.SMALL);
        assertThat(SizeClassAwareAllocationStrategy.sizeClass(3 * MiB / 2, capacity))
                .isEqualTo(SizeClassAwareAllocationStrategy.MEDIUM);
        assertThat(SizeClassAwareAllocationStrategy.sizeClass(3 * MiB, capacity))
                .isEqualTo(SizeClassAwareAllocationStrategy.LARGE);
        assertThat(SizeClassAwareAllocationStrategy.sizeClass(3 * MiB, 1024 * MiB))
                .isEqualTo(SizeClassAwareAllocationStrategy.SMALL);
    }

    @Test
    void smallObjectsTakeTheTightestHole() {
        SimulatedSegment loose = withHole("loose", 1 * MiB, 8 * MiB);
        SimulatedSegment tight = withHole("tight", 8 * KiB, 8 * MiB);
        SimulatedSegment empty = new SimulatedSegment("empty", "node", 64 * MiB);
        assertThat(place(4 * KiB, empty, loose, tight)).containsExactly("tight");
    }

    @Test
    void largeObjectsFillAHoleOfTheirSizeBeforeCuttingALargeRegion() {
        SimulatedSegment empty = new SimulatedSegment("empty", "node", 64 * MiB);
        SimulatedSegment hole = withHole("hole", 3 * MiB, 30 * MiB);
        assertThat(place(3 * MiB, empty, hole)).containsExactly("hole");
    }

    @Test
    void largeObjectsThatMustCutGoWhereTheLargestRegionIsBiggest() {
        SimulatedSegment fuller = new SimulatedSegment("fuller", "node", 64 * MiB);
        fuller.allocate(20 * MiB);
        SimulatedSegment emptier = new SimulatedSegment("emptier", "node", 64 * MiB);
        emptier.allocate(4 * MiB);
        assertThat(place(3 * MiB, fuller, emptier)).containsExactly("emptier");
    }
}
