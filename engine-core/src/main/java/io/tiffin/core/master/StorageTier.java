package io.tiffin.core.master;

import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.transport.proto.PromotionTask;
import io.tiffin.core.util.CountMinSketch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The master's view of nodes' SSD tiers: which nodes have one, the offload and promotion tasks waiting
 * for each node, and the read-frequency sketch that decides promotions.
 *
 * <p>Promotion tasks are handed out hottest first: a node polling for work gets the objects with the
 * most reads, so a few hot objects never wait behind a backlog of lukewarm ones. A queued task whose
 * object keeps being read moves up (lazy re-insertion with the new count).
 *
 * <p>Thread-safe: every method is synchronized; callers may hold a shard lock (lock order: shard →
 * tier).
 */
final class StorageTier {
    record NodeInfo(String nodeId, String endpoint, long capacity) {
    }

    private record Promotion(String key, long size, long hits) {
    }

    private final TierSettings settings;
    /** Every version handed out so far (the master's version counter). */
    private final java.util.function.LongSupplier lastVersion;
    private final Map<String, NodeInfo> nodes = new HashMap<>();
    private final Map<String, ArrayDeque<OffloadTask>> offloads = new HashMap<>();
    /**
     * SSD copies each node must delete, kept while the node is away (unregistered, expired, restarting):
     * a copy of a removed object must not come back when its node reports its scan on return.
     */
    private final Map<String, LinkedHashMap<String, Long>> deletes = new HashMap<>();
    /**
     * Deletes handed to each node with its last poll's answer. A node polls again only once it has tried them, so its
     * next poll acknowledges them, naming those its backend failed (asked again); until then they count as pending
     * ({@link #hasPendingDelete}), and a node that registers its tier again (it restarted, maybe before it deleted
     * them) is asked for them again.
     */
    private final Map<String, LinkedHashMap<String, Long>> handed = new HashMap<>();
    /**
     * Offloads handed to each node and given up before it reported them (the object replaced, erased, or its task
     * timed out), key → version: the node may still write the copy and report it, even after the key is gone, and
     * such a copy must be deleted, never adopted. An entry ends when the node reports that copy or its failure.
     */
    private final Map<String, HashMap<String, Long>> abandoned = new HashMap<>();
    /**
     * The entries of {@link #abandoned} from before each node's last registration (a restarted node): the copies its
     * scan reports; they end when that scan is complete, the old process's unfinished offloads having died with it.
     */
    private final Map<String, HashMap<String, Long>> abandonedBeforeRestart = new HashMap<>();
    /**
     * New deadlines of SSD copies (key → key, version and deadline) each node has not been told by a FORGET, kept
     * while the node is away: written into the copies' stamps, they survive a restart of the whole cluster.
     */
    private final Map<String, LinkedHashMap<String, DiskObject>> deadlines = new HashMap<>();
    /** Offloads queued for or handed to each node and not yet reported. */
    private final Map<String, Integer> offloadsInFlightByNode = new HashMap<>();
    private final Map<String, PriorityQueue<Promotion>> promotions = new HashMap<>();
    /** Latest hit count of each queued promotion; heap entries with another count are stale. */
    private final Map<String, Long> queuedPromotionHits = new HashMap<>();
    private final CountMinSketch sketch = new CountMinSketch(1 << 16);
    private int offloadsInFlight;

    /**
     * Per node whose pending deletes passed {@link #maxPendingPerNode} (the oldest were dropped): every
     * version handed out when the last one was; its reported copies at or under it that the master does not know are
     * deleted, not adopted ({@link #overflowCovers}), until its next complete scan.
     */
    private final Map<String, Long> overflowFloors = new HashMap<>();

    /** Most pending deletes (and deadlines) kept per node: {@link #MAX_PENDING_DELETES_PER_NODE}, or a test's. */
    private final int maxPendingPerNode;

    StorageTier(TierSettings settings, java.util.function.LongSupplier lastVersion) {
        this(settings, lastVersion, MAX_PENDING_DELETES_PER_NODE);
    }

    StorageTier(TierSettings settings, java.util.function.LongSupplier lastVersion, int maxPendingPerNode) {
        this.settings = settings;
        this.lastVersion = lastVersion;
        this.maxPendingPerNode = maxPendingPerNode;
    }

    synchronized void register(String nodeId, String endpoint, long capacity) {
        nodes.put(nodeId, new NodeInfo(nodeId, endpoint, capacity));
        requeueHanded(nodeId);
        HashMap<String, Long> a = abandoned.remove(nodeId);
        if (a != null) {
            abandonedBeforeRestart.computeIfAbsent(nodeId, n -> new HashMap<>()).putAll(a);
        }
    }

