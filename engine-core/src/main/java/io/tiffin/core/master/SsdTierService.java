package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import java.util.List;

/**
 * The SSD tier's side of the master, as nodes and operators reach it: a node registers its SSD tier, reports the
 * copies it holds, polls offload and promotion tasks and reports their outcome, and, as it stops, has its segment's
 * sole copies offloaded ({@link #drain}); the gauges read the tier's
 * counts. It delegates to the {@link TierCoordinator} (the tier's logic) and reads the object table for the
 * checksum a promotion must match. {@link MasterService} holds one ({@link MasterService#ssdTier()}).
 *
 * <p>Thread-safe: it holds no state of its own; the coordinator and the table lock as their javadoc says.
 */
public final class SsdTierService {
    private final TierCoordinator tier;
    private final ObjectTable table;
    private final SegmentRegistry segments;
    private final DiskFloors floors;
    /** Told of each node whose scan has been reported in full ({@link Recovery#scanned}). */
    private final java.util.function.Consumer<String> scanned;

    SsdTierService(TierCoordinator tier, ObjectTable table, SegmentRegistry segments, DiskFloors floors,
                   java.util.function.Consumer<String> scanned) {
        this.tier = tier;
        this.table = table;
        this.segments = segments;
        this.floors = floors;
        this.scanned = scanned;
    }

    public TierSettings tierSettings() {
        return tier.settings();
    }

    /** Bytes of SSD capacity registered by live nodes. */
    public long ssdCapacityBytes() {
        return tier.ssdCapacityBytes();
    }

    public int offloadsInFlight() {
        return tier.offloadsInFlight();
    }

    public int promotionsQueued() {
        return tier.promotionsQueued();
    }

    /**
     * A node announces its SSD tier. It must have mounted a segment first (that gives its endpoint).
     *
     * @throws TiffinException {@code SEGMENT_NOT_FOUND} when it has not
     */
    public void registerStorage(String nodeId, long capacity) {
        tier.registerStorage(nodeId, capacity);
    }

