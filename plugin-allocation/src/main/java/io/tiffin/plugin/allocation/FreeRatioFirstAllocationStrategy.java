package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.Arrays;
import java.util.List;

/**
 * Mooncake Store's {@code FreeRatioFirstAllocationStrategy} ({@code free-ratio-first}, "best of N"):
 * preferred segments first; then {@code min(6 × remaining replicas, #segments)} consecutive segments
 * from a random start, ranked by free ratio (free bytes / capacity) descending and offered in that
 * order; the random walk places whatever is still missing.
 *
 * <p>Thread-safe: stateless.
 */
public final class FreeRatioFirstAllocationStrategy implements AllocationStrategy {
    /** Mooncake's {@code kCandidateMultiplier}. */
    static final int CANDIDATE_MULTIPLIER = 6;

    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        PlacementRound round = new PlacementRound(request, segments, sink);
        round.placePreferred();
        int n = segments.size();
        if (round.remaining() > 0 && n > 0) {
            int sample = Math.min(CANDIDATE_MULTIPLIER * round.remaining(), n);
            int start = n == 1 ? 0 : round.random().nextInt(n);
            SegmentView[] candidates = new SegmentView[sample];
            double[] ratios = new double[sample];
            Integer[] order = new Integer[sample];
            int count = 0;
            for (int i = 0; i < sample; i++) {
                SegmentView s = segments.get((start + i) % n);
                if (round.eligible(s)) {
                    candidates[count] = s;
                    ratios[count] = s.freeRatio();
                    order[count] = count;
                    count++;
                }
            }
            Arrays.sort(order, 0, count, (a, b) -> Double.compare(ratios[b], ratios[a]));
            for (int i = 0; i < count && round.remaining() > 0; i++) {
                round.offer(candidates[order[i]]);
            }
        }
        round.randomWalk();
    }
}
