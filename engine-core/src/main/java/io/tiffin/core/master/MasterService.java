package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.util.Ticker;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The master's metadata service: objects, replicas, leases, pins, versions, segments and node
 * liveness, with Mooncake Store's semantics (see docs/ARCHITECTURE.md). It holds metadata only and
 * never object bytes.
 *
 * <p>Objects live in {@value MetadataShard#COUNT} shards, each with its own lock. Single-key calls take
 * one shard lock; batch calls group their keys by shard and take each shard's lock once, keeping the
 * per-key results in request order. Segment allocators have their own locks, always taken after a
 * shard lock (lock order: shard → segment → registry).
 *
 * <p>Errors a caller can act on come back as codes ({@link KeyResult}, {@link ErrorCode}); only
 * malformed requests and segment-management failures throw {@link TiffinException}.
 *
 * <p>Background work (eviction, discarding stuck puts, node expiry) is driven from outside by
 * {@link #runEvictionOnce()}, {@link #releaseStuckPuts()} and {@link #expireNodes()}, so tests can run
 * it deterministically with a manual {@link Ticker}.
 *
 * <p>Thread-safe.
 */
public final class MasterService {
    private static final Logger LOG = LogManager.getLogger(MasterService.class);

    private final MasterSettings settings;
    private final AllocationStrategy strategy;
    private final Ticker ticker;
    /** When this master started (ticker ms). */
    private final long startMillis;
    /**
     * After a restart, puts and removals are reported only from this instant (ms; 0 = no restart seen): clients
     * may still read objects of the previous run through cached locations on nodes that have not
     * re-mounted yet ({@link #mountSegment}).
     */
    private volatile long restartGuardUntilMillis;
    /**
     * Ids of the nodes that have mounted a segment to this master within the longest cache window of its start
     * (a re-mount after a restart is a node's first here); cleared at the first mount after that window.
     */
    private final java.util.Set<String> mountedNodes = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final RandomGenerator random;
    private final MetadataShard[] shards = new MetadataShard[MetadataShard.COUNT];
    private final SegmentRegistry segments = new SegmentRegistry();
    private final AtomicLong replicaIds = new AtomicLong();
    private final AtomicLong versions = new AtomicLong();
    private final AtomicLong keyCount = new AtomicLong();
    private final AtomicBoolean allocationFailed = new AtomicBoolean();
    private final MasterCounters counters = new MasterCounters();
    private final StorageTier tier;
    /**
     * Buffers whose metadata is gone but which someone may still read or write: replicas of pre-empted
     * puts (until the release timeout) and of force-removed objects that were leased (until the lease
     * ends). Ordered by release time; guarded by its own monitor.
     */
    private final java.util.PriorityQueue<DiscardedReplica> discarded =
            new java.util.PriorityQueue<>(java.util.Comparator.comparingLong(DiscardedReplica::releaseAtMillis));
    /** Every key, ordered: prefix and exact queries without a scan. Updated under the key's shard lock. */
    private final java.util.concurrent.ConcurrentSkipListSet<String> keyIndex =
            new java.util.concurrent.ConcurrentSkipListSet<>();

    private record DiscardedReplica(ReplicaRecord replica, long releaseAtMillis) {
    }

    /**
     * @param random the random source handed to the allocation strategy, or null for a thread-local
     *     one (tests pass a seeded generator; it must then be thread-safe or used from one thread)
     */
    public MasterService(MasterSettings settings, AllocationStrategy strategy, Ticker ticker, RandomGenerator random) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.strategy = Objects.requireNonNull(strategy, "strategy");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.random = random;
        this.tier = new StorageTier(settings.tier());
        // Versions survive a master restart: start above anything a previous run can have handed out.
        this.versions.set(ticker.millis() << 12);
        // So do replica ids: a client's read hint from a previous run never matches a replica of this one.
        this.replicaIds.set(ticker.millis() << 12);
        this.startMillis = ticker.millis();
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new MetadataShard();
        }
    }

    public MasterSettings settings() {
        return settings;
    }

    public MasterCounters counters() {
        return counters;
    }

    // ------------------------------------------------------------------ segments and nodes

    /** Mounts a segment of a node of unknown incarnation; see {@link #mountSegment(String, String, String, long, long)}. */
    public void mountSegment(String name, String nodeId, String endpoint, long capacity) {
        mountSegment(name, nodeId, endpoint, capacity, 0);
    }

    /**
     * Mounts a segment of a node; idempotent. The node counts as alive from now on. When the node's
     * mounted segments carry another {@code incarnation}, the node restarted (a crash and a quick restart
     * under the same {@code node.id}, before its TTL passed): its old segments are unmounted first and
     * the objects that lived only there are erased, since their bytes died with the old process.
     */
    public void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation) {
        mountSegment(name, nodeId, endpoint, capacity, incarnation, 0);
    }

    /**
     * As {@link #mountSegment(String, String, String, long, long)}, recording the node's {@code mountEpoch}
     * for this mount (0 = unknown): every descriptor of the segment carries it, and the node refuses
     * data-plane requests of other epochs. A repeated mount with a new epoch (the node re-mounting a
     * segment the master still knows) moves later descriptors to the new epoch.
     */
    public void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
                             long mountEpoch) {
        mountSegment(name, nodeId, endpoint, capacity, incarnation, mountEpoch, 0);
    }

    /**
     * As {@link #mountSegment(String, String, String, long, long, long)}, for a node that pings every
     * {@code pingIntervalMillis} (0 = unknown): a mount of another incarnation is refused while the mounted
     * one was heard from within three such periods — two running processes share the node.id, and the
     * mount would erase the objects of the other.
     *
     * @throws TiffinException {@code SEGMENT_ALREADY_EXISTS} saying so
     */
    public synchronized void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
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
            tier.unregister(nodeId);
            abandonTasksOf(nodeId);
            sweepDeadReplicas(java.util.Set.of());
        }
        long guardEnd = startMillis + longestCacheWindowMillis();
        if (now < guardEnd) {
            // (before the segment takes puts, so no PutEnd answered after it misses the guard)
            boolean firstMountHere = mountedNodes.add(nodeId);
            if (mountEpoch > 1 && firstMountHere && restartGuardUntilMillis == 0) {
                // A node mounted to a previous master: that master's clients may still read its objects through
                // cached locations on nodes that have not re-mounted yet (their mount epoch has not moved), so
                // a new object under the same key must wait until every such reuse has ended.
                restartGuardUntilMillis = guardEnd;
                LOG.info("Node {} was mounted to a previous master run; puts and removes answer only in {} ms,"
                        + " once locations cached from that run have expired", nodeId, guardEnd - now);
            }
        } else if (!mountedNodes.isEmpty()) {
            mountedNodes.clear(); // only a mount within the window can reveal a restart
        }
        segments.mount(name, nodeId, endpoint, capacity, incarnation, mountEpoch, now + settings.nodeTtl().toMillis());
        segments.heard(nodeId, now);
    }

    /**
     * The instant (ms) before which a PutEnd or a removal may not be answered: set when a node that was mounted to a
     * previous run of the master mounts soon after this one started (0 = none). A put completed before it
     * could be missed by a client still reading the key's object of the previous run through a location it
     * cached, from a node that has not re-mounted yet.
     */
    public long restartGuardUntilMillis() {
        return restartGuardUntilMillis;
    }

    /** The longest a lookup's answer may be reused from a location cache, with its margin ({@link ObjectMetadata#noteCachedLookup}). */
    private long longestCacheWindowMillis() {
        long ttl = settings.leaseTtl().toMillis();
        long window = ObjectMetadata.cacheWindowMillis(Long.MAX_VALUE, ttl);
        return Math.min(ttl, window + window / 4 + 1);
    }

    /**
     * Unmounts a segment: its replicas become unreadable at once, objects left with no replica are
     * erased. Idempotent; a segment of another node is INVALID_PARAMS.
     */
    public void unmountSegment(String nodeId, String name) {
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
            tier.unregister(nodeId);
            sweepDeadReplicas(java.util.Set.of(nodeId));
        } else {
            sweepDeadReplicas(java.util.Set.of());
        }
    }

    /** Heartbeat. Returns false when the node is unknown (it must re-mount its segments). */
    public boolean ping(String nodeId) {
        return ping(nodeId, 0) == PingOutcome.OK;
    }

    /** What a heartbeat learns. */
    public enum PingOutcome {
        /** The node is known; its TTL starts again. */
        OK,
        /** The master does not know the node: it must re-mount its segments. */
        UNKNOWN,
        /** Another process of this node.id has mounted since: the pinging one is out of the cluster. */
        SUPERSEDED
    }

    /** Heartbeat of a node process of {@code incarnation} (0 = unknown: any). */
    public PingOutcome ping(String nodeId, long incarnation) {
        long now = ticker.millis();
        if (incarnation != 0) {
            long mounted = segments.incarnationOf(nodeId);
            if (mounted != 0 && mounted != incarnation) {
                return PingOutcome.SUPERSEDED; // does not keep the other process's node alive
            }
        }
        if (!segments.touch(nodeId, now + settings.nodeTtl().toMillis())) {
            return PingOutcome.UNKNOWN;
        }
        segments.heard(nodeId, now);
        return PingOutcome.OK;
    }

    /**
     * Unmounts every segment of nodes that have not pinged within the node TTL and erases objects left
     * without replicas. Returns the ids of the expired nodes.
     */
    public List<String> expireNodes() {
        java.util.Map<String, List<String>> expired = segments.expireNodesAndUnmount(ticker.millis());
        if (expired.isEmpty()) {
            return List.of();
        }
        expired.forEach((node, names) -> {
            LOG.warn("Node {} missed its heartbeats for {}; unmounted its segments {}", node,
                    settings.nodeTtl(), names);
            tier.unregister(node);
        });
        sweepDeadReplicas(expired.keySet());
        return List.copyOf(expired.keySet());
    }

    /**
     * Forgets a node at once, as if its TTL had passed: unmounts its segments and erases objects left
     * without replicas. Its next ping is answered with "re-mount".
     */
    public void forgetNode(String nodeId) {
        segments.forgetNode(nodeId);
        for (String name : segments.segmentNamesOf(nodeId)) {
            segments.unmount(name);
        }
        tier.unregister(nodeId);
        sweepDeadReplicas(java.util.Set.of(nodeId));
    }

    public List<? extends io.tiffin.api.spi.allocation.SegmentView> segmentViews() {
        return segments.segments();
    }

    public java.util.Set<String> liveNodes() {
        return segments.liveNodes();
    }

    /** Drops replicas on unmounted segments and SSD copies of dead nodes; erases objects with nothing left. */
    private void sweepDeadReplicas(java.util.Set<String> deadNodes) {
        long erased = 0;
        for (MetadataShard shard : shards) {
            shard.lock.lock();
            try {
                for (ObjectMetadata m : List.copyOf(shard.objects.values())) {
                    int dropped = m.dropDeadReplicas();
                    if (!deadNodes.isEmpty()) {
                        int before = m.diskReplicas.size();
                        m.diskReplicas.removeIf(d -> deadNodes.contains(d.nodeId()));
                        dropped += before - m.diskReplicas.size();
                        if (m.taskNode != null && deadNodes.contains(m.taskNode)) {
                            dropped += abandonTask(m, false);
                        }
                    }
                    if (dropped > 0 && m.isEmpty()) {
                        forget(shard, m.key);
                        erased++;
                    }
                }
            } finally {
                shard.lock.unlock();
            }
        }
        if (erased > 0) {
            LOG.info("Erased {} objects whose replicas all lived on unmounted segments", erased);
        }
    }

    // ------------------------------------------------------------------ put

    private ErrorCode validateKey(String key) {
        if (key == null || key.isEmpty()) {
            return ErrorCode.INVALID_KEY;
        }
        if (key.length() > settings.maxKeyLength()
                || key.getBytes(StandardCharsets.UTF_8).length > settings.maxKeyLength()) {
            return ErrorCode.INVALID_KEY;
        }
        return ErrorCode.OK;
    }

    /**
     * Allocates the replicas of a new object and returns where to write them (status PROCESSING).
     * Codes: INVALID_KEY, INVALID_PARAMS (size), OBJECT_ALREADY_EXISTS (complete, or being written for
     * less than the discard timeout; a plain put treats it as success), OBJECT_HAS_LEASE (upsert of a
     * leased object), NO_AVAILABLE_HANDLE (no segment had room; triggers eviction).
     */
    public KeyResult<List<ReplicaDescriptor>> putStart(String clientId, String key, long size, PutOptions options) {
        ErrorCode invalid = validatePut(key, size);
        if (invalid != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, invalid);
        }
        return inShard(key, shard -> putStartLocked(shard, clientId, key, size, options, ticker.millis()));
    }

    private ErrorCode validatePut(String key, long size) {
        ErrorCode k = validateKey(key);
        if (k != ErrorCode.OK) {
            return k;
        }
        if (size <= 0 || size > settings.maxObjectSize()) {
            return ErrorCode.INVALID_PARAMS;
        }
        return ErrorCode.OK;
    }

    private KeyResult<List<ReplicaDescriptor>> putStartLocked(MetadataShard shard, String clientId, String key,
                                                              long size, PutOptions options, long now) {
        ObjectMetadata existing = shard.objects.get(key);
        if (existing == null && shard.heldUntil(key, now) != 0) {
            // forced out (or lost with its node) while clients may still read it through cached locations
            return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE);
        }
        if (existing != null) {
            existing.dropDeadReplicas();
            boolean complete = existing.hasReadableReplica();
            if (!complete && existing.cachedUntilMillis > now) {
                return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE); // as above: its readers may still read it
            }
            if (complete && options.upsert() && !existing.processing) {
                // As for a remove: the replaced object's buffers must be nobody's destination or source.
                if (existing.isLeased(now)) {
                    return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE);
                }
                if (!existing.allComplete()) {
                    return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY); // a promotion writes one
                }
                if (existing.offloadPending) {
                    return KeyResult.failed(key, ErrorCode.OBJECT_HAS_REPLICATION_TASK); // a node reads one
                }
                erase(shard, existing);
            } else if (complete || existing.putStartMillis + settings.putStartDiscardTimeout().toMillis() > now) {
                return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
            } else {
                // A stuck put: pre-empt it, but keep its buffers until the release timeout since its
                // writer may still be writing into them.
                preemptStuckPut(shard, existing);
            }
        }
        List<String> preferred = options.preferredSegment().map(List::of).orElse(List.of());
        SegmentReplicaSink sink = new SegmentReplicaSink(size, options.replicas(), random);
        // clients are not nodes: the writer's node is unknown to a put (a promotion names its node)
        if (!place(new AllocationRequest(size, options.replicas(), preferred, ""), sink)) {
            return KeyResult.failed(key, ErrorCode.INTERNAL_ERROR);
        }
        if (sink.placed() == 0) {
            counters.allocationFailures.increment();
            noteAllocationFailure(size);
            return KeyResult.failed(key, ErrorCode.NO_AVAILABLE_HANDLE);
        }
        if (sink.placed() < options.replicas()) {
            counters.partialAllocations.increment();
        }
        List<ReplicaRecord> replicas = new ArrayList<>(sink.placed());
        List<ReplicaDescriptor> descriptors = new ArrayList<>(sink.placed());
        for (int i = 0; i < sink.placed(); i++) {
            MountedSegment seg = sink.segment(i);
            long handle = sink.handle(i);
            ReplicaRecord r = new ReplicaRecord(replicaIds.incrementAndGet(), seg, handle, seg.offset(handle), size);
            replicas.add(r);
            descriptors.add(r.toDescriptor());
        }
        ObjectMetadata m = new ObjectMetadata(key, clientId, size, now, options.hardPin(), options.softPin(), replicas);
        insert(shard, m);
        return KeyResult.ok(key, descriptors);
    }

    /**
     * Runs the allocation strategy (plugin code). Returns false if it threw: what it placed so far is
     * freed — nothing else would ever free it — the failure is logged (the first, then every 1000th) and
     * the caller fails the key with {@code INTERNAL_ERROR} (other keys of a batch go on).
     */
    private boolean place(AllocationRequest request, SegmentReplicaSink sink) {
        try {
            strategy.place(request, segments.segments(), sink);
            return true;
        } catch (RuntimeException e) {
            sink.rollback();
            long n = strategyFailures.incrementAndGet();
            if (n == 1 || n % 1000 == 0) {
                LOG.warn("Allocation strategy {} failed ({} failures so far); its puts fail with INTERNAL_ERROR:"
                        + " fix the plugin or choose another allocation.strategy", strategy.getClass().getName(), n, e);
            }
            return false;
        }
    }

    private final java.util.concurrent.atomic.AtomicLong strategyFailures = new java.util.concurrent.atomic.AtomicLong();

    private void preemptStuckPut(MetadataShard shard, ObjectMetadata stuck) {
        long releaseAt = stuck.putStartMillis + settings.putStartReleaseTimeout().toMillis();
        synchronized (discarded) {
            for (ReplicaRecord r : stuck.replicas) {
                if (r.status == ReplicaStatus.PROCESSING) {
                    discarded.add(new DiscardedReplica(r, releaseAt));
                } else {
                    r.free();
                }
            }
        }
        stuck.replicas.clear();
        forget(shard, stuck.key);
        counters.putStartDiscards.increment();
    }

    /** Marks the object's replicas complete and gives it a version. Codes: OBJECT_NOT_FOUND, ILLEGAL_CLIENT, INVALID_WRITE. */
    public ErrorCode putEnd(String clientId, String key) {
        return inShard(key, shard -> putEndLocked(shard, clientId, key, ticker.millis()));
    }

    private ErrorCode putEndLocked(MetadataShard shard, String clientId, String key, long now) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        if (!m.writerId.equals(clientId)) {
            return ErrorCode.ILLEGAL_CLIENT;
        }
        if (!m.processing) {
            return m.allComplete() ? ErrorCode.OK : ErrorCode.INVALID_WRITE;
        }
        m.dropDeadReplicas();
        if (m.replicas.isEmpty()) {
            forget(shard, key);
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        for (ReplicaRecord r : m.replicas) {
            r.status = ReplicaStatus.COMPLETE;
        }
        m.processing = false;
        m.version = versions.incrementAndGet();
        m.leaseTimeoutMillis = now; // a 0 ms lease seeds the least-recently-used order
        if (m.softPinRequested) {
            m.softPinDeadlineMillis = now + settings.softPinTtl().toMillis();
        }
        if (settings.tier().offloadMode() == TierSettings.OffloadMode.WRITE_THROUGH) {
            queueOffload(m);
        }
        return ErrorCode.OK;
    }

    /** Abandons an unfinished put and frees its buffers. Codes: OBJECT_NOT_FOUND, ILLEGAL_CLIENT, INVALID_WRITE. */
    public ErrorCode putRevoke(String clientId, String key) {
        return inShard(key, shard -> putRevokeLocked(shard, clientId, key));
    }

    private ErrorCode putRevokeLocked(MetadataShard shard, String clientId, String key) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        if (!m.writerId.equals(clientId)) {
            return ErrorCode.ILLEGAL_CLIENT;
        }
        if (!m.processing) {
            return ErrorCode.INVALID_WRITE;
        }
        erase(shard, m);
        return ErrorCode.OK;
    }

    public List<KeyResult<List<ReplicaDescriptor>>> batchPutStart(String clientId, List<String> keys, List<Long> sizes,
                                                                  PutOptions options) {
        if (keys.size() != sizes.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "batch put: " + keys.size() + " keys but " + sizes.size() + " sizes");
        }
        @SuppressWarnings("unchecked")
        KeyResult<List<ReplicaDescriptor>>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            ErrorCode invalid = validatePut(key, sizes.get(i));
            out[i] = invalid != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, invalid)
                    : putStartLocked(shard, clientId, key, sizes.get(i), options, now);
        });
        return Arrays.asList(out);
    }

    public List<ErrorCode> batchPutEnd(String clientId, List<String> keys) {
        ErrorCode[] out = new ErrorCode[keys.size()];
        long now = ticker.millis();
        forEachByShard(keys, (shard, i) -> out[i] = putEndLocked(shard, clientId, keys.get(i), now));
        return Arrays.asList(out);
    }

    public List<ErrorCode> batchPutRevoke(String clientId, List<String> keys) {
        ErrorCode[] out = new ErrorCode[keys.size()];
        forEachByShard(keys, (shard, i) -> out[i] = putRevokeLocked(shard, clientId, keys.get(i)));
        return Arrays.asList(out);
    }

    // ------------------------------------------------------------------ get

    /**
     * The readable replicas of a key, granting a read lease. Codes: OBJECT_NOT_FOUND,
     * REPLICA_IS_NOT_READY (being written).
     */
    public KeyResult<ObjectLocation> getReplicaList(String key) {
        return getReplicaList(key, 0);
    }

    /**
     * As {@link #getReplicaList(String)}, for a client that will reuse the answer from its location cache
     * for up to {@code cacheForMillis} (at most half the lease; 0 = it will not): a forced removal of the
     * object is then reported only once that reuse has ended ({@link CacheHold}).
     */
    public KeyResult<ObjectLocation> getReplicaList(String key, long cacheForMillis) {
        return getReplicaList(key, cacheForMillis, 0);
    }

    /** As {@link #getReplicaList(String, long)}, naming the client's cache ({@code owner} > 0; 0 = unknown). */
    public KeyResult<ObjectLocation> getReplicaList(String key, long cacheForMillis, long owner) {
        if (validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        return inShard(key, shard -> locateLocked(shard, key, ticker.millis(), cacheForMillis, owner));
    }

    private KeyResult<ObjectLocation> locateLocked(MetadataShard shard, String key, long now, long cacheForMillis,
                                                   long owner) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
        }
        List<ReplicaDescriptor> readable = null;
        for (ReplicaRecord r : m.replicas) {
            if (r.isReadable()) {
                if (readable == null) {
                    readable = new ArrayList<>(m.replicas.size());
                }
                readable.add(r.toDescriptor());
            }
        }
        if (!m.diskReplicas.isEmpty() && !m.processing) {
            if (readable == null) {
                readable = new ArrayList<>(m.diskReplicas.size());
                countSsdOnlyRead(m);
            }
            for (DiskReplica d : m.diskReplicas) {
                readable.add(d.toDescriptor()); // after the memory replicas: the client prefers those
            }
        }
        if (readable == null) {
            if (m.processing) {
                return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY);
            }
            erase(shard, m);
            return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
        }
        long ttl = settings.leaseTtl().toMillis();
        m.grantLease(now, ttl);
        if (cacheForMillis > 0) {
            m.noteCachedLookup(now, ttl, cacheForMillis, owner);
        }
        return KeyResult.ok(key, new ObjectLocation(key, m.size, m.version, ttl, readable));
    }

    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys) {
        return batchGetReplicaList(keys, 0);
    }

    /** As {@link #batchGetReplicaList(List)} for a client with a location cache (see {@link #getReplicaList(String, long)}). */
    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys, long cacheForMillis) {
        return batchGetReplicaList(keys, cacheForMillis, 0);
    }

    /** As {@link #batchGetReplicaList(List, long)}, naming the client's cache ({@code owner} > 0; 0 = unknown). */
    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys, long cacheForMillis, long owner) {
        @SuppressWarnings("unchecked")
        KeyResult<ObjectLocation>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = validateKey(key) != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY)
                    : locateLocked(shard, key, now, cacheForMillis, owner);
        });
        return Arrays.asList(out);
    }

    /** True if the key has a readable replica; grants a read lease when true. */
    public KeyResult<Boolean> existKey(String key) {
        if (validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        return inShard(key, shard -> KeyResult.ok(key, existsLocked(shard, key, ticker.millis())));
    }

    private boolean existsLocked(MetadataShard shard, String key, long now) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null || !m.hasReadableReplica()) {
            return false;
        }
        m.grantLease(now, settings.leaseTtl().toMillis());
        return true;
    }

    public List<KeyResult<Boolean>> batchExistKey(List<String> keys) {
        @SuppressWarnings("unchecked")
        KeyResult<Boolean>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = validateKey(key) != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY)
                    : KeyResult.ok(key, existsLocked(shard, key, now));
        });
        return Arrays.asList(out);
    }

    /**
     * Readable replicas of every key matching {@code regex} (RE2, searched anywhere in the key), with
     * leases, in key order. Prefix and exact patterns are answered from the ordered key index
     * ({@link KeyQuery}); other patterns scan every key.
     */
    public List<ObjectLocation> getReplicaListByRegex(String regex) {
        return locateMatching(KeyQuery.compile(regex), true);
    }

    /** {@link #getReplicaListByRegex} always through the regex engine over every key (the baseline). */
    public List<ObjectLocation> getReplicaListByRegexFullScan(String regex) {
        return locateMatching(KeyQuery.compile(regex), false);
    }

    private List<ObjectLocation> locateMatching(KeyQuery q, boolean fastPath) {
        long now = ticker.millis();
        List<ObjectLocation> out = new ArrayList<>();
        boolean inKeyOrder = forEachMatch(q, fastPath, (shard, key) -> {
            KeyResult<ObjectLocation> r = locateLocked(shard, key, now, 0, 0);
            if (r.isOk()) {
                out.add(r.value());
            }
        });
        if (!inKeyOrder) {
            out.sort(java.util.Comparator.comparing(ObjectLocation::key));
        }
        return out;
    }

    /**
     * Calls {@code action} under the shard lock for every present key matching {@code q}; returns whether
     * the calls came in key order. Index-answered queries walk the ordered index and lock each key's
     * shard on its own: their matches are spread over the shards anyway, so grouping them by shard
     * would only add a sort and undo the key order.
     */
    private boolean forEachMatch(KeyQuery q, boolean fastPath, java.util.function.BiConsumer<MetadataShard, String> action) {
        if (fastPath && (q.kind() == KeyQuery.Kind.PREFIX || q.kind() == KeyQuery.Kind.EXACT)) {
            Iterable<String> candidates = q.kind() == KeyQuery.Kind.EXACT ? List.of(q.literal())
                    : keyIndex.tailSet(q.literal());
            for (String key : candidates) {
                if (!key.startsWith(q.literal())) {
                    break;
                }
                if (!q.matches(key)) {
                    continue;
                }
                MetadataShard shard = shards[MetadataShard.indexOf(key)];
                shard.lock.lock();
                try {
                    if (shard.objects.containsKey(key)) {
                        action.accept(shard, key);
                    }
                } finally {
                    shard.lock.unlock();
                }
            }
            return true;
        }
        for (MetadataShard shard : shards) {
            shard.lock.lock();
            try {
                for (String key : List.copyOf(shard.objects.keySet())) {
                    if (fastPath ? q.matches(key) : q.matchesWithRegexEngine(key)) {
                        action.accept(shard, key);
                    }
                }
            } finally {
                shard.lock.unlock();
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ remove

    /**
     * Collects, over one removal call, the latest instant (master ms) until which a client may still read
     * a force-removed object through a location it cached ({@link ObjectMetadata#cachedUntilMillis}). The
     * caller reports the removal only after it ({@link #millisUntil}), so a get that starts after the
     * removal returned finds nothing, cached or not; until then puts of the key are refused with
     * OBJECT_HAS_LEASE. Thread-safe.
     */
    public static final class CacheHold {
        private final java.util.concurrent.atomic.AtomicLong untilMillis = new java.util.concurrent.atomic.AtomicLong();
        private final long owner;

        /** For a removal by an unknown client: every cache's locations are waited for. */
        public CacheHold() {
            this(0);
        }

        /**
         * For a removal by the client whose location cache is {@code owner} (> 0; 0 = unknown): objects only
         * that cache holds are not waited for, since the client drops its own entries around the removal.
         */
        public CacheHold(long owner) {
            this.owner = owner;
        }

        void cover(long until) {
            untilMillis.accumulateAndGet(until, Math::max);
        }

        /** The instant (master ms) to wait for; 0 = none. */
        public long untilMillis() {
            return untilMillis.get();
        }
    }

    /** Milliseconds from now (the master's clock) until {@code instantMillis}; 0 if it has passed. */
    public long millisUntil(long instantMillis) {
        return Math.max(0, instantMillis - ticker.millis());
    }

    /** Codes: OBJECT_NOT_FOUND, OBJECT_HAS_LEASE (unless force), REPLICA_IS_NOT_READY (being written). */
    public ErrorCode remove(String key, boolean force) {
        return remove(key, force, null);
    }

    /** As {@link #remove(String, boolean)}; a forced removal notes in {@code hold} (if not null) what to wait for. */
    public ErrorCode remove(String key, boolean force, CacheHold hold) {
        if (validateKey(key) != ErrorCode.OK) {
            return ErrorCode.INVALID_KEY;
        }
        long now = ticker.millis();
        coverRestartGuard(hold, now);
        return inShard(key, shard -> removeLocked(shard, key, force, now, hold));
    }

    /**
     * Right after a restart, clients may read any key's object of the previous run through cached locations
     * ({@link #restartGuardUntilMillis}): a removal, whatever it finds, answers only after that.
     */
    private void coverRestartGuard(CacheHold hold, long now) {
        long guard = restartGuardUntilMillis;
        if (hold != null && guard > now) {
            hold.cover(guard);
        }
    }

    private ErrorCode removeLocked(MetadataShard shard, String key, boolean force, long now, CacheHold hold) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            if (hold != null) {
                // already forced out (or lost with its node) and still readable through cached locations:
                // "not found" may be said only once those reads are over, as the first removal's answer
                hold.cover(shard.heldUntil(key, now));
            }
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        if (!force && m.isLeased(now)) {
            return ErrorCode.OBJECT_HAS_LEASE;
        }
        if (m.processing || !m.allComplete()) {
            return ErrorCode.REPLICA_IS_NOT_READY;
        }
        if (m.offloadPending) {
            return ErrorCode.OBJECT_HAS_REPLICATION_TASK;
        }
        if (hold != null && m.cachedUntilMillis > now) {
            if (hold.owner > 0 && m.cachedByOwner == hold.owner) {
                m.cachedUntilMillis = 0; // only the remover's cache holds it: nothing to wait for, no hold on puts
            } else {
                hold.cover(m.cachedUntilMillis);
            }
        }
        if (m.isLeased(now)) {
            // Forced removal of an object being read: the key goes now, but its buffers stay out of
            // reach of new puts until the lease ends, so the reader never sees another object's bytes.
            quarantine(m.replicas, m.leaseTimeoutMillis);
            m.replicas.clear();
            dropDiskCopies(m);
            forget(shard, key);
        } else {
            erase(shard, m);
        }
        return ErrorCode.OK;
    }

    private void quarantine(List<ReplicaRecord> replicas, long releaseAtMillis) {
        synchronized (discarded) {
            for (ReplicaRecord r : replicas) {
                discarded.add(new DiscardedReplica(r, releaseAtMillis));
            }
        }
    }

    /** Frees quarantined buffers whose release time has passed; returns how many. Cheap when none are due. */
    public int releaseDiscarded() {
        long now = ticker.millis();
        int released = 0;
        synchronized (discarded) {
            while (!discarded.isEmpty() && discarded.peek().releaseAtMillis() <= now) {
                discarded.poll().replica().free();
                released++;
            }
        }
        return released;
    }

    public List<ErrorCode> batchRemove(List<String> keys, boolean force) {
        return batchRemove(keys, force, null);
    }

    /** As {@link #batchRemove(List, boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public List<ErrorCode> batchRemove(List<String> keys, boolean force, CacheHold hold) {
        ErrorCode[] out = new ErrorCode[keys.size()];
        long now = ticker.millis();
        coverRestartGuard(hold, now);
        forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = validateKey(key) != ErrorCode.OK ? ErrorCode.INVALID_KEY : removeLocked(shard, key, force, now, hold);
        });
        return Arrays.asList(out);
    }

    /** Removes matching objects that pass the remove checks; returns how many. */
    public long removeByRegex(String regex, boolean force) {
        return removeByRegex(regex, force, null);
    }

    /** As {@link #removeByRegex(String, boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public long removeByRegex(String regex, boolean force, CacheHold hold) {
        return removeMatching(KeyQuery.compile(regex), force, hold);
    }

    /** Removes every object that passes the remove checks; returns how many. */
    public long removeAll(boolean force) {
        return removeAll(force, null);
    }

    /** As {@link #removeAll(boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public long removeAll(boolean force, CacheHold hold) {
        return removeMatching(KeyQuery.compile("^"), force, hold);
    }

    private long removeMatching(KeyQuery q, boolean force, CacheHold hold) {
        long now = ticker.millis();
        coverRestartGuard(hold, now);
        long[] removed = new long[1];
        forEachMatch(q, true, (shard, key) -> {
            if (removeLocked(shard, key, force, now, hold) == ErrorCode.OK) {
                removed[0]++;
            }
        });
        if (hold != null) {
            // matching keys that are already gone but still readable through cached locations (see removeLocked)
            for (MetadataShard shard : shards) {
                shard.lock.lock();
                try {
                    hold.cover(shard.heldUntilMatching(q::matches, now));
                } finally {
                    shard.lock.unlock();
                }
            }
        }
        return removed[0];
    }

    private void erase(MetadataShard shard, ObjectMetadata m) {
        if (!m.processing) {
            // a promotion's replica (a put's own are the revoking writer's, or preemptStuckPut's, concern)
            quarantineProcessing(m);
        }
        m.freeAll();
        dropDiskCopies(m);
        forget(shard, m.key);
    }

    /**
     * Moves replicas still being written (a promotion's, whose node may be copying into it right now) out
     * of the object into quarantine until the release timeout, so no new put is placed where the writer
     * still writes. Returns how many. Caller holds the shard lock.
     */
    private int quarantineProcessing(ObjectMetadata m) {
        List<ReplicaRecord> writing = null;
        for (ReplicaRecord r : m.replicas) {
            if (r.status == ReplicaStatus.PROCESSING) {
                if (writing == null) {
                    writing = new ArrayList<>(1);
                }
                writing.add(r);
            }
        }
        if (writing == null) {
            return 0;
        }
        quarantine(writing, ticker.millis() + settings.putStartReleaseTimeout().toMillis());
        m.replicas.removeAll(writing);
        return writing.size();
    }

    /**
     * Gives up an object's pending offload or promotion (its node died, restarted or never reported): the
     * offload's slot is freed and a promotion's unfinished replica leaves the object — freed when its
     * release timeout has passed ({@code writerDone}), quarantined until then otherwise (a node declared
     * dead may still be copying into it). Returns how many replicas left the object. Caller holds the
     * shard lock.
     */
    private int abandonTask(ObjectMetadata m, boolean writerDone) {
        if (m.offloadPending) {
            tier.cancelQueuedOffload(m.taskNode, m.key);
            tier.offloadFinished(m.taskNode);
        }
        int dropped = 0;
        if (!m.processing) {
            if (writerDone) {
                for (java.util.Iterator<ReplicaRecord> it = m.replicas.iterator(); it.hasNext(); ) {
                    ReplicaRecord r = it.next();
                    if (r.status == ReplicaStatus.PROCESSING) {
                        r.free();
                        it.remove();
                        dropped++;
                    }
                }
            } else {
                dropped = quarantineProcessing(m);
            }
        }
        m.clearTask();
        return dropped;
    }

    /** {@link #abandonTask} for every object whose task belongs to {@code nodeId}. */
    private void abandonTasksOf(String nodeId) {
        for (MetadataShard shard : shards) {
            shard.lock.lock();
            try {
                for (ObjectMetadata m : List.copyOf(shard.objects.values())) {
                    if (nodeId.equals(m.taskNode)) {
                        abandonTask(m, false);
                        if (m.isEmpty()) {
                            forget(shard, m.key);
                        }
                    }
                }
            } finally {
                shard.lock.unlock();
            }
        }
    }

    /** Forgets the object's SSD copies and asks their nodes to delete them (or a restart would bring them back). */
    private void dropDiskCopies(ObjectMetadata m) {
        for (DiskReplica d : m.diskReplicas) {
            tier.queueDelete(d.nodeId(), m.key);
        }
        m.diskReplicas.clear();
    }

    /** Drops an object's memory replicas; the object stays if it has SSD copies. */
    private void evictMemory(MetadataShard shard, ObjectMetadata m) {
        m.freeAll();
        if (m.diskReplicas.isEmpty()) {
            forget(shard, m.key);
        }
    }

    /** Adds an object to its shard and the key index. Caller holds the shard lock. */
    private void insert(MetadataShard shard, ObjectMetadata m) {
        shard.objects.put(m.key, m);
        keyIndex.add(m.key);
        keyCount.incrementAndGet();
    }

    /**
     * Removes a key from its shard and the key index (buffers are the caller's concern). If clients may
     * still read the object through cached locations, puts of the key are refused until they cannot.
     */
    private void forget(MetadataShard shard, String key) {
        ObjectMetadata gone = shard.objects.remove(key);
        if (gone != null) {
            keyIndex.remove(key);
            keyCount.decrementAndGet();
            if (gone.cachedUntilMillis != 0 && gone.cachedUntilMillis > ticker.millis()) {
                shard.hold(key, gone.cachedUntilMillis);
            }
        }
    }

    // ------------------------------------------------------------------ listing and stats

    /**
     * Complete objects whose key starts with {@code prefix}, in key order, at most {@code limit}; does
     * not grant leases. Costs O(log n + limit).
     */
    public ListedKeys listKeys(String prefix, int limit) {
        java.util.LinkedHashMap<String, Long> found = new java.util.LinkedHashMap<>();
        boolean truncated = false;
        for (String key : keyIndex.tailSet(prefix)) {
            if (!key.startsWith(prefix)) {
                break;
            }
            MetadataShard shard = shards[MetadataShard.indexOf(key)];
            shard.lock.lock();
            try {
                ObjectMetadata m = shard.objects.get(key);
                if (m == null || m.processing) {
                    continue;
                }
                if (found.size() == limit) {
                    truncated = true;
                    break;
                }
                found.put(key, m.size);
            } finally {
                shard.lock.unlock();
            }
        }
        return new ListedKeys(found, truncated);
    }

    /** Keys found by {@link #listKeys} and whether more exist. */
    public record ListedKeys(Map<String, Long> keys, boolean truncated) {
    }

    public long keyCount() {
        return keyCount.get();
    }

    public long capacityBytes() {
        long c = 0;
        for (MountedSegment s : segments.segments()) {
            c += s.capacity();
        }
        return c;
    }

    public long usedBytes() {
        long u = 0;
        for (MountedSegment s : segments.segments()) {
            u += s.used();
        }
        return u;
    }

    /** Endpoint of a mounted segment, or null. */
    public String endpointOf(String segment) {
        MountedSegment s = segments.get(segment);
        return s == null ? null : s.endpoint();
    }

    // ------------------------------------------------------------------ eviction and stuck puts

    /**
     * An allocation of {@code size} bytes found no room: asks the next eviction pass to free some, unless
     * no mounted segment could hold the object even empty (evicting would cost objects and gain nothing).
     */
    private void noteAllocationFailure(long size) {
        for (MountedSegment seg : segments.segments()) {
            if (seg.capacity() >= size) {
                allocationFailed.set(true);
                return;
            }
        }
    }

    /**
     * One eviction pass, Mooncake's BatchEvict: runs when used/capacity exceeds the high watermark or
     * an allocation failed since the last run. Frees {@code target} of the evictable objects, oldest
     * lease first: leased and hard-pinned objects never, soft-pinned ones only in a second pass when
     * the first freed less than the lower bound. Returns the number of objects evicted.
     */
    public int runEvictionOnce() {
        releaseDiscarded();
        long capacity = capacityBytes();
        if (capacity == 0) {
            allocationFailed.set(false);
            return 0;
        }
        double used = (double) usedBytes() / capacity;
        boolean failed = allocationFailed.getAndSet(false);
        double hw = settings.evictionHighWatermark();
        double ratio = settings.evictionRatio();
        if (!(used > hw || failed) || ratio <= 0) {
            return 0;
        }
        releaseStuckPuts();
        double target = Math.max(ratio, used - hw + ratio);
        double lowerBound = Math.max(target * 0.5, used - hw);
        long now = ticker.millis();

        // Census: evictable objects, split into normal and soft-pinned candidates.
        long base = 0;
        List<Candidate> normal = new ArrayList<>();
        List<Candidate> softPinned = new ArrayList<>();
        for (int s = 0; s < shards.length; s++) {
            MetadataShard shard = shards[s];
            shard.lock.lock();
            try {
                for (ObjectMetadata m : shard.objects.values()) {
                    if (m.hardPinned || m.processing || m.offloadPending || !m.hasReadableMemoryReplica()) {
                        continue;
                    }
                    base++;
                    if (m.isLeased(now)) {
                        continue;
                    }
                    (m.isSoftPinned(now) ? softPinned : normal).add(new Candidate(m.leaseTimeoutMillis, s, m.key));
                }
            } finally {
                shard.lock.unlock();
            }
        }
        if (base == 0) {
            return 0;
        }
        long ideal = (long) Math.ceil(base * target);
        long minimum = (long) Math.ceil(base * lowerBound);
        normal.sort(Candidate.ORDER);
        int evicted = evictInOrder(normal, ideal, now);
        if (evicted < minimum && settings.allowEvictSoftPinned()) {
            softPinned.sort(Candidate.ORDER);
            evicted += evictInOrder(softPinned, minimum - evicted, now);
        }
        counters.evictionRuns.increment();
        counters.evictedKeys.add(evicted);
        if (evicted > 0) {
            LOG.debug("Evicted {} of {} evictable objects (used {}%, target {})", evicted, base,
                    Math.round(used * 100), target);
        }
        return evicted;
    }

    private record Candidate(long leaseTimeout, int shard, String key) {
        static final java.util.Comparator<Candidate> ORDER = java.util.Comparator.comparingLong(Candidate::leaseTimeout);
    }

    private int evictInOrder(List<Candidate> candidates, long wanted, long now) {
        int evicted = 0;
        for (Candidate c : candidates) {
            if (evicted >= wanted) {
                break;
            }
            MetadataShard shard = shards[c.shard()];
            shard.lock.lock();
            try {
                ObjectMetadata m = shard.objects.get(c.key());
                // Re-validate: the object may have been read, removed or replaced since the census.
                if (m == null || m.hardPinned || m.processing || m.offloadPending || m.isLeased(now)
                        || !m.hasReadableMemoryReplica()) {
                    continue;
                }
                if (settings.tier().offloadMode() == TierSettings.OffloadMode.ON_EVICT && m.diskReplicas.isEmpty()
                        && !m.offloadFailed && queueOffload(m)) {
                    evicted++; // its memory is freed when the node reports the SSD copy
                    continue;
                }
                counters.evictedBytes.add(m.size);
                evictMemory(shard, m);
                evicted++;
            } finally {
                shard.lock.unlock();
            }
        }
        return evicted;
    }

    /**
     * Frees the buffers of puts that never finished: pre-empted puts whose release time passed, and
     * puts still in progress after the release timeout; drops passed holds of forgotten keys
     * ({@link MetadataShard#hold}). Returns the number of buffers freed.
     */
    public int releaseStuckPuts() {
        long now = ticker.millis();
        int released = releaseDiscarded();
        long releaseMs = settings.putStartReleaseTimeout().toMillis();
        for (MetadataShard shard : shards) {
            shard.lock.lock();
            try {
                shard.purgeHeld(now);
                for (ObjectMetadata m : List.copyOf(shard.objects.values())) {
                    if (m.processing && m.putStartMillis + releaseMs <= now) {
                        released += m.replicas.size();
                        m.freeAll(); // the release timeout has passed: the writer is done or gone
                        erase(shard, m);
                    } else if (m.taskNode != null && m.taskStartMillis + releaseMs <= now) {
                        // An offload or promotion whose node never reported (a lost answer, a node that
                        // died after taking the task): without this the object stays pinned forever.
                        LOG.warn("Abandoning the {} of {} on node {}: no report within {}",
                                m.offloadPending ? "offload" : "promotion", m.key, m.taskNode,
                                settings.putStartReleaseTimeout());
                        counters.abandonedTasks.increment();
                        abandonTask(m, true);
                        if (m.isEmpty()) {
                            forget(shard, m.key);
                        }
                    }
                }
            } finally {
                shard.lock.unlock();
            }
        }
        counters.putStartReleases.add(released);
        return released;
    }

    // ------------------------------------------------------------------ SSD tier

    public TierSettings tierSettings() {
        return settings.tier();
    }

    /** Bytes of SSD capacity registered by live nodes. */
    public long ssdCapacityBytes() {
        return tier.capacityBytes();
    }

    public int offloadsInFlight() {
        return tier.offloadsInFlight();
    }

    public int promotionsQueued() {
        return tier.promotionsQueued();
    }

    /** A node announces its SSD tier. It must have mounted a segment first (that gives its endpoint). */
    public void registerStorage(String nodeId, long capacity) {
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
     * Records SSD copies a node holds: after a restart (everything its scan found) or after an offload.
     * An object the master does not know is created from its SSD copy (with a new version); one whose
     * size differs is left alone. A pending offload of the key to this node is complete; with on-evict
     * offload its memory replicas are freed now (kept until the lease ends if it is being read).
     */
    public void reportDiskObjects(String nodeId, List<String> keys, List<Long> sizes) {
        StorageTier.NodeInfo node = storageNode(nodeId);
        long now = ticker.millis();
        forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            long size = sizes.get(i);
            if (validateKey(key) != ErrorCode.OK || size <= 0) {
                return;
            }
            ObjectMetadata m = shard.objects.get(key);
            if (m == null && tier.hasPendingDelete(nodeId, key)) {
                // removed while the node was away: the delete goes out at its next poll
                counters.staleDiskCopies.increment();
                return;
            }
            if (m == null) {
                m = new ObjectMetadata(key, "ssd:" + nodeId, size, now, false, false, List.of());
                m.processing = false;
                m.version = versions.incrementAndGet();
                m.leaseTimeoutMillis = now;
                insert(shard, m);
            } else if (!m.hasDiskReplicaOn(nodeId) && !(m.offloadPending && nodeId.equals(m.taskNode))) {
                // The master knows this key but never asked this node for it (the copy predates a remove
                // and re-put, or the node was dropped meanwhile): it may hold other bytes. Delete it.
                tier.queueDelete(nodeId, key);
                counters.staleDiskCopies.increment();
                return;
            } else if (m.size != size) {
                LOG.warn("Node {} reported {} on SSD with {} bytes, but the master knows {} bytes; deleting that copy",
                        nodeId, key, size, m.size);
                tier.queueDelete(nodeId, key);
                return;
            }
            if (!m.hasDiskReplicaOn(nodeId)) {
                m.diskReplicas.add(new DiskReplica(replicaIds.incrementAndGet(), nodeId, node.endpoint(), size));
            }
            if (m.offloadPending && nodeId.equals(m.taskNode)) {
                m.offloadPending = false;
                m.taskNode = null;
                tier.offloadFinished(nodeId);
                counters.offloads.increment();
                if (settings.tier().offloadMode() == TierSettings.OffloadMode.ON_EVICT) {
                    counters.evictedBytes.add(m.size);
                    if (m.isLeased(now)) {
                        quarantine(m.replicas, m.leaseTimeoutMillis);
                        m.replicas.clear();
                    } else {
                        m.freeAll();
                    }
                }
            }
        });
    }

    /** Offloads that failed (for example a full disk): the memory copies stay, eviction will drop them. */
    public void offloadFailed(String nodeId, List<String> keys) {
        forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m != null && m.offloadPending && nodeId.equals(m.taskNode)) {
                m.offloadPending = false;
                m.offloadFailed = true;
                m.taskNode = null;
                tier.offloadFinished(nodeId);
                counters.offloadFailures.increment();
            }
        });
    }

    /** Queues an offload of one memory replica on a node with an SSD tier. Caller holds the shard lock. */
    private boolean queueOffload(ObjectMetadata m) {
        for (ReplicaRecord r : m.replicas) {
            if (r.isReadable() && tier.hasStorage(r.segment.nodeId())) {
                io.tiffin.core.transport.proto.OffloadTask task = io.tiffin.core.transport.proto.OffloadTask.newBuilder()
                        .setKey(m.key).setSize(m.size).setSegment(r.segment.name()).setOffset(r.offset)
                        .setVersion(m.version).build();
                if (tier.queueOffload(r.segment.nodeId(), task)) {
                    m.offloadPending = true;
                    m.taskNode = r.segment.nodeId();
                    m.taskStartMillis = ticker.millis();
                    return true;
                }
                return false;
            }
        }
        return false;
    }

    /** Counts a read served from SSD and queues a promotion once the object is read often enough. */
    private void countSsdOnlyRead(ObjectMetadata m) {
        long hits = tier.recordSsdRead(m.key.hashCode() * 0x9E3779B97F4A7C15L + m.key.length());
        if (hits < settings.tier().promotionThreshold()) {
            return;
        }
        DiskReplica d = m.diskReplicas.get(0);
        if (m.promotionQueued && !d.nodeId().equals(m.taskNode)) {
            return;
        }
        if (tier.queuePromotion(d.nodeId(), m.key, m.size, hits)) {
            m.promotionQueued = true;
            m.taskNode = d.nodeId();
            m.taskStartMillis = ticker.millis();
            counters.promotionsQueued.increment();
        }
    }

    /** Work for a node: offloads to write and promotions to perform, hottest promotions first. */
    StorageTier.Tasks pollTasks(String nodeId, int maxOffloads, int maxPromotions) {
        return tier.poll(nodeId, Math.max(0, maxOffloads), Math.max(0, maxPromotions));
    }

    /**
     * Allocates the memory replica of a promotion (on the node's own segment when it fits) and returns
     * where to write it. Codes: OBJECT_NOT_FOUND (removed meanwhile), OBJECT_ALREADY_EXISTS (already in
     * memory), NO_AVAILABLE_HANDLE.
     */
    public KeyResult<ReplicaDescriptor> promotionStart(String nodeId, String key) {
        MetadataShard shard = shards[MetadataShard.indexOf(key)];
        shard.lock.lock();
        try {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null || !m.hasDiskReplicaOn(nodeId)) {
                return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
            }
            if (m.hasReadableMemoryReplica() || m.processing || !m.replicas.isEmpty()) {
                m.promotionQueued = false;
                m.taskNode = null;
                return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
            }
            List<String> preferred = new ArrayList<>();
            for (MountedSegment s : segments.segments()) {
                if (s.nodeId().equals(nodeId)) {
                    preferred.add(s.name());
                }
            }
            SegmentReplicaSink sink = new SegmentReplicaSink(m.size, 1, random);
            if (!place(new AllocationRequest(m.size, 1, preferred, nodeId), sink)) {
                m.promotionQueued = false;
                m.taskNode = null;
                return KeyResult.failed(key, ErrorCode.INTERNAL_ERROR);
            }
            if (sink.placed() == 0) {
                noteAllocationFailure(m.size);
                m.promotionQueued = false;
                m.taskNode = null;
                counters.promotionFailures.increment();
                return KeyResult.failed(key, ErrorCode.NO_AVAILABLE_HANDLE);
            }
            MountedSegment seg = sink.segment(0);
            long handle = sink.handle(0);
            ReplicaRecord r = new ReplicaRecord(replicaIds.incrementAndGet(), seg, handle, seg.offset(handle), m.size);
            m.replicas.add(r);
            m.promotionQueued = true;
            m.taskNode = nodeId;
            m.taskStartMillis = ticker.millis();
            return KeyResult.ok(key, r.toDescriptor());
        } finally {
            shard.lock.unlock();
        }
    }

    /** Completes (or abandons) a promotion's memory replica. A failed promotion leaves the SSD copy readable. */
    public ErrorCode promotionEnd(String nodeId, String key, long replicaId, boolean success) {
        MetadataShard shard = shards[MetadataShard.indexOf(key)];
        shard.lock.lock();
        try {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null) {
                return ErrorCode.OBJECT_NOT_FOUND;
            }
            m.promotionQueued = false;
            m.taskNode = null;
            for (ReplicaRecord r : m.replicas) {
                if (r.id == replicaId && r.status == ReplicaStatus.PROCESSING) {
                    if (success) {
                        r.status = ReplicaStatus.COMPLETE;
                        counters.promotions.increment();
                    } else {
                        r.free();
                        m.replicas.remove(r);
                        counters.promotionFailures.increment();
                    }
                    return ErrorCode.OK;
                }
            }
            return ErrorCode.REPLICA_NOT_FOUND;
        } finally {
            shard.lock.unlock();
        }
    }

    /** A node's backend is about to delete these SSD copies: forget them (erasing objects left with nothing). */
    public void evictDiskReplicas(String nodeId, List<String> keys) {
        forEachByShard(keys, (shard, i) -> {
            ObjectMetadata m = shard.objects.get(keys.get(i));
            if (m == null || !m.diskReplicas.removeIf(d -> d.nodeId().equals(nodeId))) {
                return; // a repeated or late notice: nothing listed to drop
            }
            if (m.isEmpty() && !m.processing) {
                forget(shard, m.key);
            }
            counters.diskEvictions.increment();
        });
        tierCancelPromotions(keys);
    }

    private void tierCancelPromotions(List<String> keys) {
        for (String k : keys) {
            tier.cancelPromotion(k);
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Runs {@code action} under the lock of {@code key}'s shard. */
    private <T> T inShard(String key, java.util.function.Function<MetadataShard, T> action) {
        MetadataShard shard = shards[MetadataShard.indexOf(key)];
        shard.lock.lock();
        try {
            return action.apply(shard);
        } finally {
            shard.lock.unlock();
        }
    }

    @FunctionalInterface
    private interface ShardAction {
        void apply(MetadataShard shard, int index);
    }

    /** Runs {@code action} for every key index, taking each shard's lock once. */
    private void forEachByShard(List<String> keys, ShardAction action) {
        int n = keys.size();
        long[] order = new long[n];
        for (int i = 0; i < n; i++) {
            String key = keys.get(i);
            int shard = key == null ? 0 : MetadataShard.indexOf(key);
            order[i] = ((long) shard << 32) | i;
        }
        Arrays.sort(order);
        int i = 0;
        while (i < n) {
            int shardIndex = (int) (order[i] >>> 32);
            MetadataShard shard = shards[shardIndex];
            shard.lock.lock();
            try {
                while (i < n && (int) (order[i] >>> 32) == shardIndex) {
                    action.apply(shard, (int) order[i]);
                    i++;
                }
            } finally {
                shard.lock.unlock();
            }
        }
    }
}
