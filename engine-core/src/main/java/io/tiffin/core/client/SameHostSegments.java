package io.tiffin.core.client;

import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.LocalSegmentDirectory;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import io.tiffin.core.transport.proto.SegmentInfoRequest;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;

/**
 * The replicas this client copies with a plain memory copy instead of the node's socket: those in a
 * segment of this JVM ({@link LocalSegmentDirectory}, the same-JVM shortcut {@code client.local-memcpy}) and
 * those in a same-host node's shared-memory segment mapped here ({@link SharedSegments}, the same-host
 * shortcut {@code client.shared-memory}), with the mount-epoch check the node would make on its socket.
 *
 * <p>Thread-safe. Owns the shared-memory mappings ({@link SharedSegments}) and closes them in {@link #close()};
 * uses, but does not own, the connection pool its SEGMENT_INFO requests travel on.
 */
final class SameHostSegments implements AutoCloseable {
    private final boolean localMemcpy;
    /** Mappings of same-host nodes' shared-memory segments; null when disabled. */
    private final SharedSegments shared;

    /**
     * @param localMemcpy copy replicas in segments of this JVM directly
     * @param sharedMemory map same-host nodes' shared-memory segments and copy directly
     * @param connections where SEGMENT_INFO requests go: over the data-plane connections the reads use anyway
     *     (no extra connection per node)
     * @param ticker the clock of the mappings' liveness checks
     */
    SameHostSegments(boolean localMemcpy, boolean sharedMemory, BlockingConnectionPool connections, Ticker ticker) {
        this.localMemcpy = localMemcpy;
        this.shared = sharedMemory ? new SharedSegments((endpoint, segment) -> connections.call(endpoint,
                Opcode.SEGMENT_INFO, SegmentInfoRequest.newBuilder().setSegment(segment).build(),
                SegmentInfoReply.parser()), SharedSegments.RETRY_NANOS, ticker) : null;
    }

    /**
     * The replica's bytes in this process's address space, or null: a segment of this JVM (same-JVM
     * shortcut) or a same-host node's shared-memory segment mapped here (same-host shortcut). A copy
     * from or to the returned slice may throw IllegalStateException if the segment closes meanwhile.
     */
    MemorySegment slice(ReplicaDescriptor d, boolean forWrite) {
        if (localMemcpy) {
            LocalSegment local = LocalSegmentDirectory.find(d.segment());
            if (local != null) {
                return local.slice(d.offset(), d.size());
            }
        }
        return shared == null ? null : shared.slice(d.endpoint(), d.segment(), d.offset(), d.size(), forWrite);
    }

    /** The segment of {@code d} when its node runs in this JVM (and same-JVM copies are on), else null. */
    io.tiffin.core.local.LocalSegment sameJvm(ReplicaDescriptor d) {
        return localMemcpy ? LocalSegmentDirectory.find(d.segment()) : null;
    }

    /**
     * The replica's bytes in a segment of this JVM (the same-JVM shortcut), or null; never asks anything of
     * the node, so it does not wait. Valid while the segment's node runs.
     */
    MemorySegment inThisJvm(ReplicaDescriptor d) {
        if (!localMemcpy) {
            return null;
        }
        LocalSegment local = LocalSegmentDirectory.find(d.segment());
        try {
            return local == null ? null : local.slice(d.offset(), d.size());
        } catch (RuntimeException closedOrOutside) {
            return null;
        }
    }

    /**
     * The current mount epoch of the segment a direct replica is copied from (a segment of this JVM, or
     * a same-host segment mapped here), or -1 when it is not known.
     */
    long mountEpoch(ReplicaDescriptor d) {
        if (localMemcpy) {
            LocalSegment local = LocalSegmentDirectory.find(d.segment());
            if (local != null) {
                return local.mountEpoch();
            }
        }
        return shared == null ? -1 : shared.mountEpoch(d.segment());
    }

    /**
     * Whether a direct copy of {@code d} may have met another mount's bytes: the segment's current mount
     * epoch, read after the copy (or before a write), is not the descriptor's. The node makes the same
     * check on the socket path.
     */
    boolean epochMoved(ReplicaDescriptor d) {
        if (d.mountEpoch() == 0) {
            return false;
        }
        long now = mountEpoch(d);
        return now >= 0 && now != d.mountEpoch();
    }

    /** Whether {@code d} is read with a memory copy ({@link #slice}) rather than over the socket. */
    boolean isDirect(ReplicaDescriptor d) {
        try {
            return slice(d, false) != null;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Number of same-host shared-memory segments mapped now. */
    int mappedCount() {
        return shared == null ? 0 : shared.mappedCount();
    }

    @Override
    public void close() {
        if (shared != null) {
            shared.close();
        }
    }
}
