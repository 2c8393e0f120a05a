package io.tiffin.bench;

import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.allocator.OffsetAllocator;

/**
 * A simulated segment of the allocation benchmark: an {@link OffsetAllocator} and nothing else (no
 * memory), seen by strategies through {@link SegmentView}. Like Mooncake's {@code OffsetBufferAllocator}
 * it also keeps the sum of <i>requested</i> sizes, which the benchmark's utilisation figures use.
 *
 * <p>Not thread-safe: the benchmark is single-threaded and takes no locks.
 */
final class BenchSegment implements SegmentView {
    final int index;
    final OffsetAllocator allocator;
    private final String name;
    private final String nodeId;
    /** Sum of requested (unrounded) sizes of the live allocations. */
    long requested;

    BenchSegment(int index, String name, String nodeId, long capacity) {
        this.index = index;
        this.name = name;
        this.nodeId = nodeId;
        this.allocator = new OffsetAllocator(capacity);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    @Override
    public SegmentStatus status() {
        return SegmentStatus.OK;
    }

    @Override
    public long capacity() {
        return allocator.capacity();
    }

    @Override
    public long used() {
        return allocator.usedBytes();
    }

    @Override
    public long free() {
        return allocator.freeBytes();
    }

    @Override
    public long largestFreeRegion() {
        return allocator.largestFreeRegion();
    }

    @Override
    public int binCount() {
        return OffsetAllocator.NUM_BINS;
    }

    @Override
    public int freeRegionsInBin(int bin) {
        return allocator.freeRegionsInBin(bin);
    }

    @Override
    public long binSize(int bin) {
        return allocator.binSizeBytes(bin);
    }

    /** Utilisation as Mooncake's benchmark reports it: requested bytes / capacity. */
    double utilisation() {
        return (double) requested / allocator.capacity();
    }

    @Override
    public String toString() {
        return name;
    }
}
