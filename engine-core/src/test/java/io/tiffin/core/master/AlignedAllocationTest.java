package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Every object starts on a 64-byte boundary of its segment, whatever sizes came before it, and the
 * rounding neither overlaps objects nor loses space when they are freed.
 */
class AlignedAllocationTest {

    @Test
    void mixedSizesAllStartOn64ByteBoundariesWithoutOverlap() {
        MountedSegment segment = new MountedSegment("s", "n", "h:1", 64L << 20, 1, 0);
        SplittableRandom random = new SplittableRandom(7);
        List<long[]> live = new ArrayList<>(); // {handle, offset, size}
        for (int i = 0; i < 5_000; i++) {
            if (!live.isEmpty() && random.nextInt(3) == 0) {
                long[] victim = live.remove(random.nextInt(live.size()));
                segment.free(victim[0]);
                continue;
            }
            long size = random.nextInt(4) == 0 ? 1 + random.nextInt(200) : 1 + random.nextInt(70_000);
            long handle = segment.allocate(size, "k");
            assertThat(handle).as("room for %d bytes", size).isNotNegative();
            long offset = segment.offset(handle);
            assertThat(offset % MountedSegment.ALIGNMENT).as("offset of a %d-byte object", size).isZero();
            live.add(new long[] {handle, offset, size});
        }
        live.sort((a, b) -> Long.compare(a[1], b[1]));
        for (int i = 1; i < live.size(); i++) {
            assertThat(live.get(i)[1]).isGreaterThanOrEqualTo(live.get(i - 1)[1] + live.get(i - 1)[2]);
        }
        for (long[] l : live) {
            segment.free(l[0]);
        }
        assertThat(segment.used()).isZero();
        assertThat(segment.largestFreeRegion()).isEqualTo(64L << 20);
    }

    @Test
    void smallObjectsTakeWholeUnits() {
        MountedSegment segment = new MountedSegment("s", "n", "h:1", 128, 1, 0);
        assertThat(segment.allocate(10, "k")).as("10 bytes take one 64-byte unit").isNotNegative();
        assertThat(segment.used()).isEqualTo(64);
        assertThat(segment.allocate(60, "k")).isNotNegative();
        assertThat(segment.allocate(1, "k")).as("the segment is full: 70 bytes of objects took two 64-byte units")
                .isNegative();
    }
}
