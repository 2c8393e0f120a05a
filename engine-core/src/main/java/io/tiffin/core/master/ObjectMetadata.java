package io.tiffin.core.master;

import java.util.List;

/**
 * What the master knows of one object: size, writer, replicas, lease, pins and version.
 *
 * <p>Not thread-safe: guarded by the lock of its {@link MetadataShard}.
 */
final class ObjectMetadata {
    final String key;
    final String writerId;
    final long size;
    final long putStartMillis;
    final boolean hardPinned;
    final boolean softPinRequested;
    final List<ReplicaRecord> replicas;

    /** Read lease: the object may not be removed or evicted before this instant (ms). */
    long leaseTimeoutMillis;
    /**
     * Until this instant (ms; 0 = never) a client with a location cache may read this object through a
     * location it looked up without asking the master again: a forced removal is reported only after it,
     * and the key cannot be put again before it ({@link MetadataShard#hold}). Always within the lease.
     */
    long cachedUntilMillis;
    /**
     * The one location cache ({@code cache_owner}) that may hold this object until {@link #cachedUntilMillis},
     * or {@link #SEVERAL_CACHES}: a removal by that cache's own client need not wait (it drops its entries).
     */
    long cachedByOwner;
    static final long SEVERAL_CACHES = -1;
    /** Soft pin protects the object from the first eviction pass until this instant (ms); 0 = none. */
    long softPinDeadlineMillis;
    /** Assigned at PutStart (the writer records it on the nodes with the object). */
    long version;
    /** The CRC32C of the object's bytes, from its writer's PutEnd (or a node's record); 0 = none. */
    int crc32c;
    /** The writer's id of this put (PutStartRequest.put_id; 0 = none): a retried PutStart of it gets its replicas. */
    long putId;
    /**
     * Rebuilt from a node's records by a master that took over (or restarted with its state): complete, and its
     * writer's PutEnd, retried against this master, succeeds whoever sends it.
     */
    boolean recovered;
    /** The object's expiry deadline (master ms; 0 = none): past it the object is gone ({@link Expiry}). */
    long expireAtMillis;
    /** The put in progress replaces an existing object ({@code PutOptions.upsert}). */
    boolean upsert;
    /** A replacement that takes the replaced object's deadline when it is swapped in ({@code PutOptions.keepTtl}). */
    boolean keepTtl;
    /** A replacement of this version only ({@code PutOptions.expectedVersion}, checked again at PutEnd); 0 = any. */
    long expectedVersion;
    /** True from PutStart until every replica is complete (or the put is revoked). */
    boolean processing = true;
    /** Copies on nodes' SSD tiers; null while there is none (most objects never have one). */
    private CompactList<DiskReplica> diskReplicas;
    /** An offload task is queued or running: the memory replica it reads must stay put. */
    boolean offloadPending;
    /** The last offload failed (for example a full disk): eviction drops this object instead of retrying. */
    boolean offloadFailed;
    /** A promotion task is queued or running. */
    boolean promotionQueued;
    /** The node that owns the pending offload or promotion, or null. */
    String taskNode;
    /**
     * When the pending offload was queued or the promotion's memory replica allocated (ms): a task not
     * reported within {@code master.put-start-release-timeout} is abandoned.
     */
    long taskStartMillis;

    ObjectMetadata(String key, String writerId, long size, long putStartMillis, boolean hardPinned,
                   boolean softPinRequested, List<ReplicaRecord> replicas) {
        this.key = key;
        this.writerId = writerId;
        this.size = size;
        this.putStartMillis = putStartMillis;
        this.hardPinned = hardPinned;
        this.softPinRequested = softPinRequested;
        this.replicas = new CompactList<>(replicas);
    }

    /** Copies on nodes' SSD tiers, a view not to change (see {@link #addDiskReplica}, {@link #removeDiskReplicasIf}). */
    List<DiskReplica> diskReplicas() {
        return diskReplicas == null ? List.of() : java.util.Collections.unmodifiableList(diskReplicas);
    }

    void addDiskReplica(DiskReplica d) {
        if (diskReplicas == null) {
            diskReplicas = new CompactList<>();
        }
        diskReplicas.add(d);
    }

