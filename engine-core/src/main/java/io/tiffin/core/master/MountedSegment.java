package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.allocator.OffsetAllocator;

/**
 * One memory segment mounted at the master: its identity and the {@link OffsetAllocator} that hands
 * out its offsets. The master never touches the segment's bytes; it only manages offsets.
 *
 * <p>Thread-safe: allocation and free are serialised on this object's monitor; the statistics read
 * by allocation strategies are volatile snapshots refreshed after every change, so a strategy sees a
 * consistent-enough view without taking the lock. Once {@link #markUnmounted()} has run, allocations
 * fail and frees are ignored (the allocator is discarded with the segment).
 */
final class MountedSegment implements SegmentView {
    private final String name;
    private final String nodeId;
    private final String endpoint;
    private final long capacity;
    private final long incarnation;
    private final OffsetAllocator allocator;

    /** The node's current mount of this segment; see {@link #mountEpoch()}. */
    private volatile long mountEpoch;
    private volatile SegmentStatus status = SegmentStatus.OK;
    private volatile long used;
    private volatile long largestFree;

    MountedSegment(String name, String nodeId, String endpoint, long capacity, long incarnation, long mountEpoch) {
        this.name = name;
        this.mountEpoch = mountEpoch;
        this.incarnation = incarnation;
        this.nodeId = nodeId;
        this.endpoint = endpoint;
        this.capacity = capacity;
        this.allocator = new OffsetAllocator(capacity);
        this.largestFree = allocator.largestFreeRegion();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String nodeId() {
        return nodeId;
    }

    String endpoint() {
        return endpoint;
    }

    /** The run of the node that mounted it (random per process; 0 = unknown). */
    long incarnation() {
        return incarnation;
    }

    /**
     * The epoch the node chose for its latest mount of this segment (0 = unknown), stamped on every
     * descriptor handed out; the node refuses data-plane requests of other epochs.
     */
    long mountEpoch() {
        return mountEpoch;
    }

    /** A repeated mount of a segment the master still knows: later descriptors carry the new epoch. */
    void mountedAgain(long epoch) {
        if (epoch != 0) {
            mountEpoch = epoch;
        }
    }

    @Override
    public SegmentStatus status() {
        return status;
    }

    boolean isMounted() {
        return status != SegmentStatus.UNMOUNTING;
    }

    @Override
    public long capacity() {
        return capacity;
    }

    @Override
    public long used() {
        return used;
    }

    @Override
    public long largestFreeRegion() {
        return largestFree;
    }

    @Override
    public int binCount() {
        return OffsetAllocator.NUM_BINS;
    }

    @Override
    public synchronized int freeRegionsInBin(int bin) {
        return allocator.freeRegionsInBin(bin);
    }

    @Override
    public long binSize(int bin) {
        return allocator.binSizeBytes(bin);
    }

    /**
     * Every allocation is rounded up to a multiple of this many bytes, so every object starts on a
     * 64-byte boundary of its segment (segments are page-aligned): the wire protocol puts a value's
     * bytes on a 64-byte boundary of the stream, and the kernel copies a socket's data at about half
     * speed when source and destination are mutually misaligned (docs/experiments/HISTORY.md, "64-byte aligned frames"). A small object
     * therefore does not shift every later object off the boundary. Costs at most 63 bytes per object.
     */
    static final long ALIGNMENT = 64;

    /**
     * Allocates {@code size} bytes (rounded up to {@link #ALIGNMENT}); returns the allocator handle, or
     * -1 when the segment has no room or is not accepting allocations.
     */
    synchronized long allocate(long size) {
        if (status != SegmentStatus.OK || size > largestFree) {
            return -1; // also keeps the rounding below from overflowing
        }
        long aligned = (size + ALIGNMENT - 1) & -ALIGNMENT;
        if (aligned > largestFree) {
            return -1;
        }
        long handle = allocator.allocate(aligned);
        if (handle >= 0) {
            refreshStats();
        }
        return handle;
    }

    synchronized long offset(long handle) {
        return allocator.offset(handle);
    }

    /** Frees a handle returned by {@link #allocate}; ignored once the segment is unmounted. */
    synchronized void free(long handle) {
        if (status == SegmentStatus.UNMOUNTING) {
            return;
        }
        allocator.free(handle);
        refreshStats();
    }

    synchronized void markUnmounted() {
        status = SegmentStatus.UNMOUNTING;
        used = 0;
        largestFree = 0;
    }

    synchronized void setDraining(boolean draining) {
        if (status != SegmentStatus.UNMOUNTING) {
            status = draining ? SegmentStatus.DRAINING : SegmentStatus.OK;
        }
    }

    private void refreshStats() {
        used = allocator.usedBytes();
        largestFree = allocator.largestFreeRegion();
    }

    @Override
    public String toString() {
        return name + "@" + endpoint + " (node " + nodeId + ", " + status + ")";
    }
}
