package io.tiffin.core.allocator;

import java.util.Arrays;

/**
 * O(1) offset allocator for a contiguous range of {@code capacity()} bytes. It hands out offsets
 * only; it owns no memory.
 *
 * <p>This is a Java port of Sebastian Aaltonen's OffsetAllocator (MIT licence,
 * https://github.com/sebbbi/OffsetAllocator), including the modifications made in Mooncake Store:
 *
 * <ul>
 *   <li>Free regions are kept in 256 size classes ("bins") shaped like a small floating-point
 *       number with 3 mantissa bits, so a bin's lower bound is {@code (8 + m) << (e - 1)} for
 *       exponent {@code e} and mantissa {@code m} (and exactly {@code m} for sizes below 8). A
 *       two-level bitmask finds the smallest non-empty bin that can hold a request in O(1).
 *   <li>Mooncake's round-up: every allocation is rounded up to the lower bound of the bin its size
 *       rounds up to. A freed block that cannot be merged therefore returns to exactly the bin that
 *       later requests of the same size search, so uniform workloads do not fragment.
 *   <li>Mooncake's large-capacity scaling: internally the allocator works in units of
 *       {@code 2^multiplierBits} bytes, where {@code multiplierBits} is the smallest shift that
 *       brings the capacity down to at most {@link #MAX_BIN_SIZE} units. All public sizes and
 *       offsets are in bytes; requests are rounded up to whole units (for example a 64 GiB
 *       allocator uses 32-byte units).
 *   <li>Node storage grows on demand (by half each time, as {@code ArrayList} does: 18% of it unused on
 *       average where doubling leaves 28%, at 29 bytes a node), from {@value #INITIAL_NODES} nodes up to
 *       {@code clamp(capacity / 1024, 1Mi, 64Mi)} nodes, so an empty allocator costs about 2 KB
 *       whatever its capacity (a master holds one per mounted segment). When no node is left for
 *       splitting a free region, {@link #allocate(long)} fails with {@link #NO_SPACE}.
 * </ul>
 *
 * <p>Nodes are stored as parallel primitive arrays (no object per node). An allocation handle is
 * the index of the node that describes the allocation; it stays valid until it is freed and may
 * then be reused for a later allocation.
 *
 * <p>Request sizes are matched to bins, not to exact free-region sizes: a request succeeds exactly
 * when its rounded size is no larger than the lower bound of the highest non-empty bin, which is
 * what {@link #largestFreeRegion()} reports. In particular, when the capacity is not itself a bin
 * size, a single request for the whole capacity does not fit.
 *
 * <p>The size classes' small-float encoding is {@link SizeClasses}'; this class keeps the bins, the node
 * arrays and the restore of a takeover, which share one set of invariants.
 *
 * <p><b>Not thread-safe.</b> Callers must synchronise all access to an instance externally.
 */
public final class OffsetAllocator {

    /** Value returned by {@link #allocate(long)} when the request cannot be satisfied. */
    public static final long NO_SPACE = -1L;

    /** Number of size-class bins. */
    public static final int NUM_BINS = 256;

    /** Largest capacity, in internal units, that an allocator manages without scaling (3.75 GiB). */
    public static final long MAX_BIN_SIZE = 4_026_531_840L;

    private static final int NUM_TOP_BINS = 32;
    private static final int BINS_PER_LEAF = 8;
    private static final int TOP_BINS_INDEX_SHIFT = 3;
    private static final int LEAF_BINS_INDEX_MASK = BINS_PER_LEAF - 1;


    /** Nodes at first: 29 bytes each; a segment with few objects should cost little. */
    static final int INITIAL_NODES = 64;
    private static final int MIN_MAX_NODES = 1 << 20;
    private static final int MAX_MAX_NODES = 1 << 26;

    private static final int UNUSED = -1;

    private final int multiplierBits;
    private final long scaledCapacity;
    private final int maxNodes;

