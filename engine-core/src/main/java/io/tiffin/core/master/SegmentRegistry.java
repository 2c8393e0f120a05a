package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Mounted segments and the liveness of the nodes that own them.
 *
 * <p>Thread-safe: mutations are serialised on this object; readers get an immutable snapshot list
 * ({@link #segments()}) that is replaced on every mount or unmount, so the allocation path never
 * locks the registry.
 */
final class SegmentRegistry {
    private final Map<String, MountedSegment> byName = new HashMap<>();
    private final Map<String, Long> nodeDeadlines = new HashMap<>();
    /** When each node's mounted incarnation last pinged or mounted (ms). */
    private final Map<String, Long> lastHeard = new HashMap<>();
    /** The incarnation of each node's mounted segments (nodes that mounted with a known one). */
    private final Map<String, Long> incarnations = new HashMap<>();
    private volatile List<MountedSegment> snapshot = List.of();

    /** The mounted segments, in mount order. Immutable. */
    List<MountedSegment> segments() {
        return snapshot;
    }

    /** Total capacity of the mounted segments (bytes). */
    long capacityBytes() {
        long c = 0;
        for (MountedSegment s : snapshot) {
            c += s.capacity();
        }
        return c;
    }

    /** Bytes allocated in the mounted segments. */
    long usedBytes() {
        long u = 0;
        for (MountedSegment s : snapshot) {
            u += s.used();
        }
        return u;
    }

    synchronized MountedSegment get(String name) {
        return byName.get(name);
    }

    /**
     * Mounts a segment. Idempotent for the same segment of the same node (Mooncake's
     * SEGMENT_ALREADY_EXISTS → OK); a name already owned by another node is INVALID_PARAMS.
     *
     * @return true if the segment is new
     */
    synchronized boolean mount(String name, String nodeId, String endpoint, long capacity, long incarnation,
                               long mountEpoch, long nodeDeadline) {
        return mount(name, nodeId, endpoint, capacity, incarnation, mountEpoch, nodeDeadline, null);
    }

    /** As above, with the node's data-plane key for this mount (null: none; see {@link MountedSegment#mountedAgain}). */
    synchronized boolean mount(String name, String nodeId, String endpoint, long capacity, long incarnation,
                               long mountEpoch, long nodeDeadline, byte[] accessKey) {
        if (name.isEmpty() || nodeId.isEmpty() || endpoint.isEmpty()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "mount: segment name, node id and endpoint must be non-empty");
        }
        if (capacity <= 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "mount: segment " + name + " capacity = " + capacity + " (expected: > 0)");
        }
        nodeDeadlines.put(nodeId, nodeDeadline);
        MountedSegment existing = byName.get(name);
        if (existing != null) {
            if (!existing.nodeId().equals(nodeId)) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "mount: segment " + name
                        + " is already mounted by node " + existing.nodeId() + "; segment names must be unique");
            }
            existing.mountedAgain(mountEpoch, accessKey);
            existing.attached(); // a restored segment mounted afresh: empty, as its node re-mounted
            return false;
        }
        MountedSegment fresh = new MountedSegment(name, nodeId, endpoint, capacity, incarnation, mountEpoch);
        fresh.mountedAgain(mountEpoch, accessKey); // checks the key before the segment is listed
        byName.put(name, fresh);
        if (incarnation != 0) {
            incarnations.put(nodeId, incarnation);
        }
        republish();
        return true;
    }

    /**
     * Registers a segment restored from the cluster facts (a master that took over): awaiting its node's attach,
     * which must come before {@code nodeDeadline}. Returns it.
     */
    synchronized MountedSegment restore(String name, String nodeId, String endpoint, long capacity, long incarnation,
                                        long nodeDeadline) {
        MountedSegment s = new MountedSegment(name, nodeId, endpoint, capacity, incarnation, 0);
        s.awaitAttach();
        byName.put(name, s);
        nodeDeadlines.put(nodeId, nodeDeadline);
        if (incarnation != 0) {
            incarnations.put(nodeId, incarnation);
        }
        republish();
        return s;
    }

    /** Whether the node's segments were restored and await its attach. */
    synchronized boolean awaitsAttach(String nodeId, long incarnation) {
        for (MountedSegment s : byName.values()) {
            if (s.nodeId().equals(nodeId) && s.awaitingAttach() && (incarnation == 0 || s.incarnation() == incarnation)) {
                return true;
            }
        }
        return false;
    }

    /** Removes a segment from the registry and marks it unmounted; returns it, or null if unknown. */
    synchronized MountedSegment unmount(String name) {
        MountedSegment s = byName.remove(name);
        if (s != null) {
            s.markUnmounted();
            republish();
            if (byName.values().stream().noneMatch(o -> o.nodeId().equals(s.nodeId())
                    && o.incarnation() == s.incarnation())) {
                incarnations.remove(s.nodeId(), s.incarnation());
            }
        }
        return s;
    }

    /** True if the node is known (has mounted and not expired). */
    synchronized boolean touch(String nodeId, long newDeadline) {
        if (!nodeDeadlines.containsKey(nodeId)) {
            return false;
        }
        nodeDeadlines.put(nodeId, newDeadline);
        return true;
    }

    /** Records that the node's mounted incarnation was heard from at {@code nowMillis}. */
    synchronized void heard(String nodeId, long nowMillis) {
        lastHeard.put(nodeId, nowMillis);
    }

    /** When the node's mounted incarnation was last heard from (ms), or {@link Long#MIN_VALUE}. */
    synchronized long lastHeard(String nodeId) {
        return lastHeard.getOrDefault(nodeId, Long.MIN_VALUE);
    }

    /** The incarnation of the node's mounted segments, 0 when none (or unknown). O(1): called by every ping. */
    synchronized long incarnationOf(String nodeId) {
        return incarnations.getOrDefault(nodeId, 0L);
    }

    /** Removes nodes whose deadline passed and returns their ids. */
    synchronized List<String> expireNodes(long now) {
        List<String> expired = new ArrayList<>();
        nodeDeadlines.entrySet().removeIf(e -> {
            if (e.getValue() < now) {
                expired.add(e.getKey());
                return true;
            }
            return false;
        });
        return expired;
    }

    /**
     * Removes nodes whose deadline passed and unmounts their segments, in one step: a node cannot mount
     * (and have the new segment unmounted as part of its expiry) in between. Returns each expired node's
     * unmounted segment names.
     */
    synchronized Map<String, List<MountedSegment>> expireNodesAndUnmount(long now) {
        Map<String, List<MountedSegment>> expired = new java.util.LinkedHashMap<>();
        for (String node : expireNodes(now)) {
            List<MountedSegment> gone = new ArrayList<>();
            for (String name : segmentNamesOf(node)) {
                gone.add(unmount(name));
            }
            expired.put(node, gone);
        }
        return expired;
    }

    synchronized void forgetNode(String nodeId) {
        nodeDeadlines.remove(nodeId);
    }

    /** Names of the node's mounted segments whose incarnation is not {@code incarnation}. */
    synchronized List<String> segmentsOfOtherIncarnations(String nodeId, long incarnation) {
        List<String> names = new ArrayList<>();
        for (MountedSegment s : byName.values()) {
            if (s.nodeId().equals(nodeId) && s.incarnation() != incarnation) {
                names.add(s.name());
            }
        }
        return names;
    }

    synchronized List<String> segmentNamesOf(String nodeId) {
        List<String> names = new ArrayList<>();
        for (MountedSegment s : byName.values()) {
            if (s.nodeId().equals(nodeId)) {
                names.add(s.name());
            }
        }
        return names;
    }

    /** A node's liveness as the registry holds it: its deadline and when it was last heard from (ms, or MIN_VALUE). */
    record NodeBeat(String nodeId, long deadlineMillis, long lastHeardMillis) {
    }

    /** Every node with a deadline (mounted, not yet expired), by id. */
    synchronized List<NodeBeat> nodeBeats() {
        List<NodeBeat> out = new ArrayList<>(nodeDeadlines.size());
        for (Map.Entry<String, Long> e : new java.util.TreeMap<>(nodeDeadlines).entrySet()) {
            out.add(new NodeBeat(e.getKey(), e.getValue(), lastHeard.getOrDefault(e.getKey(), Long.MIN_VALUE)));
        }
        return out;
    }

    synchronized Set<String> liveNodes() {
        return new TreeSet<>(nodeDeadlines.keySet());
    }

    private void republish() {
        snapshot = List.copyOf(byName.values().stream()
                .sorted(java.util.Comparator.comparing(MountedSegment::name)).toList());
    }
}
