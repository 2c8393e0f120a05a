package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.List;

/**
 * {@code hole-fit}: global best fit over the allocators' size-class bins that protects each segment's
 * largest hole.
 *
 * <p>Fragmentation is {@code 1 − Σ largest free region / Σ free}: the bytes that count against it are
 * the <i>stranded</i> free bytes, those outside each segment's largest region. For every eligible
 * segment the strategy reads the per-bin free counts and predicts what the segment's allocator will
 * do with the request (take a region from the smallest non-empty bin at or above the request's size
 * class) and by how much that changes the segment's stranded bytes:
 * <ul>
 *   <li>a region that is not the segment's only largest one: the stranded bytes shrink by the
 *       allocation's size (the best outcome: a hole gets filled);</li>
 *   <li>the segment's only largest region: the stranded bytes stay the same, or grow if the remainder
 *       drops below the second-largest region.</li>
 * </ul>
 * Segments are ranked by that change, then, when a hole gets filled, by how tightly the chosen bin
 * fits the request (best fit, which keeps large holes for large objects). When every candidate must
 * cut its largest region, a single replica goes where the cut fits tightest (so untouched segments
 * stay whole), while the replicas of a multi-replica object go to the segments with the most free
 * bytes (free-ratio-first's rule: a placement needs several segments with room, and packing would
 * leave too few). Preferred segments come first; the random walk places whatever is still missing.
 *
 * <p>Thread-safe: stateless.
 */
public final class HoleFitAllocationStrategy implements AllocationStrategy {

    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        PlacementRound round = new PlacementRound(request, segments, sink);
        round.placePreferred();
        int wanted = round.remaining();
        if (wanted > 0) {
            long size = request.size();
            // Keep the best `wanted` segments by (delta, waste, largest), smallest first; insertion
            // into a tiny sorted array avoids sorting every candidate.
            SegmentView[] best = new SegmentView[wanted];
            long[] bestDelta = new long[wanted];
            long[] bestWaste = new long[wanted];
            long[] bestLargest = new long[wanted];
            int kept = 0;
            for (SegmentView s : segments) {
                long largest = s.largestFreeRegion();
                if (largest < size || !round.eligible(s)) {
                    continue;
                }
                int reqBin = binAtOrAbove(s, size);
                if (reqBin < 0) {
                    continue;
                }
                long rounded = s.binSize(reqBin);
                Hole hole = holeFor(s, reqBin, largest);
                if (hole == null) {
                    continue;
                }
                int take = hole.take();
                int top = hole.top();
                long takeSize = s.binSize(take);
                long delta;
                long waste;
                if (!hole.cutsLargest(s)) {
                    delta = -rounded;
                    waste = takeSize - rounded;
                } else {
                    int second = top - 1;
                    while (second >= 0 && s.freeRegionsInBin(second) == 0) {
                        second--;
                    }
                    long secondSize = second >= 0 ? s.binSize(second) : 0;
                    long newLargest = Math.max(takeSize - rounded, secondSize);
                    delta = -rounded - (newLargest - takeSize);
                    // Cutting a segment's largest region. One replica: best fit, so untouched segments
                    // stay whole. Several: spread the cuts over the emptiest segments, so that enough
                    // segments keep room for every replica of a large object.
                    waste = request.replicas() > 1 ? -s.free() : takeSize - rounded;
                }
                int pos = kept;
                while (pos > 0 && better(delta, waste, largest, bestDelta[pos - 1], bestWaste[pos - 1],
                        bestLargest[pos - 1])) {
                    pos--;
                }
                if (pos >= wanted) {
                    continue;
                }
                int last = Math.min(kept, wanted - 1);
                for (int i = last; i > pos; i--) {
                    best[i] = best[i - 1];
                    bestDelta[i] = bestDelta[i - 1];
                    bestWaste[i] = bestWaste[i - 1];
                    bestLargest[i] = bestLargest[i - 1];
                }
                best[pos] = s;
                bestDelta[pos] = delta;
                bestWaste[pos] = waste;
                bestLargest[pos] = largest;
                kept = Math.min(kept + 1, wanted);
            }
            for (int i = 0; i < kept && round.remaining() > 0; i++) {
                round.offer(best[i]);
            }
        }
        round.randomWalk();
    }

    private static boolean better(long delta, long waste, long largest, long otherDelta, long otherWaste,
            long otherLargest) {
        if (delta != otherDelta) {
            return delta < otherDelta;
        }
        if (waste != otherWaste) {
            return waste < otherWaste;
        }
        return largest < otherLargest;
    }

    /** The smallest bin whose lower bound is at least {@code size}, or -1. Bin sizes increase. */
    /**
     * Where the segment's allocator would take a request whose size class is {@code reqBin}: the bin it
     * takes from ({@code take}: the smallest non-empty bin at or above the request) and the highest
     * non-empty bin ({@code top}, the largest region). Shared with {@link SizeClassAwareAllocationStrategy}.
     */
    record Hole(int take, int top) {
        /** Whether the allocation would cut the segment's only largest region. */
        boolean cutsLargest(SegmentView s) {
            return take == top && s.freeRegionsInBin(top) == 1;
        }
    }

    /** The hole a request of size class {@code reqBin} would take, or null if no region fits it. */
    static Hole holeFor(SegmentView s, int reqBin, long largest) {
        int top = binAtOrBelow(s, largest);
        while (top >= reqBin && s.freeRegionsInBin(top) == 0) {
            top--;
        }
        if (top < reqBin) {
            return null;
        }
        int take = reqBin;
        while (take < top && s.freeRegionsInBin(take) == 0) {
            take++;
        }
        return new Hole(take, top);
    }

    static int binAtOrAbove(SegmentView s, long size) {
        int lo = 0;
        int hi = s.binCount() - 1;
        if (hi < 0 || s.binSize(hi) < size) {
            return -1;
        }
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (s.binSize(mid) >= size) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** The largest bin whose lower bound is at most {@code size}, or -1. */
    static int binAtOrBelow(SegmentView s, long size) {
        int lo = -1;
        int hi = s.binCount() - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (s.binSize(mid) <= size) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
