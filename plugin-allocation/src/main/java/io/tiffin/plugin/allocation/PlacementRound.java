package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.List;

/**
 * The steps Mooncake's strategies share, for one placement call: offer a segment (skipping segments
 * that are not OK or already hold a replica of this object), place on the preferred segments, and
 * the bounded random walk.
 *
 * <p>Not thread-safe: one instance per {@code place} call.
 */
final class PlacementRound {
    /** Mooncake's {@code kMaxRetryLimit}: the random walk visits at most this many segments. */
    static final int MAX_TRIES = 100;

    private final AllocationRequest request;
    private final List<? extends SegmentView> segments;
    private final ReplicaSink sink;
    // Segments that received a replica; replicas are few, so a small array beats a set.
    private final SegmentView[] used;
    private int usedCount;

    PlacementRound(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink) {
        this.request = request;
        this.segments = segments;
        this.sink = sink;
        this.used = new SegmentView[request.replicas()];
    }

    List<? extends SegmentView> segments() {
        return segments;
    }

    AllocationRequest request() {
        return request;
    }

    int remaining() {
        return usedCount >= used.length ? 0 : sink.remaining();
    }

    java.util.random.RandomGenerator random() {
        return sink.random();
    }

    /** True if {@code s} is OK and holds no replica of this object yet. */
    boolean eligible(SegmentView s) {
        if (s.status() != SegmentStatus.OK) {
            return false;
        }
        for (int i = 0; i < usedCount; i++) {
            if (used[i] == s) {
                return false;
            }
        }
        return true;
    }

    /** Offers {@code s} to the sink if replicas are still wanted and it is eligible. */
    boolean offer(SegmentView s) {
        if (remaining() == 0 || !eligible(s)) {
            return false;
        }
        if (sink.tryPlace(s)) {
            used[usedCount++] = s;
            return true;
        }
        return false;
    }

    /** Mooncake: the preferred segments first, in order, each if it is OK and large enough. */
    void placePreferred() {
        for (String name : request.preferredSegments()) {
            if (remaining() == 0) {
                return;
            }
            for (SegmentView s : segments) {
                if (s.name().equals(name)) {
                    if (s.largestFreeRegion() >= request.size()) {
                        offer(s);
                    }
                    break;
                }
            }
        }
    }

    /** Mooncake: consecutive segments from a random start, at most {@code min(100, #segments)} of them. */
    void randomWalk() {
        int n = segments.size();
        if (n == 0 || remaining() == 0) {
            return;
        }
        int tries = Math.min(MAX_TRIES, n);
        int start = n == 1 ? 0 : sink.random().nextInt(n);
        for (int i = 0; i < tries && remaining() > 0; i++) {
            int index = start + i;
            offer(segments.get(index >= n ? index - n : index));
        }
    }
}
