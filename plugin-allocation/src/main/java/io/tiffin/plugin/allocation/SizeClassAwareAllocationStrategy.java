package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.Arrays;
import java.util.List;

/**
 * {@code size-class-aware}: ranks the segments by a score that depends on the object's size class, as
 * proposed upstream for Mooncake Store:
 * <ul>
 *   <li><b>small</b> objects (below {@value #SMALL_LIMIT} bytes) pack into segments that are already
 *       fragmented (highest {@code 1 − largest free region / free}), so their holes get used and
 *       unfragmented segments keep their large regions; ties go to the fuller segment;</li>
 *   <li><b>medium</b> objects balance free ratio against the largest contiguous hole: score
 *       {@code ½ · free/capacity + ½ · largest free region/capacity};</li>
 *   <li><b>large</b> objects (at least {@value #LARGE_LIMIT} bytes) go where the largest contiguous
 *       free region is biggest.</li>
 * </ul>
 * Preferred segments come first; segments whose largest free region is too small are not ranked;
 * the random walk places whatever is still missing.
 *
 * <p>Thread-safe: stateless.
 */
public final class SizeClassAwareAllocationStrategy implements AllocationStrategy {
    /** Objects smaller than this (64 KiB) are small. */
    static final long SMALL_LIMIT = 64L << 10;
    /** Objects at least this large (1 MiB) are large. */
    static final long LARGE_LIMIT = 1L << 20;

    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        PlacementRound round = new PlacementRound(request, segments, sink);
        round.placePreferred();
        if (round.remaining() > 0) {
            long size = request.size();
            int n = segments.size();
            SegmentView[] candidates = new SegmentView[n];
            double[] scores = new double[n];
            double[] ties = new double[n];
            Integer[] order = new Integer[n];
            int count = 0;
            for (SegmentView s : segments) {
                long largest = s.largestFreeRegion();
                if (largest < size || !round.eligible(s)) {
                    continue;
                }
                long free = Math.max(s.free(), 1);
                double capacity = Math.max(s.capacity(), 1);
                double score;
                if (size < SMALL_LIMIT) {
                    score = 1.0 - Math.min(1.0, (double) largest / free);
                } else if (size < LARGE_LIMIT) {
                    score = 0.5 * s.freeRatio() + 0.5 * largest / capacity;
                } else {
                    score = largest;
                }
                candidates[count] = s;
                scores[count] = score;
                ties[count] = -s.freeRatio();
                order[count] = count;
                count++;
            }
            Arrays.sort(order, 0, count, (a, b) -> {
                int c = Double.compare(scores[b], scores[a]);
                return c != 0 ? c : Double.compare(ties[b], ties[a]);
            });
            for (int i = 0; i < count && round.remaining() > 0; i++) {
                round.offer(candidates[order[i]]);
            }
        }
        round.randomWalk();
    }
}
