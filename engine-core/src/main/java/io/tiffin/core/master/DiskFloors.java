package io.tiffin.core.master;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Keeps a removed object from coming back, at a takeover, from the SSD copy of a node that was gone when it was
 * removed. With failover on, a removal answers once its SSD copies are off the disks ({@link NodeForgets}); a node
 * whose process was gone (its connection refused) or whose segment left meanwhile counts as done without deleting
 * anything, and its deletions wait for its next task poll in this master's memory. A master that took over before
 * the node came back would adopt the copy as an object. So such a deletion first raises the node's <em>floor</em> in
 * the cluster facts ({@link ClusterFacts#raiseDiskFloor}: every version handed out so far), durably, before the
 * removal answers; a master that is reported a copy it does not know, of a version at or under the floor (or of no
 * version), deletes it instead of adopting it. That also drops the node's SSD-only objects that were not removed: the
 * price of the double fault (a node and the leader both gone), a cache miss each, never a removed object served.
 * Once the node has reported its whole scan ({@code DiskObjectsReport.scan_complete}) and the deletions that scan
 * led to are on its disk (their FORGETs answered), the floor is cleared.
 *
 * <p>Without failover nothing is kept (no master takes over from this one).
 *
 * <p>Thread-safe: the facts and the forgets are set once, before the master serves; scans are tracked per node in a
 * concurrent map.
 */
final class DiskFloors {
    private static final Logger LOG = LogManager.getLogger(DiskFloors.class);

    private volatile ClusterFacts facts;
    private volatile NodeForgets forgets;
    /** The deletions each scan of a node with a floor has led to so far, until its last report. */
    private final ConcurrentHashMap<String, CompletableFuture<Void>> scans = new ConcurrentHashMap<>();

    /** With failover on: where floors are kept, and the FORGETs that delete copies under them. */
    void enable(ClusterFacts clusterFacts, NodeForgets nodeForgets) {
        this.facts = clusterFacts;
        this.forgets = nodeForgets;
    }

    /** The version at or under which an unknown copy {@code nodeId} reports is deleted (0 = none). */
    long floorOf(String nodeId) {
        ClusterFacts f = facts;
        return f == null ? 0 : f.diskFloor(nodeId);
    }

    /**
     * Runs {@code report} (the master taking one of {@code nodeId}'s reports of its SSD copies), collecting the
     * deletions it sends through FORGETs; after the last report of a scan, clears the node's floor once they are all
     * done.
     */
    void report(String nodeId, boolean scanComplete, Runnable report) {
        ClusterFacts f = facts;
        NodeForgets n = forgets;
        if (f == null || n == null || f.diskFloor(nodeId) == 0) {
            report.run(); // no floor to clear (the usual case): nothing kept
            if (scanComplete) {
                scans.remove(nodeId);
            }
            return;
        }
        CompletableFuture<Void> deletions = n.collect(report);
        // a failure is kept (the floor then stays); what is done already is dropped, so nothing grows while it waits
        CompletableFuture<Void> all = scans.merge(nodeId, deletions, (a, b) -> a.isCompletedExceptionally() ? a
                : a.isDone() ? b : CompletableFuture.allOf(a, b));
        if (!scanComplete) {
            return;
        }
        scans.remove(nodeId, all);
        long seen = f.diskFloor(nodeId);
        all.whenComplete((ok, failed) -> {
            if (failed != null) {
                LOG.warn("Node {}'s SSD floor stays: deletions of its scan failed ({})", nodeId, failed.toString());
                return;
            }
            try {
                f.clearDiskFloor(nodeId, seen);
                LOG.info("Node {} reported its SSD copies and deleted those a removal may have left: floor cleared",
                        nodeId);
            } catch (RuntimeException e) {
                LOG.warn("Node {}'s SSD floor stays: {}", nodeId, e.toString());
            }
        });
    }
}
