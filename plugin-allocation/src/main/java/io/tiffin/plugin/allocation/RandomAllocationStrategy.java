package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.List;

/**
 * Mooncake Store's {@code RandomAllocationStrategy} ({@code random}): preferred segments first, in
 * order; then a walk over consecutive segments from a random start, at most
 * {@code min(100, #segments)} tries, skipping segments that are not OK or already hold a replica.
 *
 * <p>Thread-safe: stateless.
 */
public final class RandomAllocationStrategy implements AllocationStrategy {
    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        PlacementRound round = new PlacementRound(request, segments, sink);
        round.placePreferred();
        round.randomWalk();
    }
}
