package io.tiffin.bench;

import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.random.RandomGenerator;

/**
 * The benchmark's {@link ReplicaSink}: allocates directly in the simulated segment's allocator and
 * keeps the same invariants as the core's sink (no second replica on a segment, only OK segments, no
 * more replicas than asked). Reused across calls ({@link #reset}) so the measured path allocates
 * nothing.
 *
 * <p>Not thread-safe: the benchmark is single-threaded.
 */
final class BenchSink implements ReplicaSink {
    private final RandomGenerator random;
    private final BenchSegment[] segments;
    private final long[] handles;
    private long size;
    private int wanted;
    private int placed;
    private int attempts;

    BenchSink(RandomGenerator random, int maxReplicas) {
        this.random = random;
        this.segments = new BenchSegment[maxReplicas];
        this.handles = new long[maxReplicas];
    }

    void reset(long size, int wanted) {
        this.size = size;
        this.wanted = wanted;
        this.placed = 0;
        this.attempts = 0;
    }

    @Override
    public boolean tryPlace(SegmentView view) {
        attempts++;
        if (placed >= wanted || !(view instanceof BenchSegment segment) || segment.status() != SegmentStatus.OK) {
            return false;
        }
        for (int i = 0; i < placed; i++) {
            if (segments[i] == segment) {
                return false;
            }
        }
        long handle = segment.allocator.allocate(size);
        if (handle < 0) {
            return false;
        }
        segment.requested += size;
        segments[placed] = segment;
        handles[placed] = handle;
        placed++;
        return true;
    }

    @Override
    public int remaining() {
        return wanted - placed;
    }

    @Override
    public int attempts() {
        return attempts;
    }

    @Override
    public RandomGenerator random() {
        return random;
    }

    int placed() {
        return placed;
    }

    BenchSegment segment(int i) {
        return segments[i];
    }

    long handle(int i) {
        return handles[i];
    }
}
