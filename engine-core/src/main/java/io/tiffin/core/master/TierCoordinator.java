package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The SSD tier as the master's objects see it: which objects have copies on which node's SSD, offloads
 * (write-through at PutEnd, or instead of an eviction), reads served from SSD and the promotions they
 * trigger ({@link Promotions}), and the nodes' reports of all of these. {@link StorageTier} holds the per-node
 * queues; this class keeps the objects' records ({@link ObjectMetadata#diskReplicas()}, the pending task) in step
 * with them.
 *
 * <p>Thread-safe: methods that take a key take its shard lock through the {@link ObjectTable}; those that
 * are handed an {@link ObjectMetadata} expect the caller to hold its shard lock. Lock order: shard →
 * quarantine / tier ({@link StorageTier} monitor) / segment.
 */
final class TierCoordinator {
    private static final Logger LOG = LogManager.getLogger(TierCoordinator.class);

    private final TierSettings settings;
    private final StorageTier tier;
    private final ObjectTable table;
    private final SegmentRegistry segments;
    private final ReplicaPlacement placement;
    private final Quarantine quarantine;
    private final MasterCounters counters;
    private final Ticker ticker;
    private final PutDeadlines deadlines;
    private final DiskFloors floors;
    private final Promotions promotions;
    /** {@code master.lease-ttl}: how long a client may still reuse a location a previous master handed out. */
    private final long leaseTtlMillis;
    /** Keys of objects forgotten with their away node's SSD copies, so removals and new puts still reach them. */
    private final AwayCopies away = new AwayCopies();
    /** The keys with SSD copies, per node: a node's loss visits those objects only. */
    private final DiskCopyIndex diskIndex = new DiskCopyIndex();
    /** Objects with at least one SSD copy, and the bytes of all SSD copies, as copies are listed and dropped. */
    private final java.util.concurrent.atomic.AtomicLong ssdObjects = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong ssdBytes = new java.util.concurrent.atomic.AtomicLong();

    TierCoordinator(TierSettings settings, ObjectTable table, SegmentRegistry segments, ReplicaPlacement placement,
                    Quarantine quarantine, MasterCounters counters, Ticker ticker, PutDeadlines deadlines,
                    DiskFloors floors, long leaseTtlMillis) {
        this.leaseTtlMillis = leaseTtlMillis;
        this.deadlines = deadlines;
        this.floors = floors;
        this.settings = settings;
        this.tier = new StorageTier(settings, table::lastVersion);
        this.table = table;
        this.segments = segments;
        this.placement = placement;
        this.quarantine = quarantine;
        this.counters = counters;
        this.ticker = ticker;
        this.promotions = new Promotions(settings, tier, table, segments, placement, quarantine, counters, ticker,
                deadlines);
    }

    Promotions promotions() {
        return promotions;
    }

    TierSettings settings() {
        return settings;
    }

    DiskFloors floors() {
        return floors;
    }

    /**
     * With failover on, has the nodes holding SSD copies of {@code m} report them with its current deadline from now
     * on (it changed after they were written), so a master that takes over keeps it for an object known only from
     * them. Caller holds the shard lock.
     */
    void recordDiskDeadlines(ObjectMetadata m) {
        for (DiskReplica d : m.diskReplicas()) {
            recordDiskDeadline(d.nodeId(), m);
        }
    }

    /**
     * Has {@code nodeId} write {@code m}'s deadline into the stamp of its SSD copy: with its FORGETs (failover on:
     * the EXPIRE answers once the node has it), else with its next task poll (kept while the node is away).
     */
    private void recordDiskDeadline(String nodeId, ObjectMetadata m) {
        MountedSegment s = forgetsSegmentOf(nodeId);
        if (s == null || !s.recordDiskDeadline(m.key, m.version, m.expireAtMillis)) {
            tier.queueDeadline(nodeId, m.key, m.version, m.expireAtMillis);
        }
    }

    /** The segment whose FORGETs carry {@code nodeId}'s SSD changes (its first; null when it has none mounted). */
    private MountedSegment forgetsSegmentOf(String nodeId) {
        List<String> names = segments.segmentNamesOf(nodeId); // its FORGETs go to its data plane, in order
        return names.isEmpty() ? null : segments.get(names.getFirst());
    }

