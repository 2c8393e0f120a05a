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
    /**
     * The object's size in bytes in the low {@value #SIZE_BITS} bits ({@link #size()}), its four flags above them
     * ({@link #hardPinned()}, {@link #softPinRequested()}, {@link #processing()}, {@link #recovered()}): a long and
     * four booleans made this object 96 bytes, one long makes it 88, 8 bytes less per key in the master.
     */
    private long sizeAndFlags;
    /** Bits of {@link #sizeAndFlags} that hold the size: objects up to 64 PiB, far beyond any segment. */
    static final int SIZE_BITS = 56;
    static final long MAX_SIZE = (1L << SIZE_BITS) - 1;
    private static final long HARD_PINNED = 1L << SIZE_BITS;
    private static final long SOFT_PIN_REQUESTED = 1L << (SIZE_BITS + 1);
    private static final long PROCESSING = 1L << (SIZE_BITS + 2);
    private static final long RECOVERED = 1L << (SIZE_BITS + 3);
    /** The memory replicas' {@link CompactList} slot ({@link #replicas()}): null, one replica, or an array. */
    private Object replicaSlot;
    /**
     * What only some objects need for a while (a put in progress, an SSD task, disk copies, a soft pin), or null
     * while the object needs none of it, as nearly all complete objects: per key, the master keeps 88 bytes here
     * and no side object instead of 144 bytes with every field in place.
     */
    private Rare rare;

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
    /** Assigned at PutStart (the writer records it on the nodes with the object). */
    long version;
    /** The CRC32C of the object's bytes, from its writer's PutEnd (or a node's record); 0 = none. */
    int crc32c;
    /** The writer's id of this put (PutStartRequest.put_id; 0 = none): a retried PutStart of it gets its replicas. */
    long putId;
    /** The object's expiry deadline (master ms; 0 = none): past it the object is gone ({@link Expiry}). */
    long expireAtMillis;

    /**
     * The fields of {@link ObjectMetadata} that few objects hold at a time; all at their defaults, the object
     * drops it ({@link #dropRareIfUnused()}).
     */
    private static final class Rare {
        /** When the put started (ms), while it is in progress. */
        long putStartMillis;
        /** The put in progress replaces an existing object ({@code PutOptions.upsert}). */
        boolean upsert;
        /** A replacement that takes the replaced object's deadline when swapped in ({@code PutOptions.keepTtl}). */
        boolean keepTtl;
        /** A replacement of this version only ({@code PutOptions.expectedVersion}, checked again at PutEnd); 0 = any. */
        long expectedVersion;
        /** Soft pin protects the object from the first eviction pass until this instant (ms); 0 = none. */
        long softPinDeadlineMillis;
        /** Copies on nodes' SSD tiers; null while there is none. */
        CompactList<DiskReplica> diskReplicas;
        /** An offload task is queued or running: the memory replica it reads must stay put. */
        boolean offloadPending;
        /** The last offload failed (for example a full disk): eviction drops this object instead of retrying. */
        boolean offloadFailed;
        /** A promotion task is queued or running. */
        boolean promotionQueued;
        /** The node that owns the pending offload or promotion, or null. */
        String taskNode;
        /** When the pending task was queued or the promotion's memory replica allocated (ms). */
        long taskStartMillis;
        /** A put of the key that yielded to this recovered object while still being written, or null. */
        Yielded yielded;
        /** In its shard's list of puts in progress ({@link MetadataShard#putStarted}), between these two. */
        boolean inPutList;
        ObjectMetadata prevPut;
        ObjectMetadata nextPut;

        boolean unused() {
            return putStartMillis == 0 && !upsert && !keepTtl && expectedVersion == 0 && softPinDeadlineMillis == 0
                    && diskReplicas == null && !offloadPending && !offloadFailed && !promotionQueued
                    && taskNode == null && taskStartMillis == 0 && yielded == null && !inPutList;
        }
    }

    /** The buffers a yielded put's writer may still write into ({@link #noteYielded}), of its {@code version}. */
    private record Yielded(String writerId, long version, List<ReplicaRecord> replicas) {
    }

    ObjectMetadata(String key, String writerId, long size, long putStartMillis, boolean hardPinned,
                   boolean softPinRequested, List<ReplicaRecord> replicas) {
        this.key = key;
        this.writerId = writerId;
        if (size < 0 || size > MAX_SIZE) {
            throw new IllegalArgumentException("an object of " + size + " bytes: sizes run from 0 to " + MAX_SIZE);
        }
        this.sizeAndFlags = size | PROCESSING | (hardPinned ? HARD_PINNED : 0)
                | (softPinRequested ? SOFT_PIN_REQUESTED : 0);
        rare().putStartMillis = putStartMillis;
        replicas().addAll(replicas);
    }

    /** Whether this object is in its shard's list of puts in progress ({@link MetadataShard#putStarted}). */
    boolean inPutList() {
        return rare != null && rare.inPutList;
    }

    /** The put in the shard's list of puts in progress started before this one's, or null; while listed. */
    ObjectMetadata prevPut() {
        return rare.prevPut;
    }

    /** The put in the shard's list of puts in progress started after this one's, or null; while listed. */
    ObjectMetadata nextPut() {
        return rare.nextPut;
    }

    /** Links this object into its shard's list of puts in progress (listed) or out of it. */
    void putListLinks(boolean listed, ObjectMetadata prev, ObjectMetadata next) {
        Rare r = rare();
        r.inPutList = listed;
        r.prevPut = prev;
        r.nextPut = next;
        if (!listed) {
            dropRareIfUnused();
        }
    }

    void prevPut(ObjectMetadata prev) {
        rare.prevPut = prev;
    }

    void nextPut(ObjectMetadata next) {
        rare.nextPut = next;
    }

    /** Whether the side object of the fields few objects need is allocated (a complete, plain object: no). */
    boolean holdsRareFields() {
        return rare != null;
    }

    private Rare rare() {
        if (rare == null) {
            rare = new Rare();
        }
        return rare;
    }

    private void dropRareIfUnused() {
        if (rare != null && rare.unused()) {
            rare = null;
        }
    }

    /**
     * The memory replicas: a view of this object's slot, to read and change under the shard lock (a view per
     * call; iterate and change through the same one).
     */
    List<ReplicaRecord> replicas() {
        return new CompactList<>() {
            @Override
            Object slot() {
                return replicaSlot;
            }

            @Override
            void slot(Object value) {
                replicaSlot = value;
            }
        };
    }

    /** When the put in progress started (ms); 0 once the object is complete ({@link #complete()}). */
    long putStartMillis() {
        return rare == null ? 0 : rare.putStartMillis;
    }

    /** Notes the put's replacement options ({@code PutOptions}: upsert, keepTtl, expectedVersion). */
    void replaceOptions(boolean upsert, boolean keepTtl, long expectedVersion) {
        if (upsert || keepTtl || expectedVersion != 0) {
            Rare r = rare();
            r.upsert = upsert;
            r.keepTtl = keepTtl;
            r.expectedVersion = expectedVersion;
        }
    }

    /**
     * Whether this master granted the put of this object: neither rebuilt from a node's records nor reported by an
     * SSD tier. While the master recovers after a takeover, such an object is a put made during the recovery, which
     * yields if a node brings the key's object back ({@link SegmentAttachment}) and is not read before
     * ({@link ReplicaLookup}).
     */
    boolean grantedHere() {
        return !recovered() && (rare == null || rare.diskReplicas == null || rare.diskReplicas.isEmpty());
    }

    /** The put in progress replaces an existing object ({@code PutOptions.upsert}). */
    boolean upsert() {
        return rare != null && rare.upsert;
    }

    /** A replacement that takes the replaced object's deadline when it is swapped in ({@code PutOptions.keepTtl}). */
    boolean keepTtl() {
        return rare != null && rare.keepTtl;
    }

    /** A replacement of this version only ({@code PutOptions.expectedVersion}); 0 = any. */
    long expectedVersion() {
        return rare == null ? 0 : rare.expectedVersion;
    }

    /** The object's size in bytes. */
    long size() {
        return sizeAndFlags & MAX_SIZE;
    }

    /** Pinned hard: eviction never takes it ({@code PutOptions.hardPin}). */
    boolean hardPinned() {
        return (sizeAndFlags & HARD_PINNED) != 0;
    }

    /** Its writer asked for a soft pin ({@code PutOptions.softPin}), which starts when the put completes. */
    boolean softPinRequested() {
        return (sizeAndFlags & SOFT_PIN_REQUESTED) != 0;
    }

    /** True from PutStart until every replica is complete (or the put is revoked); see {@link #complete()}. */
    boolean processing() {
        return (sizeAndFlags & PROCESSING) != 0;
    }

    /**
     * Rebuilt from a node's records by a master that took over (or restarted with its state), or found on an SSD
     * tier: complete, and its writer's PutEnd, retried against this master, succeeds whoever sends it.
     */
    boolean recovered() {
        return (sizeAndFlags & RECOVERED) != 0;
    }

    /** Marks the object {@link #recovered()}. */
    void markRecovered() {
        sizeAndFlags |= RECOVERED;
    }

    /** The put is over: the object is complete and forgets the put's own fields. */
    void complete() {
        sizeAndFlags &= ~PROCESSING;
        if (rare != null) {
            rare.putStartMillis = 0;
            rare.upsert = false;
            rare.keepTtl = false;
            rare.expectedVersion = 0;
            dropRareIfUnused();
        }
    }

    /** Soft pin protects the object from the first eviction pass until this instant (ms); 0 = none. */
    long softPinDeadlineMillis() {
        return rare == null ? 0 : rare.softPinDeadlineMillis;
    }

    void softPinUntil(long deadlineMillis) {
        if (deadlineMillis != 0 || rare != null) {
            rare().softPinDeadlineMillis = deadlineMillis;
            dropRareIfUnused();
        }
    }

    /** An offload task is queued or running: the memory replica it reads must stay put. */
    boolean offloadPending() {
        return rare != null && rare.offloadPending;
    }

    /**
     * Whether a copy of this key of {@code version} that {@code nodeId} reports is what this object's pending offload
     * to that node asked for: the same version, or a version the node does not know (0, a backend without stamps).
     */
    boolean offloadAsksFor(String nodeId, long version) {
        return offloadPending() && nodeId.equals(taskNode()) && (version == 0 || version == this.version);
    }

    /** The last offload failed (for example a full disk): eviction drops this object instead of retrying. */
    boolean offloadFailed() {
        return rare != null && rare.offloadFailed;
    }

    /** A promotion task is queued or running. */
    boolean promotionQueued() {
        return rare != null && rare.promotionQueued;
    }

    /** The node that owns the pending offload or promotion, or null. */
    String taskNode() {
        return rare == null ? null : rare.taskNode;
    }

    /**
     * When the pending offload was queued or the promotion's memory replica allocated (ms): a task not
     * reported within {@code master.put-start-release-timeout} is abandoned.
     */
    long taskStartMillis() {
        return rare == null ? 0 : rare.taskStartMillis;
    }

    /** An offload to {@code node}'s SSD tier was queued at {@code now}. */
    void startOffload(String node, long now) {
        startTask(true, node, now);
    }

    /** A promotion from {@code node}'s SSD tier was queued (or its memory replica allocated) at {@code now}. */
    void startPromotion(String node, long now) {
        startTask(false, node, now);
    }

    /** The offload is over (its SSD copy reported): its flag and the task's node go; nothing if none was pending. */
    void endOffload() {
        endTask(true);
    }

    /** The promotion is over (done, failed or refused): its flag and the task's node go; nothing if none was queued. */
    void endPromotion() {
        endTask(false);
    }

    private void startTask(boolean offload, String node, long now) {
        Rare r = rare();
        if (offload) {
            r.offloadPending = true;
        } else {
            r.promotionQueued = true;
        }
        r.taskNode = node;
        r.taskStartMillis = now;
    }

    private void endTask(boolean offload) {
        // Only a task of that kind ends: a late PROMOTION_START or PROMOTION_END of an older object of the key must
        // not take the task node of this object's own offload, which would then neither end nor time out.
        if (rare != null && (offload ? rare.offloadPending : rare.promotionQueued)) {
            if (offload) {
                rare.offloadPending = false;
            } else {
                rare.promotionQueued = false;
            }
            rare.taskNode = null;
            rare.taskStartMillis = 0; // read only with a task node
            dropRareIfUnused();
        }
    }

    /** The pending offload failed: the task is over and eviction will drop the object instead of retrying. */
    void offloadFailedNow() {
        endOffload();
        rare().offloadFailed = true;
    }

    /** Copies on nodes' SSD tiers, a view not to change (see {@link #addDiskReplica}, {@link #removeDiskReplicasIf}). */
    List<DiskReplica> diskReplicas() {
        return rare == null || rare.diskReplicas == null ? List.of()
                : java.util.Collections.unmodifiableList(rare.diskReplicas);
    }

    void addDiskReplica(DiskReplica d) {
        Rare r = rare();
        if (r.diskReplicas == null) {
            r.diskReplicas = CompactList.create();
        }
        r.diskReplicas.add(d);
    }

    /** Drops the disk replicas {@code drop} accepts; returns how many it dropped. */
    int removeDiskReplicasIf(java.util.function.Predicate<DiskReplica> drop) {
        if (rare == null || rare.diskReplicas == null) {
            return 0;
        }
        CompactList<DiskReplica> disk = rare.diskReplicas;
        int before = disk.size();
        disk.removeIf(drop);
        int dropped = before - disk.size();
        if (disk.isEmpty()) {
            rare.diskReplicas = null;
            dropRareIfUnused();
        }
        return dropped;
    }

    boolean hasReadableReplica() {
        return hasReadableMemoryReplica() || hasDiskReplica();
    }

    boolean hasReadableMemoryReplica() {
        for (ReplicaRecord r : replicas()) {
            if (r.isReadable()) {
                return true;
            }
        }
        return false;
    }

    /** Whether a node's SSD tier holds a copy. */
    boolean hasDiskReplica() {
        return rare != null && rare.diskReplicas != null;
    }

    /**
     * Points this object's copy on {@code nodeId}'s SSD tier at {@code endpoint} (the node restarted on another
     * address, its copies kept); returns whether it was listed elsewhere.
     */
    boolean moveDiskReplica(String nodeId, String endpoint) {
        CompactList<DiskReplica> disk = rare == null ? null : rare.diskReplicas;
        for (int i = 0; disk != null && i < disk.size(); i++) {
            DiskReplica d = disk.get(i);
            if (d.nodeId().equals(nodeId) && !d.endpoint().equals(endpoint)) {
                disk.set(i, new DiskReplica(d.id(), nodeId, endpoint, d.size()));
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
        return replicaSlot == null && !hasDiskReplica();
    }

    boolean allComplete() {
        for (ReplicaRecord r : replicas()) {
            if (r.status() != io.tiffin.api.ReplicaStatus.COMPLETE) {
                return false;
            }
        }
        return !isEmpty();
    }

    /** Complete and past its expiry deadline. */
    boolean isExpired(long now) {
        return expireAtMillis != 0 && now >= expireAtMillis && !processing();
    }

    boolean isLeased(long now) {
        return leaseTimeoutMillis > now;
    }

    boolean isSoftPinned(long now) {
        return softPinDeadlineMillis() > now;
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

    /**
     * Drops replicas whose segment is gone; returns how many were dropped. A sweep asks every object after a node
     * leaves: one replica on a live segment, as nearly every object has, is answered without a list view.
     */
    int dropDeadReplicas() {
        Object slot = replicaSlot;
        if (slot == null || slot instanceof ReplicaRecord r && !r.isOnDeadSegment()) {
            return 0;
        }
        List<ReplicaRecord> replicas = replicas();
        int before = replicas.size();
        replicas.removeIf(ReplicaRecord::isOnDeadSegment);
        return before - replicas.size();
    }

    /** Whether a replica is still being written (by a put or a promotion). */
    boolean hasProcessingReplica() {
        for (ReplicaRecord r : replicas()) {
            if (r.status() == io.tiffin.api.ReplicaStatus.PROCESSING) {
                return true;
            }
        }
        return false;
    }

    /** Forgets the pending offload or promotion (not its replicas or queue entries). */
    void clearTask() {
        endOffload();
        endPromotion();
    }

    /**
     * Notes the buffers of {@code writerId}'s put of this key (of {@code version}) that yielded to this recovered
     * object while still being written: they are quarantined until the writer's put timeout, but freed as soon as
     * the writer ends or revokes its put ({@link #releaseYielded}), so the node records of that put, complete and
     * newer than this object's, do not outlive it long enough to win the next takeover.
     */
    void noteYielded(String writerId, long version, List<ReplicaRecord> writing) {
        if (!writing.isEmpty()) {
            rare().yielded = new Yielded(writerId, version, List.copyOf(writing));
        }
    }

    /**
     * Frees the buffers of the put of {@code writerId} that yielded to this object, now that its writer has
     * ended or revoked it (it writes there no more); whether there was one. Their quarantine's later free is a
     * no-op ({@link ReplicaRecord#free} is idempotent).
     */
    boolean releaseYielded(String writerId) {
        Yielded y = rare == null ? null : rare.yielded;
        if (y == null || !y.writerId().equals(writerId)) {
            return false;
        }
        rare.yielded = null;
        dropRareIfUnused();
        for (ReplicaRecord r : y.replicas()) {
            r.free(y.version());
        }
        return true;
    }

    /** Frees every replica buffer (the object is being erased). */
    void freeAll() {
        for (ReplicaRecord r : replicas()) {
            r.free(version);
        }
        replicaSlot = null;
    }
}