    // Node fields, indexed by node. Offsets and sizes are unsigned 32-bit values in internal units.
    private int[] nodeOffset;
    private int[] nodeSize;
    private int[] binListPrev;
    private int[] binListNext;
    private int[] neighborPrev;
    private int[] neighborNext;
    private boolean[] nodeUsed;
    private int nodeCapacity;

    // Stack of node indices that describe nothing and can be reused.
    private int[] freeNodes;
    private int freeNodeCount;

    private int usedBinsTop;
    private final int[] usedBins = new int[NUM_TOP_BINS];
    private final int[] binHeads = new int[NUM_BINS];
    private final int[] binCounts = new int[NUM_BINS];

    private long freeStorage;
    private int allocationCount;

    /**
     * Creates an allocator for {@code capacityBytes} bytes with the default node limits: initially
     * {@value #INITIAL_NODES} nodes, growing up to
     * {@code clamp(capacityBytes / 1024, 1Mi, 64Mi)} nodes.
     *
     * @param capacityBytes size of the managed range in bytes; must be positive
     * @throws IllegalArgumentException if {@code capacityBytes <= 0}
     */
    public OffsetAllocator(long capacityBytes) {
        this(capacityBytes, clamp(capacityBytes / 1024, MIN_MAX_NODES, MAX_MAX_NODES));
    }

