package io.tiffin.core.master;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;

/**
 * One memory replica of an object, as the master tracks it: the segment and allocator handle of its
 * buffer, and its status. Its length and version are its object's ({@link ObjectMetadata#size()},
 * {@link ObjectMetadata#version}), passed in where needed rather than kept here; its offset is kept in units of the
 * segment's allocation granularity ({@link MountedSegment#offsetShift()}, an unsigned int), and its status in the
 * handle's int: 32 bytes per replica, where a long offset and a status reference made 40.
 *
 * <p>Not thread-safe: guarded by the lock of the metadata shard that holds the object.
 */
final class ReplicaRecord {
    final long id;
    final MountedSegment segment;
    /**
     * The allocator's handle in the low {@value #HANDLE_BITS} bits (a node index: {@code OffsetAllocator} has at most
     * 2^26 nodes), the status's ordinal above it, and {@link #FREED} once the buffer went back.
     */
    private int handleAndStatus;
    /** The offset in the segment in units of its allocation granularity, unsigned ({@link #offset()}). */
    private final int scaledOffset;
    private static final int HANDLE_BITS = 26;
    private static final int HANDLE_MASK = (1 << HANDLE_BITS) - 1;
    private static final int FREED = 1 << 30;
    private static final ReplicaStatus[] STATUSES = ReplicaStatus.values();

    ReplicaRecord(long id, MountedSegment segment, long handle, long offset) {
        this.id = id;
        this.segment = segment;
        if (handle < 0 || handle > HANDLE_MASK) {
            throw new IllegalArgumentException("not an allocator handle: " + handle);
        }
        int shift = segment.offsetShift();
        long scaled = offset >>> shift;
        if (offset < 0 || scaled << shift != offset || scaled > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("offset " + offset + " is not one of segment " + segment.name()
                    + "'s allocation offsets (multiples of " + (1L << shift) + " below " + (1L << (32 + shift)) + ")");
        }
        this.scaledOffset = (int) scaled;
        this.handleAndStatus = (int) handle | (ReplicaStatus.PROCESSING.ordinal() << HANDLE_BITS);
    }

    /** The buffer's offset in its segment, in bytes. */
    long offset() {
        return Integer.toUnsignedLong(scaledOffset) << segment.offsetShift();
    }

    ReplicaStatus status() {
        return STATUSES[(handleAndStatus & ~FREED) >>> HANDLE_BITS];
    }

    void status(ReplicaStatus status) {
        handleAndStatus = (handleAndStatus & (FREED | HANDLE_MASK)) | (status.ordinal() << HANDLE_BITS);
    }

    private boolean freed() {
        return (handleAndStatus & FREED) != 0;
    }

    /** COMPLETE and on a mounted segment. */
    boolean isReadable() {
        return status() == ReplicaStatus.COMPLETE && segment.isMounted();
    }

    boolean isOnDeadSegment() {
        return !segment.isMounted();
    }

    /**
     * Returns the buffer to its segment's allocator (with failover on, once the node has dropped its record of
     * the object: {@link MountedSegment#release}); idempotent. {@code version}: its object's (what the node's
     * record carries).
     */
    void free(long version) {
        if (!freed()) {
            long h = handleAndStatus & HANDLE_MASK;
            handleAndStatus |= FREED;
            segment.release(h, offset(), version);
        }
    }

    /**
     * Has the node drop its record of this replica's object ({@code version}) now, keeping the buffer until
     * {@link #free}.
     */
    void forgetRecord(long version) {
        if (!freed()) {
            segment.forgetRecord(offset(), version);
        }
    }

    /** Has the node set the expiry deadline of its record of this replica's object ({@code version}). */
    void recordDeadline(long version, long expireAtMillis) {
        if (!freed() && status() == ReplicaStatus.COMPLETE) {
            segment.recordDeadline(offset(), version, expireAtMillis);
        }
    }

    /**
     * The descriptor of this replica of {@code size} bytes handed out for {@code ops} ({@link DataGrant#READ},
     * {@link DataGrant#WRITE}): with a grant signed under the segment's current mount, valid until
     * {@code expiresAtMillis} (none if the node sent no key).
     */
    ReplicaDescriptor toDescriptor(long size, int ops, long expiresAtMillis) {
        MountedSegment.Mount mount = segment.mount();
        DataGrant grant = mount.mac() == null ? null
                : mount.mac().sign(segment.name(), offset(), size, ops, mount.epoch(), expiresAtMillis);
        return new ReplicaDescriptor(id, ReplicaType.MEMORY, status(), segment.name(), segment.nodeId(),
                segment.endpoint(), offset(), size, mount.epoch(), grant);
    }
}
