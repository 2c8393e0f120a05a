package io.tiffin.api.spi.allocation;

/**
 * A read-only view of one mounted memory segment, as an {@link AllocationStrategy} sees it. The master
 * passes its own segment objects, not copies, so the values are live: other placements and frees run at
 * the same time, and usage, free sizes and status may change while the strategy runs, even between two
 * reads in one decision (read each once per decision). {@link ReplicaSink#tryPlace} is the authority on
 * whether a replica fits. The name, node id, capacity and bin sizes never change.
 *
 * <p>Sizes are in bytes. "Bins" are the offset allocator's size classes (256 of them: a 3-bit-mantissa
 * floating-point size class); {@link #binSize(int)} gives each bin's lower size bound.
 *
 * <p>Thread-safety: the master's views may be read from any thread without locking (they publish their
 * statistics through volatile fields; {@link #freeRegionsInBin} takes the segment's lock briefly), so a
 * strategy called from many threads at once needs no locking of its own. Test doubles (the plugin test
 * kit's {@code SimulatedSegment}) are built and read on one thread.
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