    /**
     * Creates an allocator for {@code capacityBytes} bytes that uses at most {@code maxNodes} nodes.
     * Every allocation and every free region occupies one node, so {@code maxNodes} bounds the
     * number of pieces the range can be split into.
     *
     * @param capacityBytes size of the managed range in bytes; must be positive
     * @param maxNodes maximum number of nodes; must be positive
     * @throws IllegalArgumentException if {@code capacityBytes <= 0} or {@code maxNodes <= 0}
     */
    public OffsetAllocator(long capacityBytes, int maxNodes) {
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacityBytes must be positive: " + capacityBytes);
        }
        if (maxNodes <= 0) {
            throw new IllegalArgumentException("maxNodes must be positive: " + maxNodes);
        }
        int bits = 0;
        while ((capacityBytes >>> bits) > MAX_BIN_SIZE) {
            bits++;
        }
        this.multiplierBits = bits;
        this.scaledCapacity = capacityBytes >>> bits;
        this.maxNodes = maxNodes;
        this.nodeCapacity = Math.min(INITIAL_NODES, maxNodes);
        this.nodeOffset = new int[nodeCapacity];
        this.nodeSize = new int[nodeCapacity];
        this.binListPrev = new int[nodeCapacity];
        this.binListNext = new int[nodeCapacity];
        this.neighborPrev = new int[nodeCapacity];
        this.neighborNext = new int[nodeCapacity];
        this.nodeUsed = new boolean[nodeCapacity];
        this.freeNodes = new int[nodeCapacity];
        reset();
    }

    /**
     * Frees every allocation, leaving the whole capacity as one free region. All previously
     * returned handles become invalid. Node storage that has already grown is kept.
     */
    public void reset() {
        usedBinsTop = 0;
        Arrays.fill(usedBins, 0);
        Arrays.fill(binHeads, UNUSED);
        Arrays.fill(binCounts, 0);
        Arrays.fill(nodeUsed, false);
        freeStorage = 0;
        allocationCount = 0;
        // The stack pops from the end, so push in reverse to hand out node 0 first.
        for (int i = 0; i < nodeCapacity; i++) {
            freeNodes[i] = nodeCapacity - 1 - i;
        }
        freeNodeCount = nodeCapacity;
        insertNodeIntoBin(scaledCapacity, 0);
    }

    /**
     * Allocates a region of at least {@code size} bytes. The region actually reserved is
     * {@code size} rounded up to the allocator's unit and then to its size class; see
     * {@link #allocatedSize(long)}. Runs in O(1) (amortised, as node storage may grow).
     *
     * @param size requested size in bytes; must be positive
     * @return a non-negative allocation handle, or {@link #NO_SPACE} if no free region of the
     *     required size class exists or no node is left to describe the split
     * @throws IllegalArgumentException if {@code size <= 0}
     */
    public long allocate(long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("allocation size must be positive: " + size);
        }
        if (size > capacity()) {
            return NO_SPACE;
        }
        long scaledSize = ((size - 1) >>> multiplierBits) + 1;
        int minBinIndex = SizeClasses.roundUp(scaledSize);
        long roundedSize = SizeClasses.lowerBound(minBinIndex);
        if (roundedSize > scaledCapacity) {
            return NO_SPACE;
        }
        int binIndex = findNonEmptyBinAtOrAbove(minBinIndex);
        if (binIndex == UNUSED) {
            return NO_SPACE;
        }
        int nodeIndex = binHeads[binIndex];
        long nodeTotalSize = size(nodeIndex);
        long remainderSize = nodeTotalSize - roundedSize;
        if (remainderSize > 0 && !ensureFreeNode()) {
            return NO_SPACE;
        }

        unlinkFromBin(nodeIndex, binIndex);
        nodeUsed[nodeIndex] = true;
        nodeSize[nodeIndex] = (int) roundedSize;
        allocationCount++;

        if (remainderSize > 0) {
            int remainderIndex = insertNodeIntoBin(remainderSize, offset(nodeIndex) + roundedSize);
            int next = neighborNext[nodeIndex];
            if (next != UNUSED) {
                neighborPrev[next] = remainderIndex;
            }
            neighborPrev[remainderIndex] = nodeIndex;
            neighborNext[remainderIndex] = next;
            neighborNext[nodeIndex] = remainderIndex;
        }
        return nodeIndex;
    }

    /**
     * Rebuilds the allocator to hold exactly the allocations {@code (offsets[i], sizes[i])} as {@link #allocate}
     * reserves them (same rounding): a master taking over a segment learns its used space from the node's
     * objects. Earlier handles become invalid. O(n log n).
     *
     * @return per allocation its handle, or {@link #NO_SPACE} where it overlaps one at a lower offset or does not fit
     */
    public long[] restore(long[] offsets, long[] sizes) {
        reset();
        removeNodeFromBin(binHeads[SizeClasses.roundDown(scaledCapacity)]); // the one free region
        Integer[] order = java.util.stream.IntStream.range(0, offsets.length).boxed()
                .sorted((a, b) -> Long.compare(offsets[a], offsets[b])).toArray(Integer[]::new);
        long[] handles = new long[offsets.length];
        Arrays.fill(handles, NO_SPACE);
        long cursor = 0;
        int last = UNUSED;
        for (int i : order) {
            long scaledOffset = offsets[i] >>> multiplierBits;
            long rounded = sizes[i] <= 0 ? 0 : SizeClasses.lowerBound(SizeClasses.roundUp(((sizes[i] - 1) >>> multiplierBits) + 1));
            if (rounded == 0 || (offsets[i] & ((1L << multiplierBits) - 1)) != 0 || scaledOffset < cursor
                    || scaledOffset + rounded > scaledCapacity || !ensureFreeNodes(2)) {
                continue;
            }
            if (scaledOffset > cursor) {
                last = link(last, insertNodeIntoBin(scaledOffset - cursor, cursor));
            }
            int node = freeNodes[--freeNodeCount];
            nodeOffset[node] = (int) scaledOffset;
            nodeSize[node] = (int) rounded;
            nodeUsed[node] = true;
            binListPrev[node] = binListNext[node] = UNUSED;
            allocationCount++;
            last = link(last, node);
            handles[i] = node;
            cursor = scaledOffset + rounded;
        }
        if (cursor < scaledCapacity) {
            link(last, insertNodeIntoBin(scaledCapacity - cursor, cursor));
        }
        return handles;
    }

    /** Makes {@code node} the physical successor of {@code last} (UNUSED = first); returns {@code node}. */
    private int link(int last, int node) {
        neighborPrev[node] = last;
        neighborNext[node] = UNUSED;
        if (last != UNUSED) {
            neighborNext[last] = node;
        }
        return node;
    }

    /**
     * Frees an allocation, merging it with free physically adjacent regions. Runs in O(1).
     *
     * @param handle a handle returned by {@link #allocate(long)} and not freed since
     * @throws IllegalStateException if {@code handle} does not denote a live allocation (for example
     *     because it was already freed)
     */
    public void free(long handle) {
        int nodeIndex = liveNode(handle);
        long offset = offset(nodeIndex);
        long size = size(nodeIndex);
        int prev = neighborPrev[nodeIndex];
        int next = neighborNext[nodeIndex];

        if (prev != UNUSED && !nodeUsed[prev]) {
            offset = offset(prev);
            size += size(prev);
            int prevPrev = neighborPrev[prev];
            removeNodeFromBin(prev);
            prev = prevPrev;
        }
        if (next != UNUSED && !nodeUsed[next]) {
            size += size(next);
            int nextNext = neighborNext[next];
            removeNodeFromBin(next);
            next = nextNext;
        }

        nodeUsed[nodeIndex] = false;
        allocationCount--;
        pushFreeNode(nodeIndex);

        int merged = insertNodeIntoBin(size, offset);
        neighborPrev[merged] = prev;
        neighborNext[merged] = next;
        if (prev != UNUSED) {
            neighborNext[prev] = merged;
        }
        if (next != UNUSED) {
            neighborPrev[next] = merged;
        }
    }

    /**
     * Returns the byte offset of a live allocation within the managed range.
     *
     * @param handle a live allocation handle
     * @return the offset in bytes, a multiple of {@link #granularity()}
     * @throws IllegalStateException if {@code handle} does not denote a live allocation
     */
    public long offset(long handle) {
        return offset(liveNode(handle)) << multiplierBits;
    }

    /**
     * Returns the number of bytes reserved for a live allocation: the requested size rounded up to
     * the allocator's unit and size class.
     *
     * @param handle a live allocation handle
     * @return the reserved size in bytes
     * @throws IllegalStateException if {@code handle} does not denote a live allocation
     */
    public long allocatedSize(long handle) {
        return size(liveNode(handle)) << multiplierBits;
    }

    /**
     * Returns the managed capacity in bytes: the constructor's capacity rounded down to a multiple of
     * {@link #granularity()}.
     *
     * @return the capacity in bytes
     */
    public long capacity() {
        return scaledCapacity << multiplierBits;
    }

    /**
     * Returns the allocation unit in bytes, {@code 2^multiplierBits}. Every offset and allocated
     * size is a multiple of it.
     *
     * @return the unit in bytes (1 for capacities up to {@link #MAX_BIN_SIZE})
     */
    public long granularity() {
        return 1L << multiplierBits;
    }

    /**
     * Returns the sum of the reserved (rounded) sizes of all live allocations.
     *
     * @return used bytes
     */
    public long usedBytes() {
        return (scaledCapacity - freeStorage) << multiplierBits;
    }

    /**
     * Returns the total size of all free regions, which may be fragmented.
     *
     * @return free bytes, equal to {@code capacity() - usedBytes()}
     */
    public long freeBytes() {
        return freeStorage << multiplierBits;
    }

    /**
     * Returns the largest request size, in bytes, that {@link #allocate(long)} can currently
     * satisfy: the lower bound of the highest non-empty bin. For every {@code n > 0},
     * {@code allocate(n)} finds a region if and only if {@code n <= largestFreeRegion()}, so this is
     * an exact fast-fail check (the allocation can still fail if node storage is exhausted). It
     * can be up to one size class (about 12.5%) below the largest contiguous free span. Runs in
     * O(1).
     *
     * @return the largest allocatable size in bytes, or 0 if nothing is free
     */
    public long largestFreeRegion() {
        if (usedBinsTop == 0) {
            return 0;
        }
        int topBinIndex = 31 - Integer.numberOfLeadingZeros(usedBinsTop);
        int leafBinIndex = 31 - Integer.numberOfLeadingZeros(usedBins[topBinIndex]);
        return SizeClasses.lowerBound((topBinIndex << TOP_BINS_INDEX_SHIFT) | leafBinIndex) << multiplierBits;
    }

    /**
     * Returns the number of live allocations.
     *
     * @return the allocation count
     */
    public int allocationCount() {
        return allocationCount;
    }

    /**
     * Returns the number of free regions currently kept in a bin. Runs in O(1).
     *
     * @param bin a bin index in {@code [0, NUM_BINS)}
     * @return the number of free regions in that bin
     * @throws IllegalArgumentException if {@code bin} is out of range
     */
    public int freeRegionsInBin(int bin) {
        checkBin(bin);
        return binCounts[bin];
    }

    /**
     * Returns the lower bound of a bin in internal units (bytes when no scaling applies). Free
     * regions in bin {@code b} have sizes in {@code [binSize(b), binSize(b + 1))}.
     *
     * @param bin a bin index in {@code [0, NUM_BINS)}
     * @return the bin's lower bound in internal units
     * @throws IllegalArgumentException if {@code bin} is out of range
     */
    public static long binSize(int bin) {
        checkBin(bin);
        return SizeClasses.lowerBound(bin);
    }

    /**
     * Returns the lower bound of a bin in bytes for this allocator, that is {@link #binSize(int)}
     * scaled by {@link #granularity()}, saturating at {@link Long#MAX_VALUE}.
     *
     * @param bin a bin index in {@code [0, NUM_BINS)}
     * @return the bin's lower bound in bytes
     * @throws IllegalArgumentException if {@code bin} is out of range
     */
    public long binSizeBytes(int bin) {
        long units = binSize(bin);
        if (units > (Long.MAX_VALUE >>> multiplierBits)) {
            return Long.MAX_VALUE;
        }
        return units << multiplierBits;
    }

    // ---------------------------------------------------------------------------------------------
    // Bins and nodes.

    private int findNonEmptyBinAtOrAbove(int minBinIndex) {
        int minTopBinIndex = minBinIndex >>> TOP_BINS_INDEX_SHIFT;
        int minLeafBinIndex = minBinIndex & LEAF_BINS_INDEX_MASK;
        if ((usedBinsTop & (1 << minTopBinIndex)) != 0) {
            int leafBits = usedBins[minTopBinIndex] & (-1 << minLeafBinIndex);
            if (leafBits != 0) {
                return (minTopBinIndex << TOP_BINS_INDEX_SHIFT) | Integer.numberOfTrailingZeros(leafBits);
            }
        }
        if (minTopBinIndex + 1 >= NUM_TOP_BINS) {
            return UNUSED;
        }
        int topBits = usedBinsTop & (-1 << (minTopBinIndex + 1));
        if (topBits == 0) {
            return UNUSED;
        }
        // Every leaf of a higher top bin fits the request, so take its lowest non-empty leaf.
        int topBinIndex = Integer.numberOfTrailingZeros(topBits);
        return (topBinIndex << TOP_BINS_INDEX_SHIFT) | Integer.numberOfTrailingZeros(usedBins[topBinIndex]);
    }

    /** Takes a node from the free-node stack and pushes it as a free region onto its bin. */
    private int insertNodeIntoBin(long size, long offset) {
        int binIndex = SizeClasses.roundDown(size);
        int nodeIndex = freeNodes[--freeNodeCount];
        int head = binHeads[binIndex];
        if (head == UNUSED) {
            usedBins[binIndex >>> TOP_BINS_INDEX_SHIFT] |= 1 << (binIndex & LEAF_BINS_INDEX_MASK);
            usedBinsTop |= 1 << (binIndex >>> TOP_BINS_INDEX_SHIFT);
        } else {
            binListPrev[head] = nodeIndex;
        }
        nodeOffset[nodeIndex] = (int) offset;
        nodeSize[nodeIndex] = (int) size;
        nodeUsed[nodeIndex] = false;
        binListPrev[nodeIndex] = UNUSED;
        binListNext[nodeIndex] = head;
        neighborPrev[nodeIndex] = UNUSED;
        neighborNext[nodeIndex] = UNUSED;
        binHeads[binIndex] = nodeIndex;
        binCounts[binIndex]++;
        freeStorage += size;
        return nodeIndex;
    }

    /** Removes a free region from its bin and returns its node to the free-node stack. */
    private void removeNodeFromBin(int nodeIndex) {
        unlinkFromBin(nodeIndex, SizeClasses.roundDown(size(nodeIndex)));
        pushFreeNode(nodeIndex);
    }

    private void unlinkFromBin(int nodeIndex, int binIndex) {
        int prev = binListPrev[nodeIndex];
        int next = binListNext[nodeIndex];
        if (prev != UNUSED) {
            binListNext[prev] = next;
        } else {
            binHeads[binIndex] = next;
        }
        if (next != UNUSED) {
            binListPrev[next] = prev;
        }
        binListPrev[nodeIndex] = UNUSED;
        binListNext[nodeIndex] = UNUSED;
        binCounts[binIndex]--;
        if (binHeads[binIndex] == UNUSED) {
            int topBinIndex = binIndex >>> TOP_BINS_INDEX_SHIFT;
            usedBins[topBinIndex] &= ~(1 << (binIndex & LEAF_BINS_INDEX_MASK));
            if (usedBins[topBinIndex] == 0) {
                usedBinsTop &= ~(1 << topBinIndex);
            }
        }
        freeStorage -= size(nodeIndex);
    }

    private void pushFreeNode(int nodeIndex) {
        freeNodes[freeNodeCount++] = nodeIndex;
    }

    /** Makes sure the free-node stack is non-empty, growing node storage if allowed. */
    private boolean ensureFreeNode() {
        return ensureFreeNodes(1);
    }

    /** Grows node storage until {@code n} nodes are free; false if {@code maxNodes} does not allow it. */
    private boolean ensureFreeNodes(int n) {
        while (freeNodeCount < n) {
            if (!grow()) {
                return false;
            }
        }
        return true;
    }

    private boolean grow() {
        if (nodeCapacity >= maxNodes) {
            return false;
        }
        int newCapacity = (int) Math.min(nodeCapacity + (nodeCapacity >> 1) + 1L, maxNodes);
        nodeOffset = Arrays.copyOf(nodeOffset, newCapacity);
        nodeSize = Arrays.copyOf(nodeSize, newCapacity);
        binListPrev = Arrays.copyOf(binListPrev, newCapacity);
        binListNext = Arrays.copyOf(binListNext, newCapacity);
        neighborPrev = Arrays.copyOf(neighborPrev, newCapacity);
        neighborNext = Arrays.copyOf(neighborNext, newCapacity);
        nodeUsed = Arrays.copyOf(nodeUsed, newCapacity);
        freeNodes = Arrays.copyOf(freeNodes, newCapacity);
        for (int i = newCapacity - 1; i >= nodeCapacity; i--) {
            freeNodes[freeNodeCount++] = i;
        }
        nodeCapacity = newCapacity;
        return true;
    }

    private int liveNode(long handle) {
        if (handle < 0 || handle >= nodeCapacity || !nodeUsed[(int) handle]) {
            throw new IllegalStateException("not a live allocation handle: " + handle);
        }
        return (int) handle;
    }

    private long offset(int nodeIndex) {
        return Integer.toUnsignedLong(nodeOffset[nodeIndex]);
    }

    private long size(int nodeIndex) {
        return Integer.toUnsignedLong(nodeSize[nodeIndex]);
    }

    private static void checkBin(int bin) {
        if (bin < 0 || bin >= NUM_BINS) {
            throw new IllegalArgumentException("bin must be in [0, " + NUM_BINS + "): " + bin);
        }
    }

    /** Nodes the arrays hold now (used or not). */
    int nodeCapacity() {
        return nodeCapacity;
    }

    private static int clamp(long value, int min, int max) {
        return (int) Math.max(min, Math.min(max, value));
    }

    // ---------------------------------------------------------------------------------------------
    // Consistency check for tests.

    /**
     * Walks every internal structure and throws {@link AssertionError} on any inconsistency:
     * physical regions must tile {@code [0, capacity)} without two adjacent free regions, and the
     * bins, bitmasks, counters and free-node stack must agree with them. O(nodes).
     */
    void verifyInvariants() {
        boolean[] onStack = new boolean[nodeCapacity];
        for (int i = 0; i < freeNodeCount; i++) {
            check(!onStack[freeNodes[i]], "node twice on free stack");
            onStack[freeNodes[i]] = true;
        }
        int head = UNUSED;
        int liveNodes = 0;
        for (int i = 0; i < nodeCapacity; i++) {
            if (!onStack[i]) {
                liveNodes++;
                if (neighborPrev[i] == UNUSED) {
                    check(head == UNUSED, "two physical chain heads");
                    head = i;
                }
            }
        }
        check(head != UNUSED, "no physical chain head");
        long expectedOffset = 0;
        long free = 0;
        int used = 0;
        int visited = 0;
        int[] counts = new int[NUM_BINS];
        boolean previousFree = false;
        for (int node = head; node != UNUSED; node = neighborNext[node]) {
            check(!onStack[node], "stacked node in physical chain");
            check(offset(node) == expectedOffset, "gap or overlap at node " + node);
            check(size(node) > 0, "empty node " + node);
            if (neighborNext[node] != UNUSED) {
                check(neighborPrev[neighborNext[node]] == node, "broken neighbour link at " + node);
            }
            if (nodeUsed[node]) {
                used++;
                previousFree = false;
            } else {
                check(!previousFree, "two adjacent free regions at " + node);
                free += size(node);
                counts[SizeClasses.roundDown(size(node))]++;
                previousFree = true;
            }
            expectedOffset += size(node);
            visited++;
        }
        check(visited == liveNodes, "unreachable nodes");
        check(expectedOffset == scaledCapacity, "regions do not cover the capacity");
        check(free == freeStorage, "free storage counter mismatch");
        check(used == allocationCount, "allocation count mismatch");
        for (int bin = 0; bin < NUM_BINS; bin++) {
            int n = 0;
            int prev = UNUSED;
            for (int node = binHeads[bin]; node != UNUSED; node = binListNext[node]) {
                check(!nodeUsed[node] && !onStack[node], "non-free node in bin " + bin);
                check(binListPrev[node] == prev, "broken bin link in bin " + bin);
                check(SizeClasses.roundDown(size(node)) == bin, "node in wrong bin " + bin);
                prev = node;
                n++;
            }
            check(n == counts[bin] && n == binCounts[bin], "bin count mismatch in bin " + bin);
            int leafMask = usedBins[bin >>> TOP_BINS_INDEX_SHIFT];
            boolean leafBit = (leafMask & (1 << (bin & LEAF_BINS_INDEX_MASK))) != 0;
            check(leafBit == (n > 0), "leaf mask mismatch in bin " + bin);
        }
        for (int top = 0; top < NUM_TOP_BINS; top++) {
            check(((usedBinsTop >>> top) & 1) == (usedBins[top] != 0 ? 1 : 0), "top mask mismatch " + top);
        }
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new AssertionError(message);
        }
    }
}
