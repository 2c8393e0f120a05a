package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import java.util.ArrayList;
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
    private final Recovery recovery;
    /** With failover on: the cluster facts (mounts and unmounts are written there first) and deferred frees. */
    private volatile ClusterFacts facts;
    private volatile NodeForgets forgets;

    SegmentMembership(SegmentRegistry segments, ObjectTable table, TierCoordinator tier, RestartGuard restartGuard,
                      Duration nodeTtl, Ticker ticker, Recovery recovery) {
        this.recovery = recovery;
        this.segments = segments;
        this.table = table;
        this.tier = tier;
        this.restartGuard = restartGuard;
        this.nodeTtl = nodeTtl;
        this.ticker = ticker;
    }

    /** See {@link MasterService#mountSegment(String, String, String, long, long, long, long, byte[])}. */
    synchronized void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
                                   long mountEpoch, long pingIntervalMillis, byte[] accessKey) {
        MountedSegment.macOf(name, accessKey); // a bad key refuses the mount before it unmounts or records anything
        List<String> previous = segments.segmentsOfOtherIncarnations(nodeId, incarnation);
        long now = ticker.millis();
        if (!previous.isEmpty() && pingIntervalMillis > 0) {
            // since its last ping, or its mount, or (a takeover) the restore of its segments, whichever came last
            long lastWord = segments.lastWord(nodeId, nodeTtl.toMillis());
            long quiet = lastWord == Long.MIN_VALUE ? Long.MAX_VALUE : now - lastWord;
            long needed = Math.max(1000, 3 * pingIntervalMillis);
            if (quiet < needed) {
                throw new TiffinException(ErrorCode.SEGMENT_ALREADY_EXISTS, "node.id " + nodeId + " belongs to"
                        + " another running node process (segments " + previous + ", heard from " + quiet
                        + " ms ago); give every node its own node.id. If that process has just stopped, this one"
                        + " can mount once it has been silent for " + needed + " ms");
            }
        }
        if (!previous.isEmpty()) {
            List<MountedSegment> gone = new ArrayList<>();
            for (String old : previous) {
                addIfAny(gone, unmountDurably(old));
            }
            LOG.warn("Node {} restarted (new incarnation); unmounted the segments of its previous run {} "
                    + "and erase the objects that lived only there. If it did not restart, two running nodes"
                    + " share node.id {}: give each its own", nodeId, previous, nodeId);
            // Its offloads and promotions died with the old process (it registers its SSD tier again,
            // whose copies survive the restart and stay listed).
            tier.nodeGone(nodeId);
            tier.abandonTasksOf(nodeId);
            sweepDeadReplicas(gone, Set.of());
        }
        restartGuard.noteMount(nodeId, mountEpoch, now);
        ClusterFacts f = facts;
        MountedSegment known = segments.get(name);
        if (f != null && (known == null || known.awaitingAttach())) {
            // durable before the segment takes objects: a successor restores it and waits for its node
            f.segmentMounted(io.tiffin.core.transport.proto.SegmentFact.newBuilder().setName(name).setNodeId(nodeId)
                    .setEndpoint(endpoint).setCapacity(capacity).setIncarnation(incarnation).build());
        }
        segments.mount(name, nodeId, endpoint, capacity, incarnation, mountEpoch, now + nodeTtl.toMillis(), accessKey);
        segments.get(name).deferFreesTo(forgets);
        recovery.settled(name);
        segments.heard(nodeId, now);
    }

    /** Turns failover on: mounts and unmounts go to {@code clusterFacts}, frees through {@code nodeForgets}. */
    void enableFailover(ClusterFacts clusterFacts, NodeForgets nodeForgets) {
        this.facts = clusterFacts;
        this.forgets = nodeForgets;
    }

    /**
     * Registers the segments the previous master listed, awaiting their nodes' attach (which must come within the
     * node TTL, and within the recovery).
     */
    synchronized void restore(List<io.tiffin.core.transport.proto.SegmentFact> listed) {
        long deadline = ticker.millis() + nodeTtl.toMillis();
        for (var f : listed) {
            segments.restore(f.getName(), f.getNodeId(), f.getEndpoint(), f.getCapacity(), f.getIncarnation(), deadline)
                    .deferFreesTo(forgets);
        }
    }

    /**
     * Unmounts a segment, first out of the cluster facts; then it is void. Returns it, or null if it was not
     * mounted.
     */
    private MountedSegment unmountDurably(String name) {
        ClusterFacts f = facts;
        if (f != null) {
            f.segmentsGone(List.of(name));
        }
        MountedSegment s = segments.unmount(name);
        if (s != null) {
            s.markVoided();
        }
        recovery.settled(name);
        return s;
    }

    private static void addIfAny(List<MountedSegment> to, MountedSegment s) {
        if (s != null) {
            to.add(s);
        }
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
        List<MountedSegment> gone = new ArrayList<>(1);
        addIfAny(gone, unmountDurably(name));
        if (segments.segmentNamesOf(nodeId).isEmpty()) {
            // The node's last segment left: the node is gone (a graceful stop), with its SSD tier.
            segments.forgetNode(nodeId);
            tier.nodeLeaving(nodeId);
            tier.nodeGone(nodeId);
            sweepDeadReplicas(gone, Set.of(nodeId));
        } else {
            sweepDeadReplicas(gone, Set.of());
        }
    }

    /** See {@link MasterService#ping(String, long)}. */
    PingOutcome ping(String nodeId, long incarnation) {
        long now = ticker.millis();
        if (segments.awaitsAttach(nodeId, incarnation)) {
            // restored by this master: the node keeps its objects if it attaches during the recovery; after it, the
            // objects removed meanwhile could come back with it, so it re-mounts empty
            return recovery.active() ? PingOutcome.ATTACH : PingOutcome.UNKNOWN;
        }
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

    /**
     * Moves every node's deadline {@code millis} later: time in which the master did not run (a long pause, a stopped
     * process) is not counted against nodes, whose pings waited unread meanwhile. 0 or less does nothing.
     */
    synchronized void postponeDeadlines(long millis) {
        if (millis <= 0) {
            return;
        }
        segments.postponeDeadlines(millis);
        // seconds are a stop or a frozen process worth a warning; less is often a long eviction pass before the check
        LOG.log(millis >= 5000 ? org.apache.logging.log4j.Level.WARN : org.apache.logging.log4j.Level.DEBUG,
                "The master did not check node liveness for {} ms longer than master.node-check-interval (a long GC"
                + " pause, a stopped or frozen process, or background work that ran long); every node's deadline moves"
                + " as much later, so that no live node is taken for dead for the time its pings waited unread",
                millis);
    }

    /** See {@link MasterService#expireNodes}. */
    synchronized List<String> expireNodes() {
        Map<String, List<MountedSegment>> expired = segments.expireNodesAndUnmount(ticker.millis());
        if (expired.isEmpty()) {
            return List.of();
        }
        List<MountedSegment> gone = expired.values().stream().flatMap(List::stream).toList();
        ClusterFacts f = facts;
        if (f != null) {
            f.segmentsGone(gone.stream().map(MountedSegment::name).toList());
        }
        for (MountedSegment s : gone) {
            s.markVoided();
            recovery.settled(s.name());
        }
        expired.forEach((node, segs) -> {
            LOG.warn("Node {} missed its heartbeats for {}; unmounted its segments {}", node, nodeTtl,
                    segs.stream().map(MountedSegment::name).toList());
            tier.nodeLeaving(node);
            tier.nodeGone(node);
        });
        sweepDeadReplicas(gone, expired.keySet());
        return List.copyOf(expired.keySet());
    }

    /** See {@link MasterService#forgetNode}. */
    synchronized void forgetNode(String nodeId) {
        segments.forgetNode(nodeId);
        List<MountedSegment> gone = new ArrayList<>();
        for (String name : segments.segmentNamesOf(nodeId)) {
            addIfAny(gone, unmountDurably(name));
        }
        tier.nodeLeaving(nodeId);
        tier.nodeGone(nodeId);
        sweepDeadReplicas(gone, Set.of(nodeId));
    }

    /**
     * Drops the replicas on the unmounted segments {@code gone} and the SSD copies and SSD tasks of the dead nodes
     * {@code deadNodes}; erases objects with nothing left. It visits only the objects that had allocations on
     * {@code gone} ({@link MountedSegment#ownerKeys}) and, for dead nodes, those listed with SSD copies on them or
     * with an SSD task in progress ({@link TierCoordinator#keysTouchedByLossOf}): O(those objects), taking each
     * shard's lock once, so a node that leaves costs the master in proportion to what it held, not to every key.
     */
    private void sweepDeadReplicas(List<MountedSegment> gone, Set<String> deadNodes) {
        List<String> keys = new ArrayList<>();
        for (MountedSegment s : gone) {
            keys.addAll(s.ownerKeys());
        }
        if (!deadNodes.isEmpty()) {
            keys.addAll(tier.keysTouchedByLossOf(deadNodes));
        }
        if (keys.isEmpty()) {
            return;
        }
        long[] erased = new long[1];
        table.forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i)); // gone since, or another object of the key: no harm
            if (m == null) {
                return;
            }
            int dropped = m.dropDeadReplicas() + (deadNodes.isEmpty() ? 0 : tier.dropCopiesOf(m, deadNodes));
            if (dropped > 0 && m.isEmpty()) {
                table.forget(shard, m.key);
                erased[0]++;
            }
        });
        if (erased[0] > 0) {
            LOG.info("Erased {} objects whose replicas all lived on unmounted segments", erased[0]);
        }
    }
}
