package io.tiffin.core.master;

import com.google.common.collect.Lists;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Mounted segments and the liveness of the nodes that own them.
 *
 * <p>Thread-safe. Mutations of the segments (mount, restore, unmount, expiry) are serialised on this object's
 * monitor. Nothing a heartbeat or a request does takes that monitor: pings run on the master's event loops, which
 * serve Gets too, and a mount holds the monitor on a worker thread that the OS may preempt (a join of many nodes
 * would then stall every Get queued behind a ping). So the readers go lock-free: the segments by name and by node
 * are concurrent maps (a node's segments an immutable list, replaced on change), node deadlines, last-heard times
 * and incarnations are concurrent maps whose single-key updates are atomic, and the allocation path reads an
 * immutable snapshot list ({@link #segments()}) replaced on every mount or unmount. A reader sees each map's
 * latest state per key, not the monitor's compound steps; every check a ping makes is per key, as it was when
 * each call took the monitor on its own.
 */
final class SegmentRegistry {
    /** By name (the snapshot holds the same segments, sorted by name). */
    private final ConcurrentHashMap<String, MountedSegment> byName = new ConcurrentHashMap<>();
    /** Each node's mounted segments, an immutable list in mount order; a node with none has no entry. */
    private final ConcurrentHashMap<String, List<MountedSegment>> byNode = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Long> nodeDeadlines = new ConcurrentHashMap<>();
    /** When each node's mounted incarnation last pinged or mounted (ms). */
    private final ConcurrentHashMap<String, Long> lastHeard = new ConcurrentHashMap<>();
    /** The incarnation of each node's mounted segments (nodes that mounted with a known one). */
    private final ConcurrentHashMap<String, Long> incarnations = new ConcurrentHashMap<>();
    private volatile List<MountedSegment> snapshot = List.of();

    /** The mounted segments, in name order. Immutable. */
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

    /** The mounted segment of that name, or null. Lock-free. */
    MountedSegment get(String name) {
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
        list(fresh);
        if (incarnation != 0) {
            incarnations.put(nodeId, incarnation);
        }
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
        MountedSegment replaced = byName.get(name);
        if (replaced != null) {
            delist(replaced);
        }
        list(s);
        nodeDeadlines.put(nodeId, nodeDeadline);
        if (incarnation != 0) {
            incarnations.put(nodeId, incarnation);
        }
        return s;
    }

    /** Whether the node's segments were restored and await its attach. Lock-free, O(its segments): every ping asks. */
    boolean awaitsAttach(String nodeId, long incarnation) {
        for (MountedSegment s : byNode.getOrDefault(nodeId, List.of())) {
            if (s.awaitingAttach() && (incarnation == 0 || s.incarnation() == incarnation)) {
                return true;
            }
        }
        return false;
    }

    /** Removes a segment from the registry and marks it unmounted; returns it, or null if unknown. */
    synchronized MountedSegment unmount(String name) {
        MountedSegment s = byName.get(name);
        if (s != null) {
            delist(s);
            s.markUnmounted();
            List<MountedSegment> left = byNode.getOrDefault(s.nodeId(), List.of());
            if (left.stream().noneMatch(o -> o.incarnation() == s.incarnation())) {
                incarnations.remove(s.nodeId(), s.incarnation());
            }
        }
        return s;
    }

    /**
     * Moves a known node's deadline to {@code newDeadline}; false if the node is unknown (never mounted, expired or
     * forgotten). Atomic against {@link #expireNodes}: a node is either expired or touched, not both. Lock-free.
     */
    boolean touch(String nodeId, long newDeadline) {
        return nodeDeadlines.computeIfPresent(nodeId, (id, old) -> newDeadline) != null;
    }

    /** Moves every node's deadline {@code millis} later (each atomically against {@link #touch}). */
    synchronized void postponeDeadlines(long millis) {
        nodeDeadlines.replaceAll((id, deadline) -> deadline + millis);
    }

    /** Records that the node's mounted incarnation was heard from at {@code nowMillis}. Lock-free. */
    void heard(String nodeId, long nowMillis) {
        lastHeard.put(nodeId, nowMillis);
    }

    /** When the node's mounted incarnation was last heard from (ms), or {@link Long#MIN_VALUE}. Lock-free. */
    long lastHeard(String nodeId) {
        return lastHeard.getOrDefault(nodeId, Long.MIN_VALUE);
    }

    /**
     * The last time this master heard of the node in any way: a ping, a mount, or the restore of its segments at a
     * takeover (each set its deadline {@code ttlMillis} ahead); {@link Long#MIN_VALUE} for none.
     */
    long lastWord(String nodeId, long ttlMillis) {
        Long deadline = nodeDeadlines.get(nodeId);
        long heard = lastHeard(nodeId);
        return deadline == null ? heard : Math.max(heard, deadline - ttlMillis);
    }

    /** The incarnation of the node's mounted segments, 0 when none (or unknown). Lock-free, O(1): every ping asks. */
    long incarnationOf(String nodeId) {
        return incarnations.getOrDefault(nodeId, 0L);
    }

    /**
     * Removes nodes whose deadline passed and returns their ids. A node whose ping moved its deadline after it was
     * read here stays ({@link #touch}).
     */
    synchronized List<String> expireNodes(long now) {
        List<String> expired = new ArrayList<>();
        for (Map.Entry<String, Long> e : nodeDeadlines.entrySet()) {
            if (e.getValue() < now && nodeDeadlines.remove(e.getKey(), e.getValue())) {
                expired.add(e.getKey());
            }
        }
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

    /** Names of the node's mounted segments whose incarnation is not {@code incarnation}, in mount order. Lock-free. */
    List<String> segmentsOfOtherIncarnations(String nodeId, long incarnation) {
        List<String> names = new ArrayList<>();
        for (MountedSegment s : byNode.getOrDefault(nodeId, List.of())) {
            if (s.incarnation() != incarnation) {
                names.add(s.name());
            }
        }
        return names;
    }

    /** Names of the node's mounted segments, in mount order. Lock-free, O(the node's segments). */
    List<String> segmentNamesOf(String nodeId) {
        List<String> names = new ArrayList<>();
        for (MountedSegment s : byNode.getOrDefault(nodeId, List.of())) {
            names.add(s.name());
        }
        return names;
    }

    /** A node's liveness as the registry holds it: its deadline and when it was last heard from (ms, or MIN_VALUE). */
    record NodeBeat(String nodeId, long deadlineMillis, long lastHeardMillis) {
    }

    /** Every node with a deadline (mounted, not yet expired), by id. */
    List<NodeBeat> nodeBeats() {
        List<NodeBeat> out = new ArrayList<>(nodeDeadlines.size());
        for (Map.Entry<String, Long> e : new TreeMap<>(nodeDeadlines).entrySet()) {
            out.add(new NodeBeat(e.getKey(), e.getValue(), lastHeard.getOrDefault(e.getKey(), Long.MIN_VALUE)));
        }
        return out;
    }

    Set<String> liveNodes() {
        return new TreeSet<>(nodeDeadlines.keySet());
    }

    /**
     * Lists {@code s} (under the monitor): by name, under its node, in the snapshot. O(segments): a binary search
     * and a copy of the snapshot's references (before, a copy of the sorted map's values: walking its 1,000 nodes was
     * two thirds of a mount's master CPU; docs/BENCHMARKS.md, "Master at scale").
     */
    private void list(MountedSegment s) {
        byName.put(s.name(), s);
        byNode.compute(s.nodeId(), (node, old) -> {
            if (old == null) {
                return List.of(s);
            }
            List<MountedSegment> grown = new ArrayList<>(old.size() + 1);
            grown.addAll(old);
            grown.add(s);
            return List.copyOf(grown);
        });
        snapshot = with(snapshot, s);
    }

    /** Takes {@code s} out of every index (under the monitor); the opposite of {@link #list}. */
    private void delist(MountedSegment s) {
        byName.remove(s.name(), s);
        byNode.computeIfPresent(s.nodeId(), (node, old) -> {
            List<MountedSegment> rest = old.stream().filter(o -> o != s).toList();
            return rest.isEmpty() ? null : rest;
        });
        snapshot = without(snapshot, s);
    }

    /** {@code sorted} (by name) with {@code s} in its place: added, or replacing the segment of its name. */
    private static List<MountedSegment> with(List<MountedSegment> sorted, MountedSegment s) {
        int i = indexOf(sorted, s.name());
        MountedSegment[] out;
        if (i >= 0) {
            out = sorted.toArray(new MountedSegment[0]);
            out[i] = s;
        } else {
            int at = -i - 1;
            out = new MountedSegment[sorted.size() + 1];
            for (int j = 0; j < at; j++) {
                out[j] = sorted.get(j);
            }
            out[at] = s;
            for (int j = at; j < sorted.size(); j++) {
                out[j + 1] = sorted.get(j);
            }
        }
        return List.of(out);
    }

    /** {@code sorted} (by name) without {@code s} (the same object; unchanged if another has its name). */
    private static List<MountedSegment> without(List<MountedSegment> sorted, MountedSegment s) {
        int i = indexOf(sorted, s.name());
        if (i < 0 || sorted.get(i) != s) {
            return sorted;
        }
        MountedSegment[] out = new MountedSegment[sorted.size() - 1];
        for (int j = 0, k = 0; j < sorted.size(); j++) {
            if (j != i) {
                out[k++] = sorted.get(j);
            }
        }
        return List.of(out);
    }

    /** Binary search by name: the index, or -(insertion point) - 1 ({@link Collections#binarySearch}). */
    private static int indexOf(List<MountedSegment> sorted, String name) {
        return Collections.binarySearch(Lists.transform(sorted, MountedSegment::name), name);
    }
}
