package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.List;

/**
 * Mooncake Store's {@code RandomAllocationStrategy}: preferred segments first, in order; then a walk
 * over consecutive segments from a random start, at most {@code min(100, #segments)} tries.
 *
 * <p>Thread-safe: stateless.
 */
public final class RandomAllocationStrategy implements AllocationStrategy {
    /** Mooncake's {@code kMaxRetryLimit}. */
    static final int MAX_TRIES = 100;

    @Override
    public void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        placePreferred(request, segments, sink);
        randomWalk(request, segments, sink);
    }

    static void placePreferred(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        for (String name : request.preferredSegments()) {
            if (sink.remaining() == 0) {
                return;
            }
            for (SegmentView s : segments) {
                if (s.name().equals(name)) {
                    if (s.status() == SegmentStatus.OK && s.largestFreeRegion() >= request.size()) {
                        sink.tryPlace(s);
                    }
                    break;
                }
            }
        }
    }

    static void randomWalk(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        int n = segments.size();
        if (n == 0 || sink.remaining() == 0) {
            return;
        }
        int tries = Math.min(MAX_TRIES, n);
        int start = n == 1 ? 0 : sink.random().nextInt(n);
        for (int i = 0; i < tries && sink.remaining() > 0; i++) {
            SegmentView s = segments.get((start + i) % n);
            if (s.status() == SegmentStatus.OK) {
                sink.tryPlace(s);
            }
        }
    }
}
