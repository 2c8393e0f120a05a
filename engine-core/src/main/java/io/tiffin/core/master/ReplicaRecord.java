package io.tiffin.core.master;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;

/**
 * One memory replica of an object, as the master tracks it: the segment and allocator handle of its
 * buffer, and its status. Its length and version are its object's ({@link ObjectMetadata#size},
 * {@link ObjectMetadata#version}), passed in where needed rather than kept here: 40 bytes per replica, not 56.
 *
 * <p>Not thread-safe: guarded by the lock of the metadata shard that holds the object.
 */
final class ReplicaRecord {
    final long id;
    final MountedSegment segment;
    /** The allocator's handle (a node index, below 2^26), or {@link #FREED} once the buffer went back. */
    private int handle;
    final long offset;
    ReplicaStatus status = ReplicaStatus.PROCESSING;
    private static final int FREED = -1;

    ReplicaRecord(long id, MountedSegment segment, long handle, long offset) {
        this.id = id;
        this.segment = segment;
        if (handle < 0 || handle > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("not an allocator handle: " + handle);
        }
        this.handle = (int) handle; // an int: with no boolean beside it the record is 40 bytes, not 48
        this.offset = offset;
    }

    /** COMPLETE and on a mounted segment. */
    boolean isReadable() {
        return status == ReplicaStatus.COMPLETE && segment.isMounted();
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
        if (handle != FREED) {
            long h = handle;
            handle = FREED;
            segment.release(h, offset, version);
        }
    }

    /**
     * Has the node drop its record of this replica's object ({@code version}) now, keeping the buffer until
     * {@link #free}.
     */
    void forgetRecord(long version) {
        if (handle != FREED) {
            segment.forgetRecord(offset, version);
        }
    }

    /** Has the node set the expiry deadline of its record of this replica's object ({@code version}). */
    void recordDeadline(long version, long expireAtMillis) {
        if (handle != FREED && status == ReplicaStatus.COMPLETE) {
            segment.recordDeadline(offset, version, expireAtMillis);
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
                : mount.mac().sign(segment.name(), offset, size, ops, mount.epoch(), expiresAtMillis);
        return new ReplicaDescriptor(id, ReplicaType.MEMORY, status, segment.name(), segment.nodeId(),
                segment.endpoint(), offset, size, mount.epoch(), grant);
    }
}
