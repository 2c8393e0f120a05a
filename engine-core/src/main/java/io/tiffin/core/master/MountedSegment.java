package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.allocator.OffsetAllocator;
import io.tiffin.core.transport.DataAccessMac;

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
    /** log2 of the allocator's granularity: every offset here is a multiple of {@code 1 << offsetShift}. */
    private final int offsetShift;

    /** The node's current mount of this segment and its data-plane key; see {@link #mountEpoch()}. */
    private volatile Mount mount;
    private volatile SegmentStatus status = SegmentStatus.OK;
    private volatile long used;
    private volatile long largestFree;
    /**
     * Restored from the cluster facts by a master that took over: no objects and no allocations until its node
     * attaches and reports what it holds ({@link #attached}).
     */
    private volatile boolean awaitingAttach;
    /**
     * Unmounted and, with failover on, gone from the cluster facts: no master will restore it, so its node's
     * records can no longer bring objects back ({@link NodeForgets} counts its forgets as done).
     */
    private volatile boolean voided;
    /** With failover on: frees wait until the node dropped the object's record ({@link NodeForgets}); else null. */
    private volatile NodeForgets forgets;
    /**
     * The key of the object each live allocation was made for, by allocator handle (null: a free handle), so that a
     * segment's unmount visits the objects that had replicas here instead of every object ({@link #ownerKeys}).
     * About 4–6 bytes per allocation (a reference per handle, and the array's growth). Guarded by this monitor.
     */
    private String[] owners = new String[16];

    MountedSegment(String name, String nodeId, String endpoint, long capacity, long incarnation, long mountEpoch) {
        this.name = name;
        this.mount = new Mount(mountEpoch, null);
        this.incarnation = incarnation;
        this.nodeId = nodeId;
        this.endpoint = endpoint;
        this.capacity = capacity;
        this.allocator = new OffsetAllocator(capacity);
        this.offsetShift = Long.numberOfTrailingZeros(allocator.granularity());
        this.largestFree = allocator.largestFreeRegion();
    }

    /**
     * log2 of the allocation granularity (0 up to 3.75 GiB of capacity): every allocation's offset is a multiple of
     * {@code 1 << offsetShift()}, so a replica keeps its offset in an int ({@link ReplicaRecord}).
     */
    int offsetShift() {
        return offsetShift;
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
        return mount.epoch();
    }

    /**
     * The mount descriptors are issued under: its epoch and, when the node sent a key with it, the MAC that signs
     * their grants (null: the node checks none).
     */
    Mount mount() {
        return mount;
    }

    /**
     * A (repeated) mount or an attach: later descriptors carry the new epoch and grants signed with the node's new
     * {@code accessKey} (null or empty: the node sent none).
     *
     * @throws TiffinException {@code INVALID_PARAMS} for a key shorter than 16 bytes
     */
    void mountedAgain(long epoch, byte[] accessKey) {
        DataAccessMac mac = macOf(name, accessKey);
        if (epoch != 0 || mac != null) {
            mount = new Mount(epoch != 0 ? epoch : mount.epoch(), mac);
        }
    }

    /**
     * The MAC of a mount of segment {@code name} with {@code accessKey}, null without a key (null or empty); call it
     * before a mount changes anything, so that a bad key refuses the mount whole.
     *
     * @throws TiffinException {@code INVALID_PARAMS} for a key shorter than 16 bytes
     */
    static DataAccessMac macOf(String name, byte[] accessKey) {
        if (accessKey == null || accessKey.length == 0) {
            return null;
        }
        try {
            return new DataAccessMac(accessKey);
        } catch (IllegalArgumentException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "mount of segment " + name + ": " + e.getMessage());
        }
    }

    /**
     * One mount of the segment as descriptors name it.
     *
     * @param epoch the node's mount epoch (0 = unknown)
     * @param mac signs the grants of this mount's descriptors (null: none)
     */
    record Mount(long epoch, DataAccessMac mac) {
    }

    @Override
    public SegmentStatus status() {
        return status;
    }

    /** Marks a restored segment: it takes no allocations until its node attaches. */
    synchronized void awaitAttach() {
        awaitingAttach = true;
        if (status == SegmentStatus.OK) {
            status = SegmentStatus.DRAINING;
        }
    }

    boolean awaitingAttach() {
        return awaitingAttach;
    }

    boolean voided() {
        return voided;
    }

    /** See {@link #voided()}; called once the segment is unmounted and out of the facts. */
    void markVoided() {
        voided = true;
    }

    /** The node attached (or mounted the segment afresh): the segment takes allocations again. */
    synchronized void attached() {
        if (awaitingAttach && status == SegmentStatus.DRAINING) {
            status = SegmentStatus.OK;
        }
        awaitingAttach = false;
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
     * Allocates {@code size} bytes (rounded up to {@link #ALIGNMENT}) for the object of {@code key}; returns the
     * allocator handle, or -1 when the segment has no room or is not accepting allocations.
     */
    long allocate(long size, String key) {
        return allocate(size, key, null, 0);
    }

    /**
     * As {@link #allocate(long, String)}, and the allocation's offset into {@code offsetOut[index]} (null: not
     * wanted), under the same hold of the monitor.
     */
    synchronized long allocate(long size, String key, long[] offsetOut, int index) {
        java.util.Objects.requireNonNull(key, "key");
        if (status != SegmentStatus.OK || size > largestFree) {
            return -1; // also keeps the rounding below from overflowing
        }
        long aligned = aligned(size);
        if (aligned > largestFree) {
            return -1;
        }
        long handle = allocator.allocate(aligned);
        if (handle >= 0) {
            own(handle, key);
            refreshStats();
            if (offsetOut != null) {
                offsetOut[index] = allocator.offset(handle);
            }
        }
        return handle;
    }

    private void own(long handle, String key) {
        int h = Math.toIntExact(handle); // the allocator's node index, below 2^26
        if (h >= owners.length) {
            owners = java.util.Arrays.copyOf(owners, Math.max(h + 1, owners.length + (owners.length >> 1)));
        }
        owners[h] = key;
    }

    private void disown(long handle) {
        if (handle < owners.length) {
            owners[(int) handle] = null;
        }
    }

    /** The key the live allocation {@code handle} was made for; null for a free handle or -1 (diagnostics). */
    synchronized String ownerKey(long handle) {
        return handle >= 0 && handle < owners.length ? owners[(int) handle] : null;
    }

    /**
     * The keys of the objects this segment's live allocations were made for (a key once per allocation; its object
     * may since have gone, or been replaced by another of the same key). Once the segment is unmounted nothing is
     * allocated or freed here, so the list is then every object that may still have a replica on it. O(the
     * segment's allocator nodes).
     */
    synchronized java.util.List<String> ownerKeys() {
        java.util.List<String> keys = new java.util.ArrayList<>(allocator.allocationCount());
        for (String k : owners) {
            if (k != null) {
                keys.add(k);
            }
        }
        return keys;
    }

    /** The bytes an object of {@code size} takes: rounded up to {@link #ALIGNMENT}, one unit for a 0-byte object. */
    static long aligned(long size) {
        return Math.max(ALIGNMENT, (size + ALIGNMENT - 1) & -ALIGNMENT);
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
        disown(handle);
        refreshStats();
    }

    /**
     * Frees the buffer of a replica of the object of {@code version} at {@code offset}: at once, or, with failover on,
     * once the node has dropped its record of the object ({@link NodeForgets}), so no record ever names space that
     * another object overwrites.
     */
    void release(long handle, long offset, long version) {
        NodeForgets f = forgets;
        if (f == null) {
            free(handle);
        } else {
            f.forget(this, handle, offset, version);
        }
    }

    /**
     * With failover on, has the node drop its record of the object of {@code version} at {@code offset} now, while
     * the buffer stays allocated (a forced removal of a leased object: readers may still read the bytes, but a
     * master that takes over must not bring the object back); nothing without failover. The buffer is freed later
     * through {@link #release}.
     */
    void forgetRecord(long offset, long version) {
        NodeForgets f = forgets;
        if (f != null) {
            f.forget(this, -1, offset, version);
        }
    }

    /**
     * With failover on, has the node set the expiry deadline of its record of the object of {@code version} at
     * {@code offset} (its deadline changed after the put), in order with the segment's forgets; nothing without
     * failover.
     */
    void recordDeadline(long offset, long version, long expireAtMillis) {
        NodeForgets f = forgets;
        if (f != null) {
            f.setDeadline(this, offset, version, expireAtMillis);
        }
    }

    /**
     * With failover on, has this segment's node report its SSD copy of {@code key} (of the object of {@code version})
     * with the deadline {@code expireAtMillis} from now on and write it into the copy's stamp (the object's deadline
     * changed after the copy was written), and returns true; returns false without failover.
     */
    boolean recordDiskDeadline(String key, long version, long expireAtMillis) {
        NodeForgets f = forgets;
        if (f != null) {
            f.setDiskDeadline(this, key, version, expireAtMillis);
            return true;
        }
        return false;
    }

    /**
     * With failover on, has this segment's node delete its SSD copy of {@code key} (of the removed object of {@code
     * version}) in order with the segment's forgets, and returns true; returns false without failover.
     */
    boolean forgetDiskCopy(String key, long version) {
        NodeForgets f = forgets;
        if (f != null) {
            f.forgetDiskCopy(this, key, version);
            return true;
        }
        return false;
    }

    /** Frees handles whose records the node has dropped ({@link NodeForgets}). */
    synchronized void freeForgotten(long[] handles, int count) {
        if (status == SegmentStatus.UNMOUNTING) {
            return;
        }
        for (int i = 0; i < count; i++) {
            if (handles[i] >= 0) { // < 0: a record the master never allocated (dropped at attach)
                allocator.free(handles[i]);
                disown(handles[i]);
            }
        }
        refreshStats();
    }

    /** Routes frees through {@code f} (failover on) or frees at once (null). */
    void deferFreesTo(NodeForgets f) {
        this.forgets = f;
    }

    /**
     * Rebuilds the allocator from the objects the node reported ({@code ATTACH_SEGMENT}): {@code sizes} as PutStart
     * allocated them (before {@link #ALIGNMENT}), {@code keys} their objects'. Returns per object its handle, or -1
     * where it overlaps another or does not fit (the caller drops it).
     */
    synchronized long[] restore(long[] offsets, long[] sizes, String[] keys) {
        long[] aligned = new long[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            aligned[i] = aligned(sizes[i]);
        }
        long[] handles = allocator.restore(offsets, aligned);
        for (int i = 0; i < handles.length; i++) {
            if (handles[i] >= 0) {
                own(handles[i], keys[i]);
            }
        }
        refreshStats();
        return handles;
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
