package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.List;

/**
 * {@code size-class-aware}: places an object by its size class, as proposed upstream for Mooncake Store.
 *
 * <p>The classes are relative to the segments in play (their mean capacity {@code C}): <b>small</b>
 * below {@code C / }{@value #SMALL_DIVISOR} (1 MiB on 64 MiB segments: metadata, 256 KiB pages, 643 KiB
 * indexer pages), <b>large</b> from {@code C / }{@value #LARGE_DIVISOR} (2 MiB: 3 MiB KV pages),
 * <b>medium</b> in between.
 *
 * <p>For each eligible segment the strategy reads the per-bin free counts and finds the region the
 * segment's allocator would take (the smallest non-empty bin at or above the request's size class). A
 * segment where that region is a <i>hole</i> (not the segment's only largest region) always beats one
 * where the object would cut the largest region, so no object cuts a large region while a hole of its
 * size is free somewhere. Within each group the class decides:
 * <ul>
 *   <li><b>small</b>: best fit, the tightest hole (ties to the most fragmented segment,
 *       {@code 1 − largest/free}), so small objects pack into segments that are already fragmented;
 *       when every candidate must cut, the smallest largest region;</li>
 *   <li><b>medium</b>: the tightest hole; when every candidate must cut, the highest
 *       {@code ½ · free/capacity + ½ · largest/capacity}, which balances free ratio against the largest
 *       contiguous hole;</li>
 *   <li><b>large</b>: the tightest hole (typically one another large object left); when every
 *       candidate must cut, the segment whose largest contiguous free region is biggest.</li>
 * </ul>
 * Unlike {@code hole-fit} it does not predict how a placement changes each segment's stranded bytes,
 * and it ignores the replica count. Preferred segments come first; the random walk places whatever is
 * still missing.
 *
 * <p>Thread-safe: stateless.
 */
public final class SizeClassAwareAllocationStrategy implements AllocationStrategy {
    /** Objects below {@code mean capacity / SMALL_DIVISOR} are small. */
    static final int SMALL_DIVISOR = 64;
    /** Objects of at least {@code mean capacity / LARGE_DIVISOR} are large. */
    static final int LARGE_DIVISOR = 32;

    static final int SMALL = 0;
    static final int MEDIUM = 1;
    static final int LARGE = 2;

    /** The size class of {@code size} among segments of mean capacity {@code meanCapacity}. */
    static int sizeClass(long size, double meanCapacity) {
        if (size < meanCapacity / SMALL_DIVISOR) {
            return SMALL;
        }
        return size < meanCapacity / LARGE_DIVISOR ? MEDIUM : LARGE;
    }

    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        PlacementRound round = new PlacementRound(request, segments, sink);
        round.placePreferred();
        int wanted = round.remaining();
        int n = segments.size();
        if (wanted > 0 && n > 0) {
            long size = request.size();
            double capacitySum = 0;
            for (SegmentView s : segments) {
                capacitySum += s.capacity();
            }
            int cls = sizeClass(size, capacitySum / n);
            // Keep the best `wanted` segments by (cuts, score), smallest first, in a tiny sorted array.
            SegmentView[] best = new SegmentView[wanted];
            boolean[] bestCuts = new boolean[wanted];
            double[] bestScore = new double[wanted];
            int kept = 0;
            for (SegmentView s : segments) {
                long largest = s.largestFreeRegion();
                if (largest < size || !round.eligible(s)) {
                    continue;
                }
                int reqBin = HoleFitAllocationStrategy.binAtOrAbove(s, size);
                if (reqBin < 0) {
                    continue;
                }
                HoleFitAllocationStrategy.Hole hole = HoleFitAllocationStrategy.holeFor(s, reqBin, largest);
                if (hole == null) {
                    continue;
                }
                boolean cuts = hole.cutsLargest(s);
                double score = score(cls, s, cuts, s.binSize(hole.take()), largest);
                int pos = kept;
                while (pos > 0 && better(cuts, score, bestCuts[pos - 1], bestScore[pos - 1])) {
                    pos--;
                }
                if (pos >= wanted) {
                    continue;
                }
                for (int i = Math.min(kept, wanted - 1); i > pos; i--) {
                    best[i] = best[i - 1];
                    bestCuts[i] = bestCuts[i - 1];
                    bestScore[i] = bestScore[i - 1];
                }
                best[pos] = s;
                bestCuts[pos] = cuts;
                bestScore[pos] = score;
                kept = Math.min(kept + 1, wanted);
            }
            for (int i = 0; i < kept && round.remaining() > 0; i++) {
                round.offer(best[i]);
            }
        }
        round.randomWalk();
    }

    /** Lower is better; compared only between segments that agree on {@code cuts}. */
    private static double score(int cls, SegmentView s, boolean cuts, long region, long largest) {
        if (!cuts) {
            if (cls == SMALL) {
                // Best fit; among equal bins, the most fragmented segment (the term is below 1 byte).
                double fragmentation = 1.0 - Math.min(1.0, (double) largest / Math.max(1, s.free()));
                return region - fragmentation;
            }
            return region;
        }
        return switch (cls) {
            case SMALL -> largest;
            case MEDIUM -> -(0.5 * s.freeRatio() + 0.5 * largest / (double) Math.max(1, s.capacity()));
            default -> -largest;
        };
    }

    private static boolean better(boolean cuts, double score, boolean otherCuts, double otherScore) {
        if (cuts != otherCuts) {
            return !cuts;
        }
        return score < otherScore;
    }
}
