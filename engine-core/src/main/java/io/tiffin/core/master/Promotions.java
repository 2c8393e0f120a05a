package io.tiffin.core.master;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.List;

/**
 * Promotions from the SSD tier: counting the reads an object's SSD copy serves, queueing its promotion once it is
 * read often enough ({@code promotion.admission-threshold}), and the memory replica a node writes for it, from its
 * start to its end. {@link TierCoordinator} keeps the rest of the SSD tier's records.
 *
 * <p>Thread-safe: {@link #countSsdOnlyRead} expects the caller to hold the object's shard lock; the others take it
 * through the {@link ObjectTable}. Lock order as {@link TierCoordinator}'s.
 */
final class Promotions {
    private final TierSettings settings;
    private final StorageTier tier;
    private final ObjectTable table;
    private final SegmentRegistry segments;
    private final ReplicaPlacement placement;
    private final Quarantine quarantine;
    private final MasterCounters counters;
    private final Ticker ticker;
    private final PutDeadlines deadlines;

    Promotions(TierSettings settings, StorageTier tier, ObjectTable table, SegmentRegistry segments,
               ReplicaPlacement placement, Quarantine quarantine, MasterCounters counters, Ticker ticker,
               PutDeadlines deadlines) {
        this.settings = settings;
        this.tier = tier;
        this.table = table;
        this.segments = segments;
        this.placement = placement;
        this.quarantine = quarantine;
        this.counters = counters;
        this.ticker = ticker;
        this.deadlines = deadlines;
    }

    /**
     * Counts a read served from SSD and queues a promotion once the object is read often enough. Caller holds
     * the shard lock.
     */
    void countSsdOnlyRead(ObjectMetadata m) {
        long hits = tier.recordSsdRead(m.key.hashCode() * 0x9E3779B97F4A7C15L + m.key.length());
        if (hits < settings.promotionThreshold()) {
            return;
        }
        DiskReplica d = m.diskReplicas().get(0);
        if (m.promotionQueued() && !d.nodeId().equals(m.taskNode())) {
            return;
        }
        if (tier.queuePromotion(d.nodeId(), m.key, m.size(), hits)) {
            m.startPromotion(d.nodeId(), ticker.millis());
            deadlines.taskStarted(m.key, m.taskStartMillis());
            counters.promotionsQueued.increment();
        }
    }

    /**
     * Allocates the memory replica of a promotion (on the node's own segment when it fits) and returns
     * where to write it. Codes: OBJECT_NOT_FOUND (removed meanwhile), OBJECT_ALREADY_EXISTS (already in
     * memory), NO_AVAILABLE_HANDLE, INTERNAL_ERROR (the allocation strategy failed).
     */
    KeyResult<ReplicaDescriptor> promotionStart(String nodeId, String key) {
        return table.inShard(key, shard -> {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null || !m.hasDiskReplicaOn(nodeId)) {
                return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
            }
            if (m.hasReadableMemoryReplica() || m.processing() || !m.replicas().isEmpty()) {
                m.endPromotion();
                return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
            }
            List<String> preferred = new ArrayList<>();
            for (MountedSegment s : segments.segments()) {
                if (s.nodeId().equals(nodeId)) {
                    preferred.add(s.name());
                }
            }
            SegmentReplicaSink sink = placement.sink(m.size(), m.key, 1);
            if (!placement.place(new AllocationRequest(m.size(), 1, preferred, nodeId), sink)) {
                m.endPromotion();
                return KeyResult.failed(key, ErrorCode.INTERNAL_ERROR);
            }
            if (sink.placed() == 0) {
                placement.noteAllocationFailure(m.size());
                m.endPromotion();
                counters.promotionFailures.increment();
                return KeyResult.failed(key, ErrorCode.NO_AVAILABLE_HANDLE);
            }
            MountedSegment seg = sink.segment(0);
            ReplicaRecord r = new ReplicaRecord(table.nextReplicaId(), seg, sink.handle(0), sink.offset(0));
            m.replicas().add(r);
            m.startPromotion(nodeId, ticker.millis());
            deadlines.taskStarted(m.key, m.taskStartMillis());
            // the promoting node writes it (and the master frees a stuck promotion's buffer no earlier)
            return KeyResult.ok(key, r.toDescriptor(m.size(), DataGrant.WRITE,
                    m.taskStartMillis() + quarantine.writerTimeoutMillis()));
        });
    }

    /** Completes (or abandons) a promotion's memory replica. A failed promotion leaves the SSD copy readable. */
    ErrorCode promotionEnd(String nodeId, String key, long replicaId, boolean success) {
        return table.inShard(key, shard -> {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null) {
                return ErrorCode.OBJECT_NOT_FOUND;
            }
            m.endPromotion();
            for (ReplicaRecord r : m.replicas()) {
                if (r.id == replicaId && r.status() == ReplicaStatus.PROCESSING) {
                    if (success) {
                        r.status(ReplicaStatus.COMPLETE);
                        counters.promotions.increment();
                    } else {
                        r.free(m.version);
                        m.replicas().remove(r);
                        counters.promotionFailures.increment();
                    }
                    return ErrorCode.OK;
                }
            }
            return ErrorCode.REPLICA_NOT_FOUND;
        });
    }
}