    /** The deletes handed to {@code nodeId} and not acknowledged go back to its pending ones. */
    private void requeueHanded(String nodeId) {
        LinkedHashMap<String, Long> h = handed.remove(nodeId);
        if (h != null) {
            h.forEach((key, version) -> addPendingDelete(nodeId, key, version));
        }
    }

    /** Most pending deletes kept per node; beyond it the oldest go (with their node away for long). */
    static final int MAX_PENDING_DELETES_PER_NODE = 1_000_000;

    /**
     * Forgets a node's SSD tier and its tasks, queued or handed out (their results will not come); its
     * pending deletes stay for its return. Returns how many offloads were dropped.
     */
    synchronized int unregister(String nodeId) {
        nodes.remove(nodeId);
        requeueHanded(nodeId);
        offloads.remove(nodeId);
        Integer inFlight = offloadsInFlightByNode.remove(nodeId);
        int dropped = inFlight == null ? 0 : inFlight;
        offloadsInFlight = Math.max(0, offloadsInFlight - dropped);
        PriorityQueue<Promotion> p = promotions.remove(nodeId);
        if (p != null) {
            for (Promotion pr : p) {
                queuedPromotionHits.remove(pr.key());
            }
        }
        return dropped;
    }

    synchronized NodeInfo node(String nodeId) {
        return nodes.get(nodeId);
    }

    synchronized boolean hasStorage(String nodeId) {
        return nodes.containsKey(nodeId);
    }

    synchronized long capacityBytes() {
        long c = 0;
        for (NodeInfo n : nodes.values()) {
            c += n.capacity();
        }
        return c;
    }

    /** Queues an offload; false when the node has no SSD tier or the cluster-wide limit is reached. */
    synchronized boolean queueOffload(String nodeId, OffloadTask task) {
        if (!nodes.containsKey(nodeId) || offloadsInFlight >= settings.offloadQueueLimit()) {
            return false;
        }
        offloads.computeIfAbsent(nodeId, n -> new ArrayDeque<>()).add(task);
        offloadsInFlight++;
        offloadsInFlightByNode.merge(nodeId, 1, Integer::sum);
        // A delete of the key still owed to the node stays, or a copy of the removed object would come back if the
        // node dies before it writes the new one (its scan would report the old copy, and the new object is gone
        // with the node's memory). It names the versions under the new one, which the node keeps.
        underVersion(deletes.get(nodeId), task.getKey(), task.getVersion());
        underVersion(handed.get(nodeId), task.getKey(), task.getVersion());
        dropDeadline(nodeId, task.getKey()); // the task carries the deadline
        return true;
    }

    /**
     * Narrows a delete of {@code key} in {@code owed} (if any) to the copies older than {@code version}, the one a new
     * offload writes; dropped when no version is older. A delete of any version (0) becomes one of those older.
     */
    private static void underVersion(LinkedHashMap<String, Long> owed, String key, long version) {
        if (owed == null) {
            return;
        }
        owed.computeIfPresent(key, (k, v) -> version <= 1 ? null : v == 0 || v >= version ? version - 1 : v);
    }

    /**
     * Asks a node to write a new deadline ({@code expireAtMs}, 0 = none) into the stamp of its SSD copy of {@code
     * key} if that copy is of {@code version}. Kept until the node polls, also while it is away; a later deadline
     * of the key replaces an earlier one not yet polled.
     */
    synchronized void queueDeadline(String nodeId, String key, long version, long expireAtMs) {
        LinkedHashMap<String, DiskObject> pending = deadlines.computeIfAbsent(nodeId, n -> new LinkedHashMap<>());
        pending.remove(key); // to the end: the latest goes last
        pending.put(key, DiskObject.newBuilder().setKey(key).setVersion(version).setExpireAtMs(expireAtMs).build());
        if (pending.size() > maxPendingPerNode) {
            Iterator<String> oldest = pending.keySet().iterator();
            oldest.next();
            oldest.remove();
        }
    }

    private void dropDeadline(String nodeId, String key) {
        LinkedHashMap<String, DiskObject> pending = deadlines.get(nodeId);
        if (pending != null && pending.remove(key) != null && pending.isEmpty()) {
            deadlines.remove(nodeId);
        }
    }

