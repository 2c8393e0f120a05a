package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * The core's {@link ReplicaSink}: allocates one buffer per accepted segment and refuses placements
 * that would break the invariants (a second replica on a segment, a segment that is not OK, more
 * replicas than asked).
 *
 * <p>Not thread-safe: one instance per placement call.
 */
final class SegmentReplicaSink implements ReplicaSink {
    private final long size;
    private final String key;
    private final int wanted;
    private final RandomGenerator random;
    private final List<MountedSegment> chosen = new ArrayList<>(2);
    /** Per chosen segment, the allocator handle and the offset of its buffer. */
    private long[] handles;
    private long[] offsets;
    private int attempts;

    /** A sink for {@code wanted} replicas of {@code size} bytes of the object of {@code key}. */
    SegmentReplicaSink(long size, String key, int wanted, RandomGenerator random) {
        this.size = size;
        this.key = key;
        this.wanted = wanted;
        this.random = random == null ? ThreadLocalRandom.current() : random;
        // wanted comes from the request, unbounded; placements are at most one per segment, so the arrays start
        // small and grow with what is placed
        this.handles = new long[Math.max(1, Math.min(wanted, 8))];
        this.offsets = new long[handles.length];
    }

    @Override
    public boolean tryPlace(SegmentView view) {
        attempts++;
        if (chosen.size() >= wanted || !(view instanceof MountedSegment segment)
                || segment.status() != SegmentStatus.OK) {
            return false;
        }
        for (MountedSegment s : chosen) {
            if (s == segment) {
                return false;
            }
        }
        int i = chosen.size();
        if (i == handles.length) {
            handles = java.util.Arrays.copyOf(handles, i * 2);
            offsets = java.util.Arrays.copyOf(offsets, i * 2);
        }
        long handle = segment.allocate(size, key, offsets, i);
        if (handle < 0) {
            return false;
        }
        chosen.add(segment);
        handles[i] = handle;
        return true;
    }

    @Override
    public int remaining() {
        return wanted - chosen.size();
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
        return chosen.size();
    }

    MountedSegment segment(int i) {
        return chosen.get(i);
    }

    long handle(int i) {
        return handles[i];
    }

    /** The offset of the buffer placed on {@link #segment}{@code (i)}. */
    long offset(int i) {
        return offsets[i];
    }

    /** Frees everything placed so far (used when the put is abandoned). */
    void rollback() {
        for (int i = 0; i < chosen.size(); i++) {
            chosen.get(i).free(handles[i]);
        }
        chosen.clear();
    }
}
