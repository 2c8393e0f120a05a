package io.tiffin.core.master;

import io.tiffin.core.transport.proto.DiskFloor;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Keeps a removed object from coming back, at a takeover, from the SSD copy of a node that was gone when it was
 * removed. With failover on, a removal answers once its SSD copies are off the disks ({@link NodeForgets}); a node
 * whose process was gone (its connection refused) or whose segment left meanwhile counts as done without deleting
 * anything, and so does a deletion the node's backend failed (a full or broken disk: its FORGET answer names it);
 * those deletions wait for the node's task polls in this master's memory. A master that took over before the node
 * deleted the copy would adopt it as an object. So such deletions are first recorded in the cluster facts
 * ({@link ClusterFacts#recordLostDeletions}), durably, before the removal answers: the keys with their versions, or,
 * once the listed keys of all nodes pass {@link ClusterFacts#MAX_LISTED_KEY_BYTES}, a <em>floor</em> for the node
 * (every version handed out so far). A master that is reported a copy it does not know deletes it instead of adopting
 * it when the facts list its key, or when it lies at or under the floor: a floor also drops the node's SSD-only
 * objects that were not removed, the price of many removals during a double fault (a node and the leader both gone),
 * a cache miss each, never a removed object served. Once the node has reported its whole scan ({@code
 * DiskObjectsReport.scan_complete}) and the deletions that scan led to are on its disk (their FORGETs answered), its
 * entry is cleared.
 *
 * <p>A node with an SSD tier that leaves (a graceful stop, expiry) gets an <em>away floor</em> too ({@link
 * #recordAway}): the master it left forgets its SSD-only objects and keeps their keys in memory ({@link AwayCopies}),
 * so it ignores the floor of its own term, while a master of another term, which knows none of those keys, deletes
 * every copy at or under it that the node reports.
 *
 * <p>Without failover nothing is kept (no master takes over from this one).
 *
 * <p>Thread-safe: the facts and the forgets are set once, before the master serves; scans are tracked per node in a
 * concurrent map.
 */
final class DiskFloors {
    private static final Logger LOG = LogManager.getLogger(DiskFloors.class);

    /** What a node's copies may hold of removed objects: listed keys with their versions, and a floor (0 = none). */
    record Lost(long floor, Map<String, Long> keys) {
        /** The entry as a master of {@code term} reads it: an away floor of its own term is not for it. */
        private static Lost of(DiskFloor f, long term) {
            Map<String, Long> keys = new HashMap<>(f.getKeysCount() * 2);
            for (int i = 0; i < f.getKeysCount(); i++) {
                keys.put(f.getKeys(i), f.getKeyVersions(i));
            }
            long away = f.getAwayTerm() == term ? 0 : f.getAwayFloor();
            return new Lost(Math.max(f.getVersion(), away), keys);
        }

        /** Whether a copy of {@code key} of {@code version} (0 = unknown) may be of a removed object. */
        boolean covers(String key, long version) {
            if (floor > 0 && (version == 0 || version <= floor)) {
                return true;
            }
            Long removed = keys.get(key);
            return removed != null && (removed == 0 || version == 0 || version <= removed);
        }
    }

    private volatile ClusterFacts facts;
    private volatile NodeForgets forgets;
    private volatile java.util.function.LongSupplier term = () -> 0;
    /** The deletions each scan of a node with an entry has led to so far, until its last report. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> scans = new ConcurrentHashMap<>();

    /** With failover on: where the entries are kept, and the FORGETs that delete copies they cover. */
    void enable(ClusterFacts clusterFacts, NodeForgets nodeForgets, java.util.function.LongSupplier masterTerm) {
        this.facts = clusterFacts;
        this.forgets = nodeForgets;
        this.term = masterTerm;
    }

    /**
     * With failover on, records that {@code nodeId}, which has an SSD tier, is leaving while this master keeps the keys
     * of its SSD-only objects in memory only ({@link AwayCopies}): a master that takes over before it returns deletes
     * the copies its scan reports instead of adopting them ({@code DiskFloor.away_floor}). Durable when this returns.
     */
    void recordAway(String nodeId) {
        ClusterFacts f = facts;
        if (f != null) {
            f.recordAwayFloor(nodeId, term.getAsLong());
        }
    }

    /** What unknown copies {@code nodeId} reports are deleted rather than adopted; null for none. */
    Lost lostOn(String nodeId) {
        ClusterFacts f = facts;
        DiskFloor entry = f == null ? null : f.diskFloor(nodeId);
        return entry == null ? null : Lost.of(entry, term.getAsLong());
    }

    /**
     * Runs {@code report} (the master taking one of {@code nodeId}'s reports of its SSD copies), collecting the
     * deletions it sends through FORGETs; after the last report of a scan, clears the node's entry once they are all
     * done.
     */
    void report(String nodeId, boolean scanComplete, Runnable report) {
        ClusterFacts f = facts;
        NodeForgets n = forgets;
        if (f == null || n == null || f.diskFloor(nodeId) == null) {
            report.run(); // no entry to clear (the usual case): nothing kept
            if (scanComplete) {
                scans.remove(nodeId);
            }
            return;
        }
        CompletableFuture<Void> deletions = n.collect(report);
        // a failure is kept (the entry then stays); what is done already is dropped, so nothing grows while it waits
        CompletableFuture<Void> all = scans.merge(nodeId, deletions, (a, b) -> a.isCompletedExceptionally() ? a
                : a.isDone() ? b : CompletableFuture.allOf(a, b));
        if (!scanComplete) {
            return;
        }
        scans.remove(nodeId, all);
        DiskFloor seen = f.diskFloor(nodeId);
        all.whenComplete((ok, failed) -> {
            if (failed != null) {
                LOG.warn("Node {}'s record of lost SSD deletions stays: deletions of its scan failed ({})", nodeId,
                        failed.toString());
                return;
            }
            try {
                f.clearDiskFloor(nodeId, seen);
                LOG.info("Node {} reported its SSD copies and deleted those removals had left: its record of lost"
                        + " deletions is cleared", nodeId);
            } catch (RuntimeException e) {
                LOG.warn("Node {}'s record of lost SSD deletions stays: {}", nodeId, e.toString());
            }
        });
    }
}
