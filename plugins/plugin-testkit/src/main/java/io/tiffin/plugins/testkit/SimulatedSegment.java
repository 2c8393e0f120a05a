package io.tiffin.plugins.testkit;

import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A segment for strategy tests: a {@link SegmentView} backed by a simple first-fit interval allocator
 * over {@code [0, capacity)}. It depends on engine-api only, so a plugin's own tests can use it.
 *
 * <p>Free regions are filed into the same 256 size-class bins the core's offset allocator uses (a
 * floating-point size class with 3 mantissa bits), so strategies that read per-bin free counts see
 * realistic values; allocation itself is exact first fit (no rounding), which keeps the simulation
 * easy to reason about. {@link #largestFreeRegion()} is the exact largest free span.
 *
 * <p>Not thread-safe: a test builds and uses it on one thread.
 */
public final class SimulatedSegment implements SegmentView {
    /** Number of size-class bins, as in the core's offset allocator. */
    public static final int BIN_COUNT = 256;

    private final String name;
    private final String nodeId;
    private final long capacity;
    private final TreeMap<Long, Long> freeByOffset = new TreeMap<>();
    private final TreeMap<Long, Long> usedByOffset = new TreeMap<>();
    private SegmentStatus status = SegmentStatus.OK;
    private long used;

    /**
     * @param name unique segment name
     * @param nodeId id of the owning node
     * @param capacity bytes, &gt; 0
     */
    public SimulatedSegment(String name, String nodeId, long capacity) {
        this.name = Objects.requireNonNull(name, "name");
        this.nodeId = Objects.requireNonNull(nodeId, "nodeId");
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity = " + capacity + " (expected: > 0)");
        }
        this.capacity = capacity;
        freeByOffset.put(0L, capacity);
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
        return status;
    }

    /** Changes the segment's status (for example to {@link SegmentStatus#DRAINING}). */
    public void setStatus(SegmentStatus status) {
        this.status = Objects.requireNonNull(status, "status");
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
        long largest = 0;
        for (long size : freeByOffset.values()) {
            largest = Math.max(largest, size);
        }
        return largest;
    }

    @Override
    public int binCount() {
        return BIN_COUNT;
    }

    @Override
    public int freeRegionsInBin(int bin) {
        checkBin(bin);
        int n = 0;
        for (long size : freeByOffset.values()) {
            if (binOf(size) == bin) {
                n++;
            }
        }
        return n;
    }

    @Override
    public long binSize(int bin) {
        checkBin(bin);
        int exponent = bin >>> 3;
        long mantissa = bin & 7;
        return exponent == 0 ? mantissa : (mantissa | 8) << (exponent - 1);
    }

    /**
     * Allocates {@code size} bytes at the lowest offset that fits, regardless of {@link #status()}
     * (the simulation enforces nothing; tests check what strategies offer).
     *
     * @return the offset, or -1 if no free region is large enough
     */
    public long allocate(long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("size = " + size + " (expected: > 0)");
        }
        for (Map.Entry<Long, Long> e : freeByOffset.entrySet()) {
            if (e.getValue() >= size) {
                long offset = e.getKey();
                long rest = e.getValue() - size;
                freeByOffset.remove(offset);
                if (rest > 0) {
                    freeByOffset.put(offset + size, rest);
                }
                usedByOffset.put(offset, size);
                used += size;
                return offset;
            }
        }
        return -1;
    }

    /**
     * Frees the allocation at {@code offset}, merging it with free neighbours.
     *
     * @throws IllegalArgumentException if nothing is allocated at {@code offset}
     */
    public void free(long offset) {
        Long size = usedByOffset.remove(offset);
        if (size == null) {
            throw new IllegalArgumentException("offset = " + offset + " (expected: the offset of a live allocation)");
        }
        used -= size;
        long start = offset;
        long length = size;
        Map.Entry<Long, Long> before = freeByOffset.floorEntry(offset);
        if (before != null && before.getKey() + before.getValue() == offset) {
            start = before.getKey();
            length += before.getValue();
            freeByOffset.remove(before.getKey());
        }
        Long after = freeByOffset.remove(offset + size);
        if (after != null) {
            length += after;
        }
        freeByOffset.put(start, length);
    }

    /** Number of live allocations. */
    public int allocationCount() {
        return usedByOffset.size();
    }

    private static int binOf(long size) {
        if (size < 8) {
            return (int) size;
        }
        int highestSetBit = 63 - Long.numberOfLeadingZeros(size);
        int mantissaStartBit = highestSetBit - 3;
        return ((mantissaStartBit + 1) << 3) | (int) ((size >>> mantissaStartBit) & 7);
    }

    private static void checkBin(int bin) {
        if (bin < 0 || bin >= BIN_COUNT) {
            throw new IllegalArgumentException("bin = " + bin + " (expected: 0 <= bin < " + BIN_COUNT + ")");
        }
    }

    @Override
    public String toString() {
        return name + " (" + status + ", " + used + "/" + capacity + " used, largest free " + largestFreeRegion() + ")";
    }
}
