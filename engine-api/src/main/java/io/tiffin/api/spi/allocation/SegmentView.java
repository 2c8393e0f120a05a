package io.tiffin.api.spi.allocation;

/**
 * A read-only view of one mounted memory segment, as an {@link AllocationStrategy} sees it. The values
 * are live: other placements and frees run at the same time, so usage and free sizes may change while
 * the strategy runs (read each once per decision); {@link ReplicaSink#tryPlace} is the authority on
 * whether a replica fits.
 *
 * <p>Sizes are in bytes. "Bins" are the offset allocator's size classes (256 of them: a 3-bit-mantissa
 * floating-point size class); {@link #binSize(int)} gives each bin's lower size bound.
 *
 * <p>Implementations are immutable for the duration of a call and may be read from the calling thread
 * only.
 */
public interface SegmentView {
    /** The segment's unique name. */
    String name();

    /** Id of the node that owns the segment's memory. */
    String nodeId();

    SegmentStatus status();

    /** Total bytes the segment can hold. */
    long capacity();

    /** Bytes allocated (sum of allocation sizes, as rounded by the allocator). */
    long used();

    /** Bytes free: {@code capacity() - used()}. */
    default long free() {
        return capacity() - used();
    }

    /** Size of the largest contiguous free region: no allocation larger than this can succeed. */
    long largestFreeRegion();

    /** Number of size-class bins the allocator uses. */
    int binCount();

    /** Number of free regions currently filed under {@code bin}. */
    int freeRegionsInBin(int bin);

    /** The smallest region size filed under {@code bin}. */
    long binSize(int bin);

    /** Free fraction in [0, 1]. */
    default double freeRatio() {
        return capacity() == 0 ? 0.0 : (double) free() / capacity();
    }
}
