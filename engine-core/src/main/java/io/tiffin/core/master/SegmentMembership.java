package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Which nodes and segments belong to the cluster: mounts (with the checks that tell a restarted node
 * from two processes sharing a {@code node.id}), unmounts, heartbeats and node expiry after
 * {@code master.node-ttl}. When segments or nodes go, the objects are swept: replicas on unmounted
 * segments and SSD copies of gone nodes are dropped, objects with nothing left erased.
 *
 * <p>Thread-safe: mounts are serialised on this object's monitor (a restart check and the unmounts it
 * causes are one step); the {@link SegmentRegistry} serialises its own changes; sweeps lock one shard
 * at a time. Lock order: membership monitor → registry; membership monitor → shard → tier / segment.
 */
final class SegmentMembership {
    private static final Logger LOG = LogManager.getLogger(SegmentMembership.class);

    private final SegmentRegistry segments;
    private final ObjectTable table;
    private final TierCoordinator tier;
    private final RestartGuard restartGuard;
    private final Duration nodeTtl;
    private final Ticker ticker;

    SegmentMembership(SegmentRegistry segments, ObjectTable table, TierCoordinator tier, RestartGuard restartGuard,
                      Duration nodeTtl, Ticker ticker) {
        this.segments = segments;
        this.table = table;
        this.tier = tier;
        this.restartGuard = restartGuard;
        this.nodeTtl = nodeTtl;
        this.ticker = ticker;
    }

    /** See {@link MasterService#mountSegment(String, String, String, long, long, long, long)}. */
    synchronized void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
                                   long mountEpoch, long pingIntervalMillis) {
        List<String> previous = segments.segmentsOfOtherIncarnations(nodeId, incarnation);
        long now = ticker.millis();
        if (!previous.isEmpty() && pingIntervalMillis > 0) {
            long quiet = now - segments.lastHeard(nodeId);
            long needed = Math.max(1000, 3 * pingIntervalMillis);
            if (quiet < needed) {
                throw new TiffinException(ErrorCode.SEGMENT_ALREADY_EXISTS, "node.id " + nodeId + " belongs to"
                        + " another running node process (segments " + previous + ", heard from " + quiet
                        + " ms ago); give every node its own node.id. If that process has just stopped, this one"
                        + " can mount once it has been silent for " + needed + " ms");
            }
        }
        if (!previous.isEmpty()) {
            for (String old : previous) {
                segments.unmount(old);
            }
            LOG.warn("Node {} restarted (new incarnation); unmounted the segments of its previous run {} "
                    + "and erase the objects that lived only there. If it did not restart, two running nodes"
                    + " share node.id {}: give each its own", nodeId, previous, nodeId);
            // Its offloads and promotions died with the old process (it registers its SSD tier again,
            // whose copies survive the restart and stay listed).
            tier.nodeGone(nodeId);
            tier.abandonTasksOf(nodeId);
            sweepDeadReplicas(Set.of());
        }
        restartGuard.noteMount(nodeId, mountEpoch, now);
        segments.mount(name, nodeId, endpoint, capacity, incarnation, mountEpoch, now + nodeTtl.toMillis());
        segments.heard(nodeId, now);
    }

    /** See {@link MasterService#unmountSegment}. */
    void unmountSegment(String nodeId, String name) {
        MountedSegment s = segments.get(name);
        if (s == null) {
            return;
        }
        if (!s.nodeId().equals(nodeId)) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "unmount: segment " + name + " belongs to node " + s.nodeId() + ", not " + nodeId);
        }
        segments.unmount(name);
        if (segments.segmentNamesOf(nodeId).isEmpty()) {
            // The node's last segment left: the node is gone (a graceful stop), with its SSD tier.
            segments.forgetNode(nodeId);
            tier.nodeGone(nodeId);
            sweepDeadReplicas(Set.of(nodeId));
        } else {
            sweepDeadReplicas(Set.of());
        }
    }

    /** See {@link MasterService#ping(String, long)}. */
    PingOutcome ping(String nodeId, long incarnation) {
        long now = ticker.millis();
        if (incarnation != 0) {
            long mounted = segments.incarnationOf(nodeId);
            if (mounted != 0 && mounted != incarnation) {
                return PingOutcome.SUPERSEDED; // does not keep the other process's node alive
            }
        }
        if (!segments.touch(nodeId, now + nodeTtl.toMillis())) {
            return PingOutcome.UNKNOWN;
        }
        segments.heard(nodeId, now);
        return PingOutcome.OK;
    }

    /** See {@link MasterService#expireNodes}. */
    List<String> expireNodes() {
        Map<String, List<String>> expired = segments.expireNodesAndUnmount(ticker.millis());
        if (expired.isEmpty()) {
            return List.of();
        }
        expired.forEach((node, names) -> {
            LOG.warn("Node {} missed its heartbeats for {}; unmounted its segments {}", node, nodeTtl, names);
            tier.nodeGone(node);
        });
        sweepDeadReplicas(expired.keySet());
        return List.copyOf(expired.keySet());
    }

    /** See {@link MasterService#forgetNode}. */
    void forgetNode(String nodeId) {
        segments.forgetNode(nodeId);
        for (String name : segments.segmentNamesOf(nodeId)) {
            segments.unmount(name);
        }
        tier.nodeGone(nodeId);
        sweepDeadReplicas(Set.of(nodeId));
    }

    /** Drops replicas on unmounted segments and SSD copies of dead nodes; erases objects with nothing left. */
    private void sweepDeadReplicas(Set<String> deadNodes) {
        long[] erased = new long[1];
        table.forEachShard(shard -> {
            for (ObjectMetadata m : List.copyOf(shard.objects.values())) {
                int dropped = m.dropDeadReplicas();
                if (!deadNodes.isEmpty()) {
                    dropped += tier.dropCopiesOf(m, deadNodes);
                }
                if (dropped > 0 && m.isEmpty()) {
                    table.forget(shard, m.key);
                    erased[0]++;
                }
            }
        });
        if (erased[0] > 0) {
            LOG.info("Erased {} objects whose replicas all lived on unmounted segments", erased[0]);
        }
    }
}
