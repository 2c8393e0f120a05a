package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.Ticker;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * The master's metadata service: objects, replicas, leases, pins, versions, segments and node
 * liveness, with Mooncake Store's semantics (see docs/ARCHITECTURE.md). It holds metadata only and
 * never object bytes. This class is the master's one entry point (for {@link MasterRpcService},
 * {@link MasterMetrics}, {@link MasterServer} and tests); it wires the parts and delegates to them:
 * <ul>
 *   <li>{@link ObjectTable} — the object records, in {@value MetadataShard#COUNT} locked shards, with an
 *       ordered key index;</li>
 *   <li>{@link SegmentMembership} — mounts, heartbeats, node expiry (over the {@link SegmentRegistry});</li>
 *   <li>{@link PutCoordinator} — PutStart / PutEnd / PutRevoke and stuck-put release, placing replicas
 *       through {@link ReplicaPlacement};</li>
 *   <li>{@link ReplicaLookup} — getReplicaList and exists, granting leases;</li>
 *   <li>{@link Removal} — removals, their {@link CacheHold}s and the {@link Quarantine} of leased buffers;</li>
 *   <li>{@link Evictor} — memory eviction;</li>
 *   <li>{@link TierCoordinator} — the SSD tier (offload, promotion, SSD copies), over {@link StorageTier}; nodes
 *       reach it through {@link SsdTierService};</li>
 *   <li>{@link PutDeadlines} — SSD-tier tasks by their timeout, and puts that timed out lately (the puts in progress
 *       are listed per shard, {@link MetadataShard#putStarted});</li>
 *   <li>{@link Expiry} — expiry deadlines (TTL) of objects;</li>
 *   <li>{@link NodeOwners} — which process owns each mounted node id;</li>
 *   <li>{@link RestartGuard} — answers held back after a master restart;</li>
 *   <li>{@link RecoveryGate} — what waits for the end of a takeover's recovery.</li>
 * </ul>
 * All of them read the same {@link Ticker}.
 *
 * <p>Single-key calls take one shard lock; batch calls group their keys by shard and take each shard's
 * lock once, keeping the per-key results in request order; scans lock one shard at a time. Lock order:
 * mount monitor ({@link SegmentMembership}) → shard → quarantine / tier ({@link StorageTier}) → segment
 * ({@link MountedSegment}); the {@link SegmentRegistry} takes segment monitors when it unmounts and is
 * never locked under a shard lock (placement reads its immutable snapshot).
 *
 * <p>Errors a caller can act on come back as codes ({@link KeyResult}, {@link ErrorCode}); only
 * malformed requests, segment-management failures and what a recovering master refuses ({@link RecoveryGate})
 * throw {@link TiffinException}.
 *
 * <p>Background work (eviction, discarding stuck puts, node expiry) is driven from outside by
 * {@link #runEvictionOnce()}, {@link #releaseStuckPuts()} and {@link #expireNodes()}, so tests can run
 * it deterministically with a manual {@link Ticker}.
 *
 * <p>Thread-safe.
 */
public final class MasterService {
    private final MasterSettings settings;
    private final Ticker ticker;
    private final MasterCounters counters = new MasterCounters();
    private final ObjectTable table;
    private final ReplicaPlacement placement;
    private final SegmentRegistry segments = new SegmentRegistry();
    private final NodeOwners nodeOwners;
    private final RestartGuard restartGuard;
    private final TierCoordinator tier;
    private final SegmentMembership membership;
    private final Quarantine quarantine;
    private final Removal removal;
    private final Expiry expiry;
    private final SsdTierService ssdTier;
    private final PutCoordinator puts;
    private final ReplicaLookup lookups;
    private final Evictor evictor;
    private final Recovery recovery;
    private final RecoveryGate recoveryGate;
    private final SegmentAttachment attachment;
    /** With failover on: the cluster facts (term, segments, id reservations); null otherwise. */
    private volatile ClusterFacts facts;
    private volatile NodeForgets forgets;

    /**
     * @param random the random source handed to the allocation strategy, or null for a thread-local
     *     one (tests pass a seeded generator; it must then be thread-safe or used from one thread)
     */
    public MasterService(MasterSettings settings, AllocationStrategy strategy, Ticker ticker, RandomGenerator random) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        Objects.requireNonNull(strategy, "strategy");
        table = new ObjectTable(ticker, settings.maxKeyLength());
        nodeOwners = new NodeOwners(segments, ticker);
        restartGuard = new RestartGuard(ticker.millis(), settings.leaseTtl().toMillis());
        placement = new ReplicaPlacement(strategy, segments, random);
        quarantine = new Quarantine(ticker, settings.putStartReleaseTimeout().toMillis());
        PutDeadlines deadlines = new PutDeadlines(settings.putTimeout().toMillis(),
                settings.putStartReleaseTimeout().toMillis());
        DiskFloors floors = new DiskFloors();
        tier = new TierCoordinator(settings.tier(), table, segments, placement, quarantine, counters, ticker, deadlines,
                floors, settings.leaseTtl().toMillis());
        recovery = new Recovery(ticker);
        recoveryGate = new RecoveryGate(recovery);
        membership = new SegmentMembership(segments, table, tier, restartGuard, settings.nodeTtl(), ticker, recovery);
        removal = new Removal(table, quarantine, tier, restartGuard, counters, ticker);
        expiry = new Expiry(table, removal, tier, ticker);
        ssdTier = new SsdTierService(tier, table, segments, floors, recovery::scanned);
        puts = new PutCoordinator(settings, table, placement, removal, expiry, tier, quarantine, counters, ticker,
                deadlines, recovery::active, this::collectForgets);
        lookups = new ReplicaLookup(table, removal, tier, settings.leaseTtl().toMillis(), ticker, recovery);
        attachment = new SegmentAttachment(segments, table, removal, recovery, settings, ticker, this::term);
        evictor = new Evictor(settings, table, segments, placement, quarantine, tier,
                () -> expiry.sweep() + puts.releaseStuckPuts(),
                counters, ticker);
    }

    public MasterSettings settings() {
        return settings;
    }

    // ------------------------------------------------------------------ failover

    /** Turns failover on (before serving): mounts go to {@code clusterFacts}, frees through {@code forgets}. */
    void enableFailover(ClusterFacts clusterFacts, NodeForgets forgets) {
        this.facts = clusterFacts;
        this.forgets = forgets;
        membership.enableFailover(clusterFacts, forgets);
        tier.floors().enable(clusterFacts, forgets, this::term);
    }

    /**
     * Takes over from the master that left {@code previous}: its segments await their nodes' attach, versions and
     * replica ids continue above its reservations, and the recovery runs for at most {@code windowMillis}.
     */
    void restore(io.tiffin.core.transport.proto.ClusterStateMsg previous, long windowMillis) {
        table.continueAbove(previous.getVersionFloor(), previous.getReplicaIdFloor());
        membership.restore(previous.getSegmentsList());
        java.util.Set<String> names = new java.util.HashSet<>();
        previous.getSegmentsList().forEach(f -> names.add(f.getName()));
        recovery.begin(names, windowMillis, settings.recoveryReadWait().toMillis());
    }

    /** {versions, replica ids} handed out so far (where a takeover's reservations start). */
    long[] idsSoFar() {
        return new long[] {table.lastVersion(), table.lastReplicaId()};
    }

    /** The master's clock ({@link Ticker#millis()}): data-plane grants expire on it; the status page's "now". */
    public long nowMillis() {
        return ticker.millis();
    }

    /** The term this master serves in: 0 without failover. */
    public long term() {
        ClusterFacts f = facts;
        return f == null ? 0 : f.term();
    }

    /** Whether writers record their objects on the nodes (failover on). */
    public boolean commitOnNodes() {
        return facts != null;
    }

    /** Whether this master is still recovering objects from nodes after a takeover ({@link Recovery}). */
    public boolean recovering() {
        return recovery.active();
    }

    /** Completes when the recovery ends (at once when none runs). */
    java.util.concurrent.CompletableFuture<Void> recoveryEnded() {
        return recovery.ended();
    }

    /**
     * Runs {@code removal} and returns a future that completes when the nodes have dropped the records of what it
     * freed (at once without failover): the removal may be answered then. See {@link NodeForgets}.
     */
    java.util.concurrent.CompletableFuture<Void> collectForgets(Runnable removal) {
        NodeForgets f = forgets;
        if (f == null) {
            removal.run();
            return null;
        }
        return f.collect(removal);
    }

    /** Reserves the next block of ids in the cluster facts when the current one is half used. */
    void reserveIds() {
        ClusterFacts f = facts;
        recovery.check();
        if (f != null) {
            f.ensureReserved(table.lastVersion() + ClusterFacts.ID_BLOCK / 2,
                    table.lastReplicaId() + ClusterFacts.ID_BLOCK / 2);
        }
    }

    /**
     * A node attaches a restored segment, reporting its objects in chunks; the last chunk takes the segment into
     * service. See {@link SegmentAttachment#attach}.
     */
    int attachSegment(io.tiffin.core.transport.proto.Segment segment, long nodeTerm,
                      List<io.tiffin.core.transport.proto.CommitRecord> records, boolean first, boolean last) {
        return attachSegment(segment, nodeTerm, records, first, last, false, null);
    }

    /**
     * As above, with the key the node drew for its new mount epoch (null or empty: none); {@code scanFollows}: the
     * node reports its SSD copies next, and the recovery waits for them.
     */
    int attachSegment(io.tiffin.core.transport.proto.Segment segment, long nodeTerm,
                      List<io.tiffin.core.transport.proto.CommitRecord> records, boolean first, boolean last,
                      boolean scanFollows, byte[] accessKey) {
        return attachment.attach(segment, nodeTerm, records, first, last, scanFollows, membership, accessKey);
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
     * mount would erase the objects of the other. A node that was mounted to a previous run of this master
     * may arm the {@link #restartGuardUntilMillis restart guard}.
     *
     * @throws TiffinException {@code SEGMENT_ALREADY_EXISTS} saying so; {@code INVALID_PARAMS} for an
     *     empty name, node id or endpoint, a capacity not above 0, or a name another node mounted
     */
    public void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
                             long mountEpoch, long pingIntervalMillis) {
        mountSegment(name, nodeId, endpoint, capacity, incarnation, mountEpoch, pingIntervalMillis, null);
    }

    /**
     * As {@link #mountSegment(String, String, String, long, long, long, long)}, with the key the node drew for this
     * mount (null or empty: none): every descriptor of the segment handed out from now on carries a grant signed
     * with it, which the node checks on {@code DATA_READ} / {@code DATA_WRITE} (docs/SECURITY.md).
     *
     * @throws TiffinException also {@code INVALID_PARAMS} for a key shorter than 16 bytes
     */
    public void mountSegment(String name, String nodeId, String endpoint, long capacity, long incarnation,
                             long mountEpoch, long pingIntervalMillis, byte[] accessKey) {
        membership.mountSegment(name, nodeId, endpoint, capacity, incarnation, mountEpoch, pingIntervalMillis,
                accessKey);
    }

    /**
     * The instant (ms) before which a PutEnd or a removal may not be answered: set when a node that was mounted to a
     * previous run of the master mounts soon after this one started (0 = none). A put completed before it
     * could be missed by a client still reading the key's object of the previous run through a location it
     * cached, from a node that has not re-mounted yet.
     */
    public long restartGuardUntilMillis() {
        return restartGuard.untilMillis();
    }

    /**
     * Unmounts a segment: its replicas become unreadable at once, objects left with no replica are
     * erased. Idempotent; a segment of another node is INVALID_PARAMS.
     */
    public void unmountSegment(String nodeId, String name) {
        membership.unmountSegment(nodeId, name);
    }

    /** Heartbeat. Returns false when the node is unknown (it must re-mount its segments). */
    public boolean ping(String nodeId) {
        return ping(nodeId, 0) == PingOutcome.OK;
    }

    /**
     * Refuses {@code peer} acting for node {@code nodeId} ({@code what}) while another process owns that node and
     * it is alive ({@link NodeOwners}).
     *
     * @throws TiffinException {@code ILLEGAL_CLIENT}
     */
    public void checkNodeOwner(io.tiffin.core.transport.Peer peer, String nodeId, String what) {
        nodeOwners.check(peer, nodeId, what);
    }

    /** {@code peer}'s process mounted, re-mounted or attached node {@code nodeId}: it owns that id now. */
    public void nodeMountedBy(io.tiffin.core.transport.Peer peer, String nodeId, long pingIntervalMillis) {
        nodeOwners.mounted(peer, nodeId, pingIntervalMillis);
    }

    /** Heartbeat of a node process of {@code incarnation} (0 = unknown: any). */
    public PingOutcome ping(String nodeId, long incarnation) {
        return membership.ping(nodeId, incarnation);
    }

    /**
     * Unmounts every segment of nodes that have not pinged within the node TTL and erases objects left
     * without replicas, and drops what it keeps of nodes away for longer than {@code offload.away-ttl} ({@link
     * AwayCopies}). Returns the ids of the expired nodes.
     */
    public List<String> expireNodes() {
        tier.expireAwayCopies();
        return membership.expireNodes();
    }

    /** As {@link #expireNodes()}, every node's deadline first moved {@code unwatchedMillis} later ({@link LivenessCheck}). */
    public List<String> expireNodes(long unwatchedMillis) {
        membership.postponeDeadlines(unwatchedMillis);
        return expireNodes();
    }

    /**
     * Forgets a node at once, as if its TTL had passed: unmounts its segments and erases objects left
     * without replicas. Its next ping is answered with "re-mount".
     */
    public void forgetNode(String nodeId) {
        membership.forgetNode(nodeId);
    }

    public List<? extends SegmentView> segmentViews() {
        return segments.segments();
    }

    public Set<String> liveNodes() {
        return segments.liveNodes();
    }

    /** Each node's deadline and last heartbeat (for the status page). */
    List<SegmentRegistry.NodeBeat> nodeBeats() {
        return segments.nodeBeats();
    }

    /** Objects with an SSD copy and the bytes of those copies: {objects, bytes}, counted as copies come and go. */
    long[] ssdTally() {
        return tier.ssdTally();
    }

    // ------------------------------------------------------------------ put

    /**
     * Allocates the replicas of a new object and returns where to write them (status PROCESSING).
     * Codes: INVALID_KEY, INVALID_PARAMS (size), OBJECT_ALREADY_EXISTS (complete; a plain put treats it as
     * success), REPLICA_IS_NOT_READY (another put of the key is being written, for less than the discard
     * timeout: retry), OBJECT_HAS_LEASE (upsert of a leased object, or a key forced out while clients may
     * still read it through cached locations), OBJECT_HAS_REPLICATION_TASK (upsert of an object a node is
     * copying to SSD or back from it: retry),
     * NO_AVAILABLE_HANDLE (no segment had room; triggers eviction), INTERNAL_ERROR (the allocation
     * strategy failed).
     */
    public KeyResult<List<ReplicaDescriptor>> putStart(String clientId, String key, long size, PutOptions options) {
        return descriptorsOf(putStart(clientId, key, size, options, 0));
    }

    /**
     * As {@link #putStart(String, String, long, PutOptions)} for the writer's put {@code putId} (0 = none): a retry
     * of a put still being written gets its replicas again (not OBJECT_ALREADY_EXISTS); the grant carries the
     * object's version.
     */
    public KeyResult<PutGrant> putStart(String clientId, String key, long size, PutOptions options, long putId) {
        recoveryGate.checkPutStart(options);
        return puts.putStart(clientId, key, size, options, putId);
    }

    private static KeyResult<List<ReplicaDescriptor>> descriptorsOf(KeyResult<PutGrant> r) {
        return r.isOk() ? KeyResult.ok(r.key(), r.value().replicas()) : KeyResult.failed(r.key(), r.code());
    }

    /** Marks the object's replicas complete and gives it a version. Codes: OBJECT_NOT_FOUND, ILLEGAL_CLIENT, INVALID_WRITE. */
    public ErrorCode putEnd(String clientId, String key) {
        return putEnd(clientId, key, ObjectLocation.NO_CHECKSUM, null);
    }

    /** As {@link #putEnd(String, String)}, keeping the object's CRC32C ({@code crc32c}; 0 = none) for its readers. */
    public ErrorCode putEnd(String clientId, String key, int crc32c) {
        return putEnd(clientId, key, crc32c, null);
    }

    /**
     * As {@link #putEnd(String, String, int)}; a forced replacement ({@code PutOptions.replaceLeased}) of an object
     * other clients may still read through their location caches records in {@code hold} until when: the caller
     * reports the PutEnd only then, as for a forced removal ({@link CacheHold}).
     */
    public ErrorCode putEnd(String clientId, String key, int crc32c, CacheHold hold) {
        ErrorCode ended = puts.putEnd(clientId, key, crc32c, hold);
        recoveryGate.checkPutEnd(key, ended);
        return ended;
    }

    /**
     * Why a PutEnd of {@code key} failed with {@code code}, for its writer: its put timed out ({@code
     * master.put-timeout}) and was freed, or this master holds nothing of it (OBJECT_NOT_FOUND); else null.
     */
    public String putEndFailure(String key, ErrorCode code) {
        return puts.putEndFailure(key, code);
    }

    /** Abandons an unfinished put and frees its buffers. Codes: OBJECT_NOT_FOUND, ILLEGAL_CLIENT, INVALID_WRITE. */
    public ErrorCode putRevoke(String clientId, String key) {
        return puts.putRevoke(clientId, key);
    }

    /**
     * {@link #putStart} of every key, in request order.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when {@code keys} and {@code sizes} differ in length
     */
    public List<KeyResult<List<ReplicaDescriptor>>> batchPutStart(String clientId, List<String> keys, List<Long> sizes,
                                                                  PutOptions options) {
        return batchPutStart(clientId, keys, sizes, options, List.of()).stream()
                .map(MasterService::descriptorsOf).toList();
    }

    /** As {@link #putStart(String, String, long, PutOptions, long)} for every key ({@code putIds}: one per key or empty). */
    public List<KeyResult<PutGrant>> batchPutStart(String clientId, List<String> keys, List<Long> sizes,
                                                   PutOptions options, List<Long> putIds) {
        recoveryGate.checkPutStart(options);
        return puts.batchPutStart(clientId, keys, sizes, options, putIds);
    }

    /** {@link #putEnd} of every key, in request order. */
    public List<ErrorCode> batchPutEnd(String clientId, List<String> keys) {
        return batchPutEnd(clientId, keys, List.of(), null);
    }

    /** {@link #putEnd(String, String, int)} of every key ({@code crc32cs}: one per key, or empty = none). */
    public List<ErrorCode> batchPutEnd(String clientId, List<String> keys, List<Integer> crc32cs) {
        return batchPutEnd(clientId, keys, crc32cs, null);
    }

    /** {@link #putEnd(String, String, int, CacheHold)} of every key. */
    public List<ErrorCode> batchPutEnd(String clientId, List<String> keys, List<Integer> crc32cs, CacheHold hold) {
        List<ErrorCode> ended = puts.batchPutEnd(clientId, keys, crc32cs, hold);
        recoveryGate.checkBatchPutEnd(keys, ended);
        return ended;
    }

    /** {@link #putRevoke} of every key, in request order. */
    public List<ErrorCode> batchPutRevoke(String clientId, List<String> keys) {
        return puts.batchPutRevoke(clientId, keys);
    }

    // ------------------------------------------------------------------ get

    /**
     * The readable replicas of a key, granting a read lease. Codes: INVALID_KEY, OBJECT_NOT_FOUND,
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
        return lookups.getReplicaList(key, cacheForMillis, owner);
    }

    /** {@link #getReplicaList(String)} of every key, in request order. */
    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys) {
        return batchGetReplicaList(keys, 0);
    }

    /** As {@link #batchGetReplicaList(List)} for a client with a location cache (see {@link #getReplicaList(String, long)}). */
    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys, long cacheForMillis) {
        return batchGetReplicaList(keys, cacheForMillis, 0);
    }

    /** As {@link #batchGetReplicaList(List, long)}, naming the client's cache ({@code owner} > 0; 0 = unknown). */
    public List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys, long cacheForMillis, long owner) {
        return lookups.batchGetReplicaList(keys, cacheForMillis, owner);
    }

    /** True if the key has a readable replica; grants a read lease when true. Codes: INVALID_KEY. */
    public KeyResult<Boolean> existKey(String key) {
        return lookups.existKey(key);
    }

    /** {@link #existKey} of every key, in request order. */
    public List<KeyResult<Boolean>> batchExistKey(List<String> keys) {
        return lookups.batchExistKey(keys);
    }

    /**
     * Readable replicas of every key matching {@code regex} (RE2, searched anywhere in the key), with
     * leases, in key order. Prefix and exact patterns are answered from the ordered key index
     * ({@link KeyQuery}); other patterns scan every key.
     */
    public List<ObjectLocation> getReplicaListByRegex(String regex) {
        return lookups.locateMatching(KeyQuery.compile(regex), true);
    }

    /** {@link #getReplicaListByRegex} always through the regex engine over every key (the baseline). */
    public List<ObjectLocation> getReplicaListByRegexFullScan(String regex) {
        return lookups.locateMatching(KeyQuery.compile(regex), false);
    }

    // ------------------------------------------------------------------ remove

    /** Milliseconds from now (the master's clock) until {@code instantMillis}; 0 if it has passed. */
    public long millisUntil(long instantMillis) {
        return Math.max(0, instantMillis - ticker.millis());
    }

    /**
     * Codes: INVALID_KEY, OBJECT_NOT_FOUND, OBJECT_HAS_LEASE (unless force), REPLICA_IS_NOT_READY (a put of it
     * is being written), OBJECT_HAS_REPLICATION_TASK (a node is copying it to SSD or back from it). A forced
     * removal of a leased object removes the key at once and quarantines its buffers until the lease ends.
     */
    public ErrorCode remove(String key, boolean force) {
        return remove(key, force, null);
    }

    /** As {@link #remove(String, boolean)}; a forced removal notes in {@code hold} (if not null) what to wait for. */
    public ErrorCode remove(String key, boolean force, CacheHold hold) {
        return removal.remove(key, force, hold);
    }

    /** {@link #remove(String, boolean)} of every key, in request order. */
    public List<ErrorCode> batchRemove(List<String> keys, boolean force) {
        return batchRemove(keys, force, null);
    }

    /** As {@link #batchRemove(List, boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public List<ErrorCode> batchRemove(List<String> keys, boolean force, CacheHold hold) {
        return removal.batchRemove(keys, force, hold);
    }

    /** Removes matching objects that pass the remove checks; returns how many. */
    public long removeByRegex(String regex, boolean force) {
        return removeByRegex(regex, force, null);
    }

    /** As {@link #removeByRegex(String, boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public long removeByRegex(String regex, boolean force, CacheHold hold) {
        return removal.removeMatching(KeyQuery.compile(regex), force, hold);
    }

    /** Removes every object that passes the remove checks; returns how many. */
    public long removeAll(boolean force) {
        return removeAll(force, null);
    }

    /** As {@link #removeAll(boolean)}, noting in {@code hold} (if not null) what to wait for. */
    public long removeAll(boolean force, CacheHold hold) {
        return removal.removeMatching(KeyQuery.compile("^"), force, hold);
    }

    /** Frees quarantined buffers whose release time has passed; returns how many. Cheap when none are due. */
    public int releaseDiscarded() {
        return quarantine.releaseDue();
    }

    // ------------------------------------------------------------------ listing and stats

    /**
     * Complete objects whose key starts with {@code prefix} and whose expiry deadline has not passed, in key
     * order, at most {@code limit}; does not grant leases. Costs O(log n + limit).
     */
    public ListedKeys listKeys(String prefix, int limit) {
        return table.listKeys(prefix, limit);
    }

    /** The objects held, less those whose expiry deadline has passed (gone for clients, not yet reclaimed). */
    public long keyCount() {
        return Math.max(0, table.keyCount() - table.expiredCount(ticker.millis()));
    }

    /** How many of the objects held have an expiry deadline (kept as deadlines are set and dropped, not counted). */
    public long expiringKeyCount() {
        return table.expiringCount();
    }

    /** Bytes of the hard-pinned objects (complete or being written). */
    public long hardPinnedBytes() {
        return table.hardPinnedBytes();
    }

    public long capacityBytes() {
        return segments.capacityBytes();
    }

    public long usedBytes() {
        return segments.usedBytes();
    }

    /** Endpoint of a mounted segment, or null. */
    public String endpointOf(String segment) {
        MountedSegment s = segments.get(segment);
        return s == null ? null : s.endpoint();
    }

    // ------------------------------------------------------------------ eviction and stuck puts

    /**
     * One eviction pass, Mooncake's BatchEvict: runs when used/capacity exceeds the high watermark or
     * an allocation failed since the last run. Frees {@code target} of the evictable objects, oldest
     * lease first: leased and hard-pinned objects never, soft-pinned ones only in a second pass when
     * the first freed less than the lower bound. Returns the number of objects evicted.
     */
    public int runEvictionOnce() {
        return evictor.runEvictionOnce();
    }

    /**
     * Whether the next eviction check is due soon: the last found the pool within {@link Evictor#NEAR} of its
     * high watermark, or an allocation failed since.
     */
    boolean evictionPressed() {
        return evictor.pressed() || placement.allocationFailedPending();
    }

    /** Runs {@code listener} (from the failing put's thread, under its shard lock) when an allocation first fails. */
    void onAllocationFailure(Runnable listener) {
        placement.onAllocationFailure(listener);
    }

    /** Puts in progress and SSD-tier tasks the stuck-put sweep watches (tests). */
    int watchedPutsAndTasks() {
        return puts.watched();
    }

    /** Keys listed with an SSD copy on {@code nodeId} (tests). */
    int diskCopiesListedFor(String nodeId) {
        return tier.diskCopiesListedFor(nodeId);
    }

    /**
     * Frees the buffers of puts that never finished: pre-empted puts whose release time passed, and
     * puts still in progress after the release timeout; abandons SSD-tier tasks not reported within it;
     * drops passed holds of forgotten keys. Returns the number of buffers freed.
     */
    public int releaseStuckPuts() {
        return puts.releaseStuckPuts();
    }

    /** Removes the expired objects no client asked for since their deadline; returns how many (see {@link Expiry}). */
    public int expireObjects() {
        return expiry.sweep();
    }

    /**
     * EXPIRE / PERSIST / TTL of {@code key}: {@code mode} 0 reads the time to live, 1 sets it to {@code ttlMillis}
     * from now (0: the object goes now), 2 drops it; answers the time to live before (ms, -1 = none) or
     * OBJECT_NOT_FOUND.
     */
    public KeyResult<Long> expire(String key, int mode, long ttlMillis) {
        KeyResult<Expiry.Outcome> r = expiry.expire(key, mode, ttlMillis, Expiry.ALWAYS);
        return r.isOk() ? KeyResult.ok(key, r.value().ttlBeforeMillis()) : KeyResult.failed(r.key(), r.code());
    }

    /**
     * {@link #expire(String, int, long)} of a {@code mode} 1 made only under {@code condition} (0 always, 1 NX:
     * without a deadline, 2 XX: with one, 3 GT: a later deadline, 4 LT: an earlier one or none), checked with the
     * key locked; answers the time to live before and whether it was set.
     */
    KeyResult<Expiry.Outcome> expire(String key, int mode, long ttlMillis, int condition) {
        return expiry.expire(key, mode, ttlMillis, condition);
    }

    // ------------------------------------------------------------------ SSD tier

    /** The SSD tier's side of the master: nodes' reports, offload and promotion tasks, its gauges. */
    public SsdTierService ssdTier() {
        return ssdTier;
    }
}