    /**
     * A node that stops asks for what would be lost with its memory to be copied to its SSD tier first (its task
     * polls name the segment, {@code TaskPollRequest.drain_segment}): the segment takes no new puts, and every object
     * whose readable replicas are all in it and that has no SSD copy gets an offload to the node, as many as the
     * offload queue takes (the next poll queues more). Objects being written, or whose offload failed, are left out.
     *
     * @return how many such objects have no SSD copy yet, queued or running offloads included (0 = the node may stop),
     *     and how many were left out because their offload failed (lost with the node's memory)
     * @throws TiffinException {@code SEGMENT_NOT_FOUND} when {@code nodeId} has no segment {@code segmentName}
     */
    public Drain drain(String nodeId, String segmentName) {
        MountedSegment s = segments.get(segmentName);
        if (s == null || !s.nodeId().equals(nodeId)) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "drain: node " + nodeId + " has no segment "
                    + segmentName + " mounted");
        }
        s.setDraining(true);
        List<String> keys = s.ownerKeys();
        long[] counts = new long[2];
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m == null || m.size() == 0 || m.processing() || m.hasDiskReplica() || !onlyIn(m, s)) {
                return;
            }
            if (m.offloadFailed()) {
                counts[1]++;
                return;
            }
            counts[0]++;
            if (!m.offloadPending() && !m.promotionQueued()) {
                tier.queueOffload(m); // false while the queue is full: a later poll queues it
            }
        });
        return new Drain(counts[0], counts[1]);
    }

    /**
     * Where a stopping node's drain stands: objects only its segment holds still without an SSD copy ({@code
     * remaining}), and those left out because their offload failed ({@code failed}). Thread-safe (immutable).
     */
    public record Drain(long remaining, long failed) {
    }

    /** Whether {@code m} has readable memory replicas, all of them in {@code s}. Caller holds the shard lock. */
    private static boolean onlyIn(ObjectMetadata m, MountedSegment s) {
        boolean any = false;
        for (ReplicaRecord r : m.replicas()) {
            if (r.isReadable()) {
                if (r.segment != s) {
                    return false;
                }
                any = true;
            }
        }
        return any;
    }

    /**
     * Records SSD copies a node holds: after a restart (everything its scan found) or after an offload.
     * An object the master does not know is created from its SSD copy (with a new version); one whose
     * size differs is left alone. A pending offload of the key to this node is complete; with on-evict
     * offload its memory replicas are freed now (kept until the lease ends if it is being read).
     *
     * @throws TiffinException {@code SEGMENT_NOT_FOUND} when the node has no registered SSD tier
     */
    public void reportDiskObjects(String nodeId, List<String> keys, List<Long> sizes) {
        tier.reportDiskObjects(nodeId, keys, sizes, List.of(), List.of());
    }

    /**
     * As {@link #reportDiskObjects(String, List, List)} for a node's report: each copy with its version (0 = unknown)
     * and the expiry deadline it was written with (or a later EXPIRE set). After a takeover an object known only
     * from its SSD copy keeps both, and a recovered object of that version gets the copy.
     */
    public void reportDiskObjects(String nodeId, List<io.tiffin.core.transport.proto.DiskObject> copies) {
        reportDiskObjects(nodeId, copies, false);
    }

    /**
     * As {@link #reportDiskObjects(String, List)}; {@code scanComplete} marks the last report of the scan that follows
     * the node's registration (every copy it holds has been reported then).
     */
    public void reportDiskObjects(String nodeId, List<io.tiffin.core.transport.proto.DiskObject> copies,
                                  boolean scanComplete) {
        int n = copies.size();
        List<String> keys = new java.util.ArrayList<>(n);
        List<Long> sizes = new java.util.ArrayList<>(n);
        List<Long> versions = new java.util.ArrayList<>(n);
        List<Long> deadlines = new java.util.ArrayList<>(n);
        for (var c : copies) {
            keys.add(c.getKey());
            sizes.add(c.getSize());
            versions.add(c.getVersion());
            deadlines.add(c.getExpireAtMs());
        }
        floors.report(nodeId, scanComplete, () -> tier.reportDiskObjects(nodeId, keys, sizes, versions, deadlines));
        if (scanComplete) {
            tier.scanComplete(nodeId);
            scanned.accept(nodeId); // after the copies are known: a recovery waiting for them may end
        }
    }

    /**
     * Offloads that failed (for example a full disk): the memory copies stay, eviction will drop them.
     * {@code versions}: the version each failed task named, parallel to {@code keys} (empty: unknown, as from a node
     * that sends none); a failure of another version than the object's pending offload does not end that offload.
     */
    public void offloadFailed(String nodeId, List<String> keys, List<Long> versions) {
        tier.offloadFailed(nodeId, keys, versions);
    }

    /** SSD copies on nodes that are away whose keys the master keeps ({@code AwayCopies}); they read as missing. */
    public long awayCopies() {
        return tier.awayCopies();
    }

    /** Work for a node: offloads to write and promotions to perform, hottest promotions first. */
    StorageTier.Tasks pollTasks(String nodeId, int maxOffloads, int maxPromotions) {
        return pollTasks(nodeId, maxOffloads, maxPromotions, List.of(), List.of());
    }

    /**
     * As {@link #pollTasks(String, int, int)} from a node whose backend failed the deletes of its previous poll named
     * by {@code undeleted} (with {@code undeletedVersions}, parallel): they are asked again.
     */
    StorageTier.Tasks pollTasks(String nodeId, int maxOffloads, int maxPromotions, List<String> undeleted,
                                List<Long> undeletedVersions) {
        return tier.pollTasks(nodeId, maxOffloads, maxPromotions, undeleted, undeletedVersions);
    }

    /**
     * {@code nodeId}'s backend failed to write the new deadlines of its SSD copies of {@code keys} (of {@code versions},
     * parallel) into their stamps: its next poll carries each object's current deadline again.
     */
    void unstamped(String nodeId, List<String> keys, List<Long> versions) {
        tier.unstamped(nodeId, keys, versions);
    }

    /**
     * Allocates the memory replica of a promotion (on the node's own segment when it fits) and returns
     * where to write it. Codes: OBJECT_NOT_FOUND (removed meanwhile), OBJECT_ALREADY_EXISTS (already in
     * memory), NO_AVAILABLE_HANDLE, INTERNAL_ERROR (the allocation strategy failed).
     */
    public KeyResult<ReplicaDescriptor> promotionStart(String nodeId, String key) {
        return tier.promotions().promotionStart(nodeId, key);
    }

    /** The CRC32C its writer gave the object at {@code key} (0 = none, or no such object). */
    public int checksumOf(String key) {
        return table.inShard(key, shard -> {
            ObjectMetadata m = shard.objects.get(key);
            return m == null ? ObjectLocation.NO_CHECKSUM : m.crc32c;
        });
    }

    /**
     * Completes (or abandons) a promotion's memory replica. A failed promotion leaves the SSD copy
     * readable. Codes: OBJECT_NOT_FOUND, REPLICA_NOT_FOUND.
     */
    public ErrorCode promotionEnd(String nodeId, String key, long replicaId, boolean success) {
        return tier.promotions().promotionEnd(nodeId, key, replicaId, success);
    }

    /** A node's backend is about to delete these SSD copies: forget them (erasing objects left with nothing). */
    public void evictDiskReplicas(String nodeId, List<String> keys) {
        tier.evictDiskReplicas(nodeId, keys);
    }
}
