package io.tiffin.api.spi.allocation;

import java.util.random.RandomGenerator;

/**
 * Where an {@link AllocationStrategy} places replicas. The core implements it: {@link #tryPlace} asks
 * the core to allocate one replica on a segment, under the core's locks, and reports whether it did.
 *
 * <p>The sink enforces the invariants every placement must keep: it refuses a segment that already
 * holds a replica of this object, a segment that is not {@link SegmentStatus#OK}, and any placement
 * once {@link #remaining()} is zero. Not thread-safe: used by one thread, for one placement call only.
 */
public interface ReplicaSink {
    /**
     * Tries to allocate one replica on {@code segment}. Returns true if a replica now lives there;
     * false if the segment had no room, was not OK, already held a replica, or no more replicas are
     * wanted.
     */
    boolean tryPlace(SegmentView segment);

    /** Replicas still wanted; the strategy may stop once this is zero. */
    int remaining();

    /** How many {@link #tryPlace} calls the strategy has made so far. */
    int attempts();

    /** A random source for the strategy (seeded in benchmarks and tests, for repeatability). */
    RandomGenerator random();
}
