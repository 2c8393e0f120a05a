package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The SSD copies of nodes that are away (stopped, or expired after {@code master.node-ttl}) whose objects lived only
 * there: the master forgets such an object when its node leaves (it cannot be read meanwhile, and a put of its key
 * starts afresh), and notes its key and version here, so that what happens to the key while the node is away still
 * reaches the copy. A removal of the key, or a put of a new object under it, turns the note into a deletion for the
 * node's next task poll ({@link TierCoordinator#forgetAwayCopies}; one that matches all of a node's notes gives it a
 * floor instead, below), so the node's scan does not bring the old bytes back; a key still noted when the node returns
 * is adopted from its scan as before. The node's note ends when its scan is complete.
 *
 * <p>A node away for longer than {@code offload.away-ttl} has its notes replaced by a <em>floor</em>: every version
 * handed out by then. Its scan's copies at or under the floor are then deleted instead of adopted (cache misses, never
 * a removed object served), and the master holds nothing per key for a node that may never come back.
 *
 * <p>Each note costs a map entry and the key (which the forgotten object held before). The notes live in this
 * master's memory only: a leader that takes over while a node is away has none of them, and applies the away floor
 * written in the cluster facts when the node left instead ({@link DiskFloors#recordAway}).
 *
 * <p>Thread-safe: every method is synchronized; callers may hold a shard lock (lock order: shard → this → tier).
 */
final class AwayCopies {
    /** A noted copy: its node and the version of its object. */
    record Copy(String nodeId, long version) {
    }

    private static final class Node {
        final long sinceMillis;
        /** Noted copies by key (version); null once replaced by the floor. */
        HashMap<String, Long> keys = new HashMap<>();
        /** Every version at or under it was handed out before the notes were dropped (0: notes kept). */
        long floor;

        Node(long sinceMillis) {
            this.sinceMillis = sinceMillis;
        }
    }

    private final Map<String, Node> nodes = new HashMap<>();
    /** Noted copies of all nodes, for the status page and the fast path. */
    private volatile long noted;

    /** Notes the copy of {@code key} (of {@code version}) on {@code nodeId}, which left at {@code now}. */
    synchronized void note(String nodeId, String key, long version, long now) {
        Node n = nodes.computeIfAbsent(nodeId, id -> new Node(now));
        if (n.keys == null) {
            return; // a floor covers it
        }
        if (n.keys.put(key, version) == null) {
            noted++;
        }
    }

    /** Whether no copy is noted (the fast path of a removal or a put: one volatile read). */
    boolean noneNoted() {
        return noted == 0;
    }

    /** Noted copies of all nodes. */
    long noted() {
        return noted;
    }

    /** Takes the notes of {@code key} on every node: its object was removed or replaced. */
    synchronized List<Copy> take(String key) {
        List<Copy> out = List.of();
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            HashMap<String, Long> keys = e.getValue().keys;
            Long version = keys == null ? null : keys.remove(key);
            if (version != null) {
                noted--;
                if (out.isEmpty()) {
                    out = new ArrayList<>(1);
                }
                out.add(new Copy(e.getKey(), version));
            }
        }
        return out;
    }

    /**
     * Takes the notes of every key {@code matches} accepts, by key: their objects were removed (a regex, all). A node
     * all of whose notes match gets the floor {@code floorVersion} (every version handed out so far) instead, so a
     * removal of everything costs no pending delete per key.
     */
    synchronized Map<String, List<Copy>> takeMatching(Predicate<String> matches, long floorVersion) {
        Map<String, List<Copy>> out = new HashMap<>();
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            Node n = e.getValue();
            HashMap<String, Long> keys = n.keys;
            if (keys == null) {
                continue;
            }
            if (!keys.isEmpty() && keys.keySet().stream().allMatch(matches)) {
                noted -= keys.size();
                n.keys = null;
                n.floor = floorVersion;
                continue;
            }
            for (Iterator<Map.Entry<String, Long>> it = keys.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Long> k = it.next();
                if (matches.test(k.getKey())) {
                    out.computeIfAbsent(k.getKey(), x -> new ArrayList<>(1)).add(new Copy(e.getKey(), k.getValue()));
                    it.remove();
                    noted--;
                }
            }
        }
        return out;
    }

    /**
     * Whether the node's reported copy of {@code key} of {@code version} (0 = unknown) is to be deleted rather than
     * adopted: it lies at or under the node's floor. A noted copy is adopted (its note ends).
     */
    synchronized boolean deleteOnReturn(String nodeId, String key, long version) {
        Node n = nodes.get(nodeId);
        if (n == null) {
            return false;
        }
        if (n.floor > 0 && (version == 0 || version <= n.floor)) {
            return true;
        }
        if (n.keys != null && n.keys.remove(key) != null) {
            noted--;
        }
        return false;
    }

    /** The node's scan is complete: what it did not report is not on its disk, so its notes and floor end. */
    synchronized void scanned(String nodeId) {
        Node n = nodes.remove(nodeId);
        if (n != null && n.keys != null) {
            noted -= n.keys.size();
        }
    }

    /**
     * Replaces by a floor ({@code floorVersion}: every version handed out so far) the notes of nodes away since before
     * {@code now - ttlMillis} and not back ({@code back}); returns those nodes with how many notes each had.
     */
    synchronized Map<String, Integer> expire(long now, long ttlMillis, long floorVersion, Predicate<String> back) {
        Map<String, Integer> out = Map.of();
        for (Map.Entry<String, Node> e : nodes.entrySet()) {
            Node n = e.getValue();
            if (n.keys != null && now - n.sinceMillis >= ttlMillis && !back.test(e.getKey())) {
                if (out.isEmpty()) {
                    out = new HashMap<>();
                }
                out.put(e.getKey(), n.keys.size());
                noted -= n.keys.size();
                n.keys = null;
                n.floor = floorVersion;
            }
        }
        return out;
    }
}