    /**
     * Asks a node to delete its SSD copy of a key that no longer exists (or is stale): a copy of {@code version} or
     * earlier (0 = of any version), so a later put's copy that the node wrote before it took the request stays. Kept
     * until the node acknowledges it (the poll after the one that took it), also while it is away.
     */
    synchronized void queueDelete(String nodeId, String key, long version) {
        dropDeadline(nodeId, key);
        addPendingDelete(nodeId, key, version);
    }

    /** Asks for a deletion again (a deadline queued since, of a later copy, stays). */
    private void addPendingDelete(String nodeId, String key, long version) {
        LinkedHashMap<String, Long> pending = deletes.computeIfAbsent(nodeId, n -> new LinkedHashMap<>());
        pending.merge(key, version, (a, b) -> a == 0 || b == 0 ? 0 : Math.max(a, b));
        if (pending.size() > maxPendingPerNode) {
            Iterator<String> oldest = pending.keySet().iterator();
            oldest.next();
            oldest.remove();
            // the dropped delete's copy must not come back as an object: a floor covers it (and every older copy)
            overflowFloors.put(nodeId, lastVersion.getAsLong());
        }
    }

    /**
     * Whether a reported copy of {@code version} (0 = unknown) on {@code nodeId}, of an object the master does not
     * know, may be one whose delete was dropped (the node's pending deletes overflowed): it is deleted then.
     */
    synchronized boolean overflowCovers(String nodeId, long version) {
        Long floor = overflowFloors.get(nodeId);
        return floor != null && (version == 0 || version <= floor);
    }

    /** The node's whole scan was reported: what it holds has been judged, the overflow floor is done. */
    synchronized void scanComplete(String nodeId) {
        overflowFloors.remove(nodeId);
        abandonedBeforeRestart.remove(nodeId);
    }

    /**
     * Whether a deletion owed to {@code nodeId} (pending or handed out, not acknowledged) covers its copy of {@code key}
     * at {@code version} (0 = unknown: any deletion of the key covers it).
     */
    synchronized boolean deleteCovers(String nodeId, String key, long version) {
        return covers(deletes.get(nodeId), key, version) || covers(handed.get(nodeId), key, version);
    }

    private static boolean covers(LinkedHashMap<String, Long> owed, String key, long version) {
        Long upTo = owed == null ? null : owed.get(key);
        return upTo != null && (upTo == 0 || version == 0 || version <= upTo);
    }

    /**
     * Whether the node has been asked to delete its copy of {@code key} and has not acknowledged the deletion yet
     * (not polled it, or not polled since).
     */
    synchronized boolean hasPendingDelete(String nodeId, String key) {
        LinkedHashMap<String, Long> pending = deletes.get(nodeId);
        LinkedHashMap<String, Long> h = handed.get(nodeId);
        return pending != null && pending.containsKey(key) || h != null && h.containsKey(key);
    }

    /** An offload handed to {@code nodeId} ended (reported, failed or abandoned). */
    synchronized void offloadFinished(String nodeId) {
        Integer n = offloadsInFlightByNode.get(nodeId);
        if (n == null) {
            return; // the node was unregistered since: its offloads were counted out then
        }
        if (n <= 1) {
            offloadsInFlightByNode.remove(nodeId);
        } else {
            offloadsInFlightByNode.put(nodeId, n - 1);
        }
        offloadsInFlight = Math.max(0, offloadsInFlight - 1);
    }

    /**
     * Gives up the offload of {@code key} (of {@code version}) to {@code nodeId}: dropped if the node has not taken it
     * yet, else noted, so that the copy the node may still write is deleted when reported ({@link #takeAbandoned}).
     */
    synchronized void abandonOffload(String nodeId, String key, long version) {
        ArrayDeque<OffloadTask> q = offloads.get(nodeId);
        if (q != null && q.removeIf(t -> t.getKey().equals(key))) {
            return;
        }
        abandoned.computeIfAbsent(nodeId, n -> new HashMap<>()).merge(key, version, Math::max);
    }

    /**
     * If {@code nodeId}'s copy of {@code key} of {@code version} (0 = unknown) is one of an offload given up ({@link
     * #abandonOffload}), forgets that note and returns the version given up (what the copy's deletion must name);
     * else -1 (a copy of a later version is another object's).
     */
    synchronized long takeAbandoned(String nodeId, String key, long version) {
        long taken = take(abandoned, nodeId, key, version);
        return taken >= 0 ? taken : take(abandonedBeforeRestart, nodeId, key, version);
    }

    private static long take(Map<String, HashMap<String, Long>> notes, String nodeId, String key, long version) {
        HashMap<String, Long> forNode = notes.get(nodeId);
        Long given = forNode == null ? null : forNode.get(key);
        if (given == null || version > given) {
            return -1;
        }
        forNode.remove(key);
        if (forNode.isEmpty()) {
            notes.remove(nodeId);
        }
        return given;
    }