    /** Drops the disk replicas {@code drop} accepts; returns how many it dropped. */
    int removeDiskReplicasIf(java.util.function.Predicate<DiskReplica> drop) {
        if (diskReplicas == null) {
            return 0;
        }
        int before = diskReplicas.size();
        diskReplicas.removeIf(drop);
        int dropped = before - diskReplicas.size();
        if (diskReplicas.isEmpty()) {
            diskReplicas = null;
        }
        return dropped;
    }

    boolean hasReadableReplica() {
        return hasReadableMemoryReplica() || diskReplicas != null;
    }

    boolean hasReadableMemoryReplica() {
        for (ReplicaRecord r : replicas) {
            if (r.isReadable()) {
                return true;
            }
        }
        return false;
    }

    boolean hasDiskReplicaOn(String nodeId) {
        for (DiskReplica d : diskReplicas()) {
            if (d.nodeId().equals(nodeId)) {
                return true;
            }
        }
        return false;
    }

    /** Neither memory nor disk copies left. */
    boolean isEmpty() {
        return replicas.isEmpty() && diskReplicas == null;
    }

    boolean allComplete() {
        for (ReplicaRecord r : replicas) {
            if (r.status != io.tiffin.api.ReplicaStatus.COMPLETE) {
                return false;
            }
        }
        return !isEmpty();
    }

    /** Complete and past its expiry deadline. */
    boolean isExpired(long now) {
        return expireAtMillis != 0 && now >= expireAtMillis && !processing;
    }

    boolean isLeased(long now) {
        return leaseTimeoutMillis > now;
    }

    boolean isSoftPinned(long now) {
        return softPinDeadlineMillis > now;
    }

    void grantLease(long now, long ttlMillis) {
        leaseTimeoutMillis = Math.max(leaseTimeoutMillis, now + ttlMillis);
    }

    /** How long a client reuses a lookup it asked to cache for {@code cacheForMillis} under lease {@code ttlMillis}. */
    static long cacheWindowMillis(long cacheForMillis, long ttlMillis) {
        return Math.min(Math.min(cacheForMillis, ttlMillis / 2), io.tiffin.core.transport.LookupReuse.MAX_MILLIS);
    }

    /**
     * A lookup (at {@code now}, with lease {@code ttlMillis}) came from a client that will reuse the answer
     * for up to {@code cacheForMillis} from when it sent the lookup, at most half the lease and
     * {@link io.tiffin.core.transport.LookupReuse#MAX_MILLIS} (as the client bounds it). Records that
     * window and a quarter more (the client's clock counts the window, not the master's), never past the
     * lease, and whether {@code owner} (the client's cache, 0 = unknown) is the only cache holding it.
     */
    void noteCachedLookup(long now, long ttlMillis, long cacheForMillis, long owner) {
        long window = cacheWindowMillis(cacheForMillis, ttlMillis);
        if (window > 0) {
            if (cachedUntilMillis <= now) {
                cachedByOwner = owner > 0 ? owner : SEVERAL_CACHES; // the earlier windows are over
            } else if (cachedByOwner != owner) {
                cachedByOwner = SEVERAL_CACHES;
            }
            long until = Math.min(now + window + window / 4 + 1, now + ttlMillis);
            cachedUntilMillis = Math.max(cachedUntilMillis, until);
        }
    }

    /** Drops replicas whose segment is gone; returns how many were dropped. */
    int dropDeadReplicas() {
        int before = replicas.size();
        replicas.removeIf(ReplicaRecord::isOnDeadSegment);
        return before - replicas.size();
    }

    /** Whether a replica is still being written (by a put or a promotion). */
    boolean hasProcessingReplica() {
        for (ReplicaRecord r : replicas) {
            if (r.status == io.tiffin.api.ReplicaStatus.PROCESSING) {
                return true;
            }
        }
        return false;
    }

    /** Forgets the pending offload or promotion (not its replicas or queue entries). */
    void clearTask() {
        offloadPending = false;
        promotionQueued = false;
        taskNode = null;
    }

    /** Frees every replica buffer (the object is being erased). */
    void freeAll() {
        for (ReplicaRecord r : replicas) {
            r.free();
        }
        replicas.clear();
    }
}
