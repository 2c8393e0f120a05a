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
    private final List<Long> handles = new ArrayList<>(2);
    private int attempts;

    /** A sink for {@code wanted} replicas of {@code size} bytes of the object of {@code key}. */
    SegmentReplicaSink(long size, String key, int wanted, RandomGenerator random) {
        this.size = size;
        this.key = key;
        this.wanted = wanted;
        this.random = random == null ? ThreadLocalRandom.current() : random;
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
        long handle = segment.allocate(size, key);
        if (handle < 0) {
            return false;
        }
        chosen.add(segment);
        handles.add(handle);
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
        return handles.get(i);
    }

    /** Frees everything placed so far (used when the put is abandoned). */
    void rollback() {
        for (int i = 0; i < chosen.size(); i++) {
            chosen.get(i).free(handles.get(i));
        }
        chosen.clear();
        handles.clear();
    }
}