    synchronized int offloadsInFlight() {
        return offloadsInFlight;
    }

    /** Counts a read of an SSD-only object; returns the estimated count. */
    synchronized long recordSsdRead(long keyHash) {
        return sketch.increment(keyHash);
    }

    /**
     * Queues (or re-prioritises) a promotion. Returns true if the key was newly queued; false if it was
     * queued already (its priority is raised) or the queue is full.
     */
    synchronized boolean queuePromotion(String nodeId, String key, long size, long hits) {
        if (!nodes.containsKey(nodeId)) {
            return false;
        }
        Long queued = queuedPromotionHits.get(key);
        if (queued == null && queuedPromotionHits.size() >= settings.promotionQueueLimit()) {
            return false;
        }
        if (queued != null && queued >= hits) {
            return false;
        }
        queuedPromotionHits.put(key, hits);
        promotions.computeIfAbsent(nodeId, n -> new PriorityQueue<>((a, b) -> Long.compare(b.hits(), a.hits())))
                .add(new Promotion(key, size, hits));
        return queued == null;
    }

    synchronized int promotionsQueued() {
        return queuedPromotionHits.size();
    }

    /**
     * Hands out up to {@code maxOffloads} offloads (FIFO) and {@code maxPromotions} promotions (hottest first), and
     * the deletes and deadlines waiting. The deletes handed out with the node's previous poll are done, except {@code
     * undeleted} (with {@code undeletedVersions}, parallel): those its backend failed are queued again.
     */
    synchronized Tasks poll(String nodeId, int maxOffloads, int maxPromotions, List<String> undeleted,
                            List<Long> undeletedVersions) {
        handed.remove(nodeId);
        for (int i = 0; i < undeleted.size(); i++) {
            addPendingDelete(nodeId, undeleted.get(i), undeletedVersions.get(i));
        }
        List<OffloadTask> off = new ArrayList<>();
        ArrayDeque<OffloadTask> q = offloads.get(nodeId);
        while (q != null && !q.isEmpty() && off.size() < maxOffloads) {
            off.add(q.poll());
        }
        List<PromotionTask> pro = new ArrayList<>();
        PriorityQueue<Promotion> p = promotions.get(nodeId);
        while (p != null && !p.isEmpty() && pro.size() < maxPromotions) {
            Promotion next = p.poll();
            Long current = queuedPromotionHits.get(next.key());
            if (current == null || current != next.hits()) {
                continue; // stale entry: re-queued with a higher count, or cancelled
            }
            queuedPromotionHits.remove(next.key());
            pro.add(PromotionTask.newBuilder().setKey(next.key()).setSize(next.size()).setHits(next.hits()).build());
        }
        List<String> del = new ArrayList<>();
        List<Long> delVersions = new ArrayList<>();
        LinkedHashMap<String, Long> d = deletes.get(nodeId);
        if (d != null) {
            LinkedHashMap<String, Long> h = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, Long>> it = d.entrySet().iterator(); it.hasNext() && del.size() < 1000; ) {
                Map.Entry<String, Long> e = it.next();
                del.add(e.getKey());
                delVersions.add(e.getValue());
                h.put(e.getKey(), e.getValue());
                it.remove();
            }
            if (d.isEmpty()) {
                deletes.remove(nodeId);
            }
            if (!h.isEmpty()) {
                handed.put(nodeId, h);
            }
        }
        List<DiskObject> dl = new ArrayList<>();
        LinkedHashMap<String, DiskObject> ds = deadlines.get(nodeId);
        if (ds != null) {
            for (Iterator<DiskObject> it = ds.values().iterator(); it.hasNext() && dl.size() < 1000; ) {
                dl.add(it.next());
                it.remove();
            }
            if (ds.isEmpty()) {
                deadlines.remove(nodeId);
            }
        }
        return new Tasks(off, pro, del, delVersions, dl);
    }

    /** Drops a queued promotion (its object was removed or promoted another way). */
    synchronized void cancelPromotion(String key) {
        queuedPromotionHits.remove(key);
    }

    /**
     * A poll's answer; {@code deleteVersions} parallel to {@code deletes} ({@link #queueDelete}), {@code deadlines}
     * as {@link #queueDeadline} queued them (key, version, deadline).
     */
    record Tasks(List<OffloadTask> offloads, List<PromotionTask> promotions, List<String> deletes,
                 List<Long> deleteVersions, List<DiskObject> deadlines) {
    }
}