    /** Bytes of SSD capacity registered by live nodes. */
    long ssdCapacityBytes() {
        return tier.capacityBytes();
    }

    int offloadsInFlight() {
        return tier.offloadsInFlight();
    }

    int promotionsQueued() {
        return tier.promotionsQueued();
    }

    // ------------------------------------------------------------------ nodes

    /** A node announces its SSD tier. It must have mounted a segment first (that gives its endpoint). */
    void registerStorage(String nodeId, long capacity) {
        String endpoint = null;
        for (MountedSegment s : segments.segments()) {
            if (s.nodeId().equals(nodeId)) {
                endpoint = s.endpoint();
                break;
            }
        }
        if (endpoint == null) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND,
                    "register storage: node " + nodeId + " has no mounted segment; mount one first");
        }
        tier.register(nodeId, endpoint, capacity);
        LOG.info("Node {} registered an SSD tier of {} bytes", nodeId, capacity);
        pointCopiesAt(nodeId, endpoint);
    }

    /**
     * Points the SSD copies listed for {@code nodeId} at {@code endpoint}: a node back before {@code master.node-ttl}
     * on another address (the default {@code node.port} 0 picks a free one). Every listed copy, also one its scan will
     * not report (its file lost meanwhile): a read of that one reaches the node, which tells the master it is gone,
     * where the old address would fail the read until the node expired. O(the node's listed copies).
     */
    private void pointCopiesAt(String nodeId, String endpoint) {
        List<String> keys = diskIndex.keysOf(List.of(nodeId));
        int[] moved = new int[1];
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m != null && m.moveDiskReplica(nodeId, endpoint)) {
                moved[0]++;
            }
        });
        if (moved[0] > 0) {
            LOG.info("Node {} is back at {}: {} SSD copies listed for it now point there", nodeId, endpoint, moved[0]);
        }
    }

    /**
     * {@code nodeId} is leaving (a graceful stop, expiry, forgotten): with failover on, a master that takes over before
     * it returns must not adopt its copies, whose removals meanwhile this master keeps in memory only ({@link
     * DiskFloors#recordAway}). Call before {@link #nodeGone}; takes no shard lock; may write the cluster facts.
     */
    void nodeLeaving(String nodeId) {
        if (tier.hasStorage(nodeId)) {
            floors.recordAway(nodeId);
        }
    }

    /**
     * The node left (stopped, expired, forgotten or restarted): forgets its SSD tier and its queued tasks.
     * Its SSD copies stay listed until the objects are swept ({@link #dropCopiesOf}); a restarted node
     * registers again and its copies survive.
     */
    void nodeGone(String nodeId) {
        tier.unregister(nodeId);
    }

    private StorageTier.NodeInfo storageNode(String nodeId) {
        StorageTier.NodeInfo n = tier.node(nodeId);
        if (n == null) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND,
                    "node " + nodeId + " has no registered SSD tier; it must register after mounting");
        }
        return n;
    }

    /**
     * Work for a node: offloads to write and promotions to perform, hottest promotions first, and deletes; those of
     * its previous poll are done but for {@code undeleted} (its backend failed them), asked again.
     */
    StorageTier.Tasks pollTasks(String nodeId, int maxOffloads, int maxPromotions, List<String> undeleted,
                                List<Long> undeletedVersions) {
        if (!undeleted.isEmpty()) {
            counters.failedDiskDeletes.add(undeleted.size());
        }
        return tier.poll(nodeId, Math.max(0, maxOffloads), Math.max(0, maxPromotions), undeleted, undeletedVersions);
    }

    /**
     * {@code nodeId}'s backend failed to write the new deadlines of its SSD copies of {@code keys} (of {@code versions},
     * parallel) into their stamps: queues each object's current deadline for the node's poll again, if the node still
     * holds a copy of that version (else the copy's deletion, or its new offload with the deadline, is on its way).
     */
    void unstamped(String nodeId, List<String> keys, List<Long> versions) {
        if (keys.isEmpty()) {
            return;
        }
        counters.failedDiskStamps.add(keys.size());
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m != null && m.version == versions.get(i) && m.hasDiskReplicaOn(nodeId)) {
                tier.queueDeadline(nodeId, m.key, m.version, m.expireAtMillis);
            }
        });
    }

    // ------------------------------------------------------------------ offload

    /**
     * Records SSD copies a node holds: after a restart (everything its scan found) or after an offload.
     * An object the master does not know is created from its SSD copy (with a new version), unless the copy may be of
     * an object removed while the node was gone ({@link DiskFloors}) or the node has a deletion of it pending; one
     * whose size differs is deleted, and so is the copy of an offload the master gave up ({@link
     * StorageTier#abandonOffload}: its object was replaced or erased while the node wrote it). A pending offload of
     * the key to this node is complete; with on-evict offload its memory replicas are freed now (kept until the lease
     * ends if it is being read).
     */
    void reportDiskObjects(String nodeId, List<String> keys, List<Long> sizes, List<Long> versions,
                           List<Long> deadlines) {
        StorageTier.NodeInfo node = storageNode(nodeId);
        long now = ticker.millis();
        DiskFloors.Lost lost = floors.lostOn(nodeId);
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            long size = sizes.get(i);
            long version = versions.isEmpty() ? 0 : versions.get(i);
            long deadline = deadlines.isEmpty() ? 0 : deadlines.get(i);
            if (table.validateKey(key) != ErrorCode.OK || size <= 0 || size > ObjectMetadata.MAX_SIZE) {
                return;
            }
            ObjectMetadata m = shard.objects.get(key);
            long givenUp = tier.takeAbandoned(nodeId, key, version);
            if (givenUp >= 0 && !(m != null && m.offloadAsksFor(nodeId, version))) {
                // the copy of an offload given up (its object replaced or erased since): not what any object holds
                // now. A copy the pending offload asks for is that offload's (the object offloaded again after its
                // first offload timed out, or a copy of a version the node does not know).
                tier.queueDelete(nodeId, key, givenUp);
                counters.staleDiskCopies.increment();
                return;
            }
            if (m != null && m.recovered() && version > m.version && !m.processing() && m.taskNode() == null) {
                dropOlderRecovered(shard, m, now); // the copy is of the object that replaced it: it wins
                m = null;
            }
            if (m == null && lost != null && lost.covers(key, version)) {
                // maybe removed while the node was gone, by a master that could not have it deleted: not adopted
                tier.queueDelete(nodeId, key, version);
                MountedSegment s = forgetsSegmentOf(nodeId);
                if (s != null) {
                    s.forgetDiskCopy(key, version); // answered once deleted (DiskFloors clears the entry then)
                }
                counters.staleDiskCopies.increment();
                return;
            }
            if (m == null && tier.hasPendingDelete(nodeId, key)) {
                // removed while the node was away: the delete goes out at its next poll
                counters.staleDiskCopies.increment();
                return;
            }
            if (m == null && (away.deleteOnReturn(nodeId, key, version) || tier.overflowCovers(nodeId, version))) {
                // the node was away for longer than offload.away-ttl (removals meanwhile were not noted), or more
                // deletes waited for it than were kept
                tier.queueDelete(nodeId, key, version);
                counters.staleDiskCopies.increment();
                return;
            }
            if (m == null) {
                m = new ObjectMetadata(key, "ssd:" + nodeId, size, now, false, false, List.of());
                m.complete();
                if (version > 0) { // the copy's own version (from its offload task, kept in its stamp)
                    table.noteVersion(version);
                    m.version = version;
                    m.markRecovered();
                } else {
                    m.version = table.nextVersion();
                }
                m.leaseTimeoutMillis = now;
                // as a recovered memory record (SegmentAttachment): a client may still reuse a location of this
                // copy that a previous master handed out, so a removal or replacement waits that out
                m.noteCachedLookup(now, leaseTtlMillis, Long.MAX_VALUE, 0);
                table.insert(shard, m);
                if (version > 0 && deadline > 0) {
                    table.setDeadline(m, deadline); // passed meanwhile: expired at once, as a memory record's
                }
            } else if (!m.hasDiskReplicaOn(nodeId) && !m.offloadAsksFor(nodeId, version)
                    && tier.deleteCovers(nodeId, key, version)) {
                // its deletion is owed to the node (queued when the node left while the object lived on elsewhere):
                // listed again, it would name bytes the node is about to delete, and the object's other holders
                // would not keep their copy when they stop (an acknowledged object lost)
                counters.staleDiskCopies.increment();
                return;
            } else if (!m.hasDiskReplicaOn(nodeId) && !m.offloadAsksFor(nodeId, version)
                    && !(m.recovered() && version == m.version)) {
                // The master knows this key but never asked this node for it (the copy predates a remove
                // and re-put, or the node was dropped meanwhile), or asked for another version of it (an offload
                // a replacement gave up, reported while the new object's own offload to the node is pending): it
                // may hold other bytes. Delete it (that version only: the node keeps a newer copy).
                tier.queueDelete(nodeId, key, version);
                counters.staleDiskCopies.increment();
                return;
            } else if (m.size() != size) {
                LOG.warn("Node {} reported {} on SSD with {} bytes, but the master knows {} bytes; deleting that copy",
                        nodeId, key, size, m.size());
                tier.queueDelete(nodeId, key, version);
                return;
            }
            if (!m.hasDiskReplicaOn(nodeId)) {
                if (!m.hasDiskReplica()) {
                    ssdObjects.incrementAndGet();
                }
                m.addDiskReplica(new DiskReplica(table.nextReplicaId(), nodeId, node.endpoint(), size));
                diskIndex.add(nodeId, m.key);
                ssdBytes.addAndGet(size);
            }
            if (version == m.version && deadline != m.expireAtMillis) {
                recordDiskDeadline(nodeId, m); // moved while the copy was written (an EXPIRE during its offload)
            }
            if (m.offloadAsksFor(nodeId, version)) {
                m.endOffload();
                tier.offloadFinished(nodeId);
                counters.offloads.increment();
                if (settings.offloadMode() == TierSettings.OffloadMode.ON_EVICT) {
                    counters.evictedBytes.add(m.size());
                    if (m.isLeased(now)) {
                        quarantine.addAll(m.replicas(), m.version, m.leaseTimeoutMillis);
                        m.replicas().clear();
                    } else {
                        m.freeAll();
                    }
                }
            }
        });
    }

    /**
     * After a takeover: {@code m}, recovered from a commit record, is older than an SSD copy of its key a node reports
     * (the record of a replaced object whose FORGET had not reached the node when the previous master failed, such
     * as a promoted replica's). As between two records ({@code SegmentAttachment}), the newer wins: {@code m} goes,
     * its memory replicas quarantined until its lease ends (it may be read meanwhile), its other SSD copies deleted
     * (its version only). Caller holds the shard lock.
     */
    private void dropOlderRecovered(MetadataShard shard, ObjectMetadata m, long now) {
        LOG.debug("{}: the recovered v{} gives way to a newer SSD copy", m.key, m.version);
        m.replicas().forEach(r -> r.forgetRecord(m.version));
        quarantine.addAll(m.replicas(), m.version, Math.max(now, m.leaseTimeoutMillis));
        m.replicas().clear();
        dropDiskCopies(m);
        table.forget(shard, m.key);
    }

    /**
     * Offloads that failed (for example a full disk): the memory copies stay, eviction will drop them. {@code versions}
     * parallel to {@code keys}, or empty (unknown); only a failure of the pending offload's own version ends it.
     */
    void offloadFailed(String nodeId, List<String> keys, List<Long> versions) {
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            long version = versions.size() == keys.size() ? versions.get(i) : 0;
            tier.takeAbandoned(nodeId, keys.get(i), version); // an offload given up failed: no copy will come
            if (m != null && m.offloadAsksFor(nodeId, version)) {
                m.offloadFailedNow();
                tier.offloadFinished(nodeId);
                counters.offloadFailures.increment();
            }
        });
    }

    /** With write-through offload, queues the offload of an object just completed. Caller holds the shard lock. */
    void writeThrough(ObjectMetadata m) {
        if (settings.offloadMode() == TierSettings.OffloadMode.WRITE_THROUGH) {
            queueOffload(m);
        }
    }

    /**
     * With on-evict offload, queues the offload of an object eviction chose (one without SSD copy whose last
     * offload did not fail) instead of dropping it. Returns true if queued: its memory is freed when the
     * node reports the SSD copy. Caller holds the shard lock.
     */
    boolean offloadInsteadOfEvicting(ObjectMetadata m) {
        return settings.offloadMode() == TierSettings.OffloadMode.ON_EVICT && m.diskReplicas().isEmpty()
                && !m.offloadFailed() && queueOffload(m);
    }

    /** Queues an offload of one memory replica on a node with an SSD tier. Caller holds the shard lock. */
    boolean queueOffload(ObjectMetadata m) {
        if (m.size() == 0) {
            return false; // nothing to keep on a disk: an evicted 0-byte object is simply dropped
        }
        for (ReplicaRecord r : m.replicas()) {
            if (r.isReadable() && tier.hasStorage(r.segment.nodeId())) {
                OffloadTask task = OffloadTask.newBuilder()
                        .setKey(m.key).setSize(m.size()).setSegment(r.segment.name()).setOffset(r.offset())
                        .setVersion(m.version).setCrc32C(m.crc32c).setExpireAtMs(m.expireAtMillis).build();
                if (tier.queueOffload(r.segment.nodeId(), task)) {
                    m.startOffload(r.segment.nodeId(), ticker.millis());
                    deadlines.taskStarted(m.key, m.taskStartMillis());
                    return true;
                }
                return false;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ SSD copies going away

    /** A node's backend is about to delete these SSD copies: forget them (erasing objects left with nothing). */
    void evictDiskReplicas(String nodeId, List<String> keys) {
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            int dropped = m == null ? 0 : removeDiskCopies(m, d -> d.nodeId().equals(nodeId));
            if (dropped == 0) {
                return; // a repeated or late notice: nothing listed to drop
            }
            if (m.isEmpty() && !m.processing()) {
                table.forget(shard, m.key);
            }
            counters.diskEvictions.increment();
        });
        for (String k : keys) {
            tier.cancelPromotion(k);
        }
    }

    /**
     * Forgets the object's SSD copies and asks their nodes to delete them (or a restart would bring them back):
     * with failover on, through the node's FORGETs, so a removal answers once the copies are off the disk and a
     * master that takes over finds none; and always with the node's next task poll (kept while the node is away, and
     * harmless after the FORGET). Caller holds the shard lock.
     */
    void dropDiskCopies(ObjectMetadata m) {
        for (DiskReplica d : m.diskReplicas()) {
            tier.queueDelete(d.nodeId(), m.key, m.version);
            MountedSegment s = forgetsSegmentOf(d.nodeId());
            if (s != null) {
                s.forgetDiskCopy(m.key, m.version);
            }
        }
        removeDiskCopies(m, d -> true);
    }

    /**
     * Drops the object's SSD copies on {@code deadNodes} and abandons its task if one of them owns it.
     * Returns how many copies and replicas left the object. An object that lives on (replicas elsewhere) has its
     * copies' deletions queued for those nodes: listed nowhere any more, a copy would otherwise come back as an object
     * of its own, when its node returns, after a removal of the object. Caller holds the shard lock.
     */
    int dropCopiesOf(ObjectMetadata m, Set<String> deadNodes) {
        List<String> lost = new ArrayList<>(1);
        for (DiskReplica d : m.diskReplicas()) {
            if (deadNodes.contains(d.nodeId())) {
                lost.add(d.nodeId());
            }
        }
        int dropped = removeDiskCopies(m, d -> deadNodes.contains(d.nodeId()));
        if (m.taskNode() != null && deadNodes.contains(m.taskNode())) {
            dropped += abandonTask(m, false);
        }
        if (!m.isEmpty()) {
            for (String nodeId : lost) {
                tier.queueDelete(nodeId, m.key, m.version);
            }
        } else {
            long now = ticker.millis();
            for (String nodeId : lost) {
                away.note(nodeId, m.key, m.version, now); // the caller forgets the object
            }
        }
        return dropped;
    }

    /**
     * The object of {@code key} was removed (or was not there), or a new one is put under it: copies noted for the key
     * on away nodes ({@link AwayCopies}) are deleted at their nodes' next polls instead of coming back with them.
     * Cheap when no node is away. Caller holds the shard lock.
     */
    void forgetAwayCopies(String key) {
        if (away.noneNoted()) {
            return;
        }
        for (AwayCopies.Copy c : away.take(key)) {
            tier.queueDelete(c.nodeId(), key, c.version());
        }
    }

    /** As {@link #forgetAwayCopies(String)} for every noted key {@code matches} accepts (a regex removal, all). */
    void forgetAwayCopiesMatching(java.util.function.Predicate<String> matches) {
        if (away.noneNoted()) {
            return;
        }
        away.takeMatching(matches, table.lastVersion()).forEach((key, copies) -> {
            for (AwayCopies.Copy c : copies) {
                tier.queueDelete(c.nodeId(), key, c.version());
            }
        });
    }

    /** Copies noted on away nodes ({@link AwayCopies}). */
    long awayCopies() {
        return away.noted();
    }

    /**
     * Drops the notes of nodes away for longer than {@code offload.away-ttl} ({@link AwayCopies#expire}): their copies
     * are deleted if they return. Runs with the node expiry check.
     */
    void expireAwayCopies() {
        Map<String, Integer> expired = away.expire(ticker.millis(), settings.awayTtl().toMillis(), table.lastVersion(),
                tier::hasStorage);
        expired.forEach((nodeId, n) -> LOG.warn("Node {} has been away for more than offload.away-ttl ({}): the"
                + " master drops the keys of its {} SSD-only objects, and deletes its SSD copies if it returns (raise"
                + " offload.away-ttl to keep them across longer absences)",
                nodeId, settings.awayTtl(), n));
    }

    /** The node's scan is reported in full: what it did not report is not on its disk. */
    void scanComplete(String nodeId) {
        away.scanned(nodeId);
        tier.scanComplete(nodeId);
    }

    // ------------------------------------------------------------------ tasks given up

    /**
     * Gives up an object's pending offload or promotion (its node died, restarted or never reported): the
     * offload's slot is freed and a promotion's unfinished replica leaves the object — freed when its
     * release timeout has passed ({@code writerDone}), quarantined until then otherwise (a node declared
     * dead may still be copying into it). Returns how many replicas left the object. Caller holds the
     * shard lock.
     */
    int abandonTask(ObjectMetadata m, boolean writerDone) {
        if (m.offloadPending()) {
            tier.abandonOffload(m.taskNode(), m.key, m.version);
            tier.offloadFinished(m.taskNode());
        }
        int dropped = 0;
        if (!m.processing()) {
            if (writerDone) {
                for (Iterator<ReplicaRecord> it = m.replicas().iterator(); it.hasNext(); ) {
                    ReplicaRecord r = it.next();
                    if (r.status() == ReplicaStatus.PROCESSING) {
                        r.free(m.version);
                        it.remove();
                        dropped++;
                    }
                }
            } else {
                dropped = quarantine.takeWriting(m);
            }
        }
        m.clearTask();
        return dropped;
    }

    /**
     * Drops the SSD copies {@code which} accepts from {@code m}, the index and the tally; returns how many. Caller
     * holds the shard lock.
     */
    private int removeDiskCopies(ObjectMetadata m, java.util.function.Predicate<DiskReplica> which) {
        boolean had = m.hasDiskReplica();
        for (DiskReplica d : m.diskReplicas()) {
            if (which.test(d)) {
                diskIndex.remove(d.nodeId(), m.key);
                ssdBytes.addAndGet(-d.size());
            }
        }
        int dropped = m.removeDiskReplicasIf(which);
        if (had && !m.hasDiskReplica()) {
            ssdObjects.decrementAndGet();
        }
        return dropped;
    }

    /**
     * The keys of the objects that the loss of {@code nodes} may change beyond their memory replicas: those listed
     * with SSD copies on them and those with an SSD task in progress (whose node may be one of them). O(those keys);
     * a key may come more than once.
     */
    List<String> keysTouchedByLossOf(java.util.Collection<String> nodes) {
        List<String> keys = diskIndex.keysOf(nodes);
        keys.addAll(deadlines.taskKeys());
        return keys;
    }

    /** Objects with an SSD copy and the bytes of all SSD copies: {objects, bytes}. O(1). */
    long[] ssdTally() {
        return new long[] {ssdObjects.get(), ssdBytes.get()};
    }

    /** How many keys are listed with an SSD copy on {@code nodeId} (tests). */
    int diskCopiesListedFor(String nodeId) {
        return diskIndex.count(nodeId);
    }

    /** {@link #abandonTask} for every object whose task belongs to {@code nodeId}; erases objects left empty. */
    void abandonTasksOf(String nodeId) {
        List<String> keys = deadlines.taskKeys(); // every task in progress has its key there: O(tasks), not O(keys)
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m != null && nodeId.equals(m.taskNode())) {
                abandonTask(m, false);
                if (m.isEmpty()) {
                    table.forget(shard, m.key);
                }
            }
        });
    }
}
