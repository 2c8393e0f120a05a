package io.tiffin.core.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.local.InProcessMaster;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.transport.BatchLocations;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.CompactReplicas;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.BatchCodesReply;
import io.tiffin.core.transport.proto.BatchExistReply;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.BatchPutStartReply;
import io.tiffin.core.transport.proto.BatchPutStartRequest;
import io.tiffin.core.transport.proto.ClientReport;
import io.tiffin.core.transport.proto.CountReply;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ExistReply;
import io.tiffin.core.transport.proto.HotCacheTotals;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.ListKeysReply;
import io.tiffin.core.transport.proto.ListKeysRequest;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.LocationsByRegexReply;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.PutStartResult;
import io.tiffin.core.transport.proto.RegexRequest;
import io.tiffin.core.transport.proto.RemoveAllRequest;
import io.tiffin.core.transport.proto.SegmentStat;
import io.tiffin.core.transport.proto.ServiceReadyReply;
import io.tiffin.core.transport.proto.StatsReply;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The master's operations as the client calls them, with engine-api types and plain records in and out
 * (the protobuf messages stay in here). Each call runs on the calling thread: on a pooled blocking
 * connection ({@link BlockingConnectionPool}), or, with same-JVM shortcuts on and the master running in
 * this JVM, as a direct call ({@link InProcessMasters}; looked up on every call, as that master may start
 * or stop meanwhile).
 *
 * <p>A master's refusal arrives as the {@link TiffinException} carrying its code (over the connection
 * as from the in-process master); a connection failure is {@code RPC_FAIL} or {@code RPC_TIMEOUT}; an
 * in-process reply that does not decode as the expected message is {@code DESERIALIZE_FAIL}; every call
 * after the client closed is {@code UNAVAILABLE_IN_CURRENT_STATUS}. Batch calls answer one code or result
 * per key, in order.
 *
 * <p>Thread-safe. Uses, but does not own, the client's connection pool ({@link TiffinClient#close()}
 * closes it).
 */
final class MasterStub {
    private final String masterAddress;
    private final boolean inProcess;
    private final BlockingConnectionPool connections;
    private final ClientLifecycle lifecycle;
    /** The masters ({@code master.address} may list several: the leader is found among them). */
    private final io.tiffin.core.coordination.MasterAddresses addresses;
    /** The master calls go to now (the leader, when several are listed). */
    private volatile String leader;
    /** How long a call keeps looking for a leader (several masters listed) or waits for a recovering one. */
    private final long failoverNanos;
    private final Object discovery = new Object();
    private static final java.util.concurrent.ExecutorService PROBES = java.util.concurrent.Executors.newCachedThreadPool(
            r -> {
                Thread t = new Thread(r, "tiffin-client-master-probe");
                t.setDaemon(true);
                return t;
            });

    /**
     * What a PutStart grants.
     *
     * <p>Thread-safe (immutable).
     *
     * @param version the object's version (0 from masters that assign it at PutEnd)
     * @param commitOnNodes whether the writer records the object on each replica's node (failover on)
     * @param yields granted while the master recovered: the records say so ({@code CommitRecord.yields})
     * @param expireAtMillis the object's expiry deadline (the master's clock; 0 = none), recorded with it
     */
    record Grant(List<ReplicaDescriptor> replicas, long version, boolean commitOnNodes, boolean yields,
                 long expireAtMillis) {
    }

    /**
     * @param masterAddress {@code host:port} of the master
     * @param inProcess whether to call a master of this JVM directly when one serves that address
     * @param connections pooled blocking connections (shared with the data plane)
     * @param lifecycle refuses calls once the client is closed
     */
    MasterStub(String masterAddress, boolean inProcess, BlockingConnectionPool connections, ClientLifecycle lifecycle) {
        this(masterAddress, inProcess, connections, lifecycle, java.time.Duration.ofSeconds(15));
    }

    /**
     * @param failover how long a call keeps retrying while no master leads or the leader recovers (several masters
     *     listed; with one, only a recovering master's refusals are retried)
     */
    MasterStub(String masterAddress, boolean inProcess, BlockingConnectionPool connections, ClientLifecycle lifecycle,
               java.time.Duration failover) {
        this.masterAddress = masterAddress;
        this.inProcess = inProcess;
        this.connections = connections;
        this.lifecycle = lifecycle;
        this.addresses = io.tiffin.core.coordination.MasterAddresses.parse(masterAddress);
        this.leader = addresses.first();
        this.failoverNanos = failover.toNanos();
    }

    /** The master calls go to now. */
    String leader() {
        return leader;
    }

    String masterAddress() {
        return masterAddress;
    }

    /** The Tiffin version the master runs (SERVICE_READY). */
    String version() {
        return call(Opcode.SERVICE_READY, Empty.getDefaultInstance(), ServiceReadyReply.parser()).getVersion();
    }

    // ------------------------------------------------------------------ puts

    /** PutStart: the replicas to write {@code size} bytes of {@code key} to. */
    List<ReplicaDescriptor> putStart(String clientId, String key, long size, PutOptions options) {
        return putStart(clientId, key, size, options, 0).replicas();
    }

    /**
     * PutStart of the writer's put {@code putId} (non-zero; 0 = none): a retry of it (after a lost answer or a
     * leader change) gets the same replicas, never a success without bytes.
     */
    Grant putStart(String clientId, String key, long size, PutOptions options, long putId) {
        return grantOf(call(Opcode.PUT_START, putStartRequest(clientId, key, size, options, putId),
                PutStartReply.parser()));
    }

    /**
     * PutEnd: every replica of {@code key} is written. {@code cacheOwner}: the caller's location cache (0 = none);
     * a forced replacement is answered once other caches' locations of the replaced object have expired.
     */
    void putEnd(String clientId, String key, int crc32c, long cacheOwner) {
        call(Opcode.PUT_END, putEndRequest(clientId, key, crc32c, cacheOwner), Empty.parser());
    }

    /** PutRevoke: the put of {@code key} failed; its replicas are released. */
    void putRevoke(String clientId, String key) {
        call(Opcode.PUT_REVOKE, revokeRequest(clientId, key), Empty.parser());
    }

    /** The leader when it runs in this JVM (then it may be called directly, without any wait), else null. */
    InProcessMaster masterInThisJvm() {
        return inProcess ? InProcessMasters.find(leader) : null;
    }

    /** {@link #putStart} asked of {@code local} directly, once. */
    Grant putStartIn(InProcessMaster local, String clientId, String key, long size, PutOptions options, long putId) {
        lifecycle.checkOpen();
        return grantOf(callInProcess(local, Opcode.PUT_START, putStartRequest(clientId, key, size, options, putId),
                PutStartReply.parser()));
    }

    /**
     * {@link #putEnd} asked of {@code local} directly, once: the put has taken effect when this returns; the future
     * completes when the master gives its answer (at once, or once other caches of the replaced object let go).
     *
     * @throws TiffinException the master's refusal (the put did not take effect)
     */
    java.util.concurrent.CompletableFuture<Void> putEndIn(InProcessMaster local, String clientId, String key,
                                                          int crc32c, long cacheOwner) {
        lifecycle.checkOpen();
        return local.callWithoutWaiting(Opcode.PUT_END, putEndRequest(clientId, key, crc32c, cacheOwner))
                .thenApply(reply -> null);
    }

    /** {@link #putRevoke} asked of {@code local} directly, once. */
    void putRevokeIn(InProcessMaster local, String clientId, String key) {
        callInProcess(local, Opcode.PUT_REVOKE, revokeRequest(clientId, key), Empty.parser());
    }

    private static PutStartRequest putStartRequest(String clientId, String key, long size, PutOptions options,
                                                   long putId) {
        return PutStartRequest.newBuilder().setClientId(clientId).setKey(key).setSize(size)
                .setOptions(Messages.toMsg(options)).setPutId(putId).build();
    }

    private static Grant grantOf(PutStartReply reply) {
        return new Grant(Messages.fromMsgs(reply.getReplicasList()), reply.getVersion(), reply.getCommitOnNodes(),
                reply.getYields(), reply.getExpireAtMs());
    }

    private static KeyRequest putEndRequest(String clientId, String key, int crc32c, long cacheOwner) {
        return KeyRequest.newBuilder().setClientId(clientId).setKey(key).setCrc32C(crc32c).setCacheOwner(cacheOwner)
                .build();
    }

    private static KeyRequest revokeRequest(String clientId, String key) {
        return KeyRequest.newBuilder().setClientId(clientId).setKey(key).build();
    }

    /** BatchPutStart: per key, in order, the replicas to write or the master's refusal. */
    List<KeyResult<Grant>> batchPutStart(String clientId, List<String> keys, long[] sizes, PutOptions options,
                                         long[] putIds) {
        BatchPutStartRequest.Builder request = BatchPutStartRequest.newBuilder().setClientId(clientId)
                .setOptions(Messages.toMsg(options)).addAllKeys(keys);
        for (long size : sizes) {
            request.addSizes(size);
        }
        for (long id : putIds) {
            request.addPutIds(id);
        }
        BatchPutStartReply reply = call(Opcode.BATCH_PUT_START, request.setCompact(true).build(),
                BatchPutStartReply.parser());
        if (reply.getResultsCount() != keys.size()) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "the master answered " + reply.getResultsCount()
                    + " grants for a batch put of " + keys.size() + " keys");
        }
        List<KeyResult<Grant>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            PutStartResult r = reply.getResults(i);
            ErrorCode code = ErrorCode.fromValue(r.getCode());
            out.add(code == ErrorCode.OK ? KeyResult.ok(keys.get(i), new Grant(CompactReplicas.read(
                    r.getReplicasList(), reply.getSegmentsList()), r.getVersion(), r.getCommitOnNodes(),
                    r.getYields(), r.getExpireAtMs()))
                    : KeyResult.failed(keys.get(i), code));
        }
        return out;
    }

    /** BatchPutEnd: per key, in order, the master's code. */
    List<ErrorCode> batchPutEnd(String clientId, List<String> keys, List<Integer> crc32cs, long cacheOwner) {
        return codes(call(Opcode.BATCH_PUT_END, BatchKeysRequest.newBuilder().setClientId(clientId).addAllKeys(keys)
                .addAllCrc32Cs(crc32cs).setCacheOwner(cacheOwner).build(), BatchCodesReply.parser()));
    }

    /** BatchPutRevoke: per key, in order, the master's code. */
    List<ErrorCode> batchPutRevoke(String clientId, List<String> keys) {
        return codes(call(Opcode.BATCH_PUT_REVOKE, BatchKeysRequest.newBuilder().setClientId(clientId)
                .addAllKeys(keys).build(), BatchCodesReply.parser()));
    }

    // ------------------------------------------------------------------ lookups

    /**
     * GetReplicaList: where {@code key} lives, granting a read lease.
     *
     * @param cacheForMs how long the caller's location cache may reuse the answer (0 = not cached)
     * @param cacheOwner the caller's location cache ({@code cache_owner}; 0 = none)
     */
    ObjectLocation lookUp(String key, int cacheForMs, long cacheOwner) {
        return Messages.fromMsg(call(Opcode.GET_REPLICA_LIST, lookUpRequest(key, cacheForMs, cacheOwner),
                ObjectLocationMsg.parser()));
    }

    private static KeyRequest lookUpRequest(String key, int cacheForMs, long cacheOwner) {
        return KeyRequest.newBuilder().setKey(key).setCacheForMs(cacheForMs).setCacheOwner(cacheOwner).build();
    }

    /**
     * {@link #lookUp} answered by a master of this JVM, in one direct call to its handler on this thread (the
     * handler its own event loops run: no network, no wait for a connection), or null when the master calls go
     * to a master elsewhere (then nothing is asked). One attempt: a refusal (not the leader, recovering) is thrown.
     */
    ObjectLocation lookUpInThisJvm(String key, int cacheForMs, long cacheOwner) {
        InProcessMaster local = masterInThisJvm();
        if (local == null) {
            return null;
        }
        lifecycle.checkOpen();
        return Messages.fromMsg(callInProcess(local, Opcode.GET_REPLICA_LIST, lookUpRequest(key, cacheForMs,
                cacheOwner), ObjectLocationMsg.parser()));
    }

    /** BatchGetReplicaList: per key, in order, its location or the master's code; as {@link #lookUp}. */
    List<KeyResult<ObjectLocation>> batchLookUp(List<String> keys, int cacheForMs, long cacheOwner) {
        BatchKeysRequest request = BatchKeysRequest.newBuilder().addAllKeys(keys).setCacheForMs(cacheForMs)
                .setCacheOwner(cacheOwner).setCompact(true).build();
        return BatchLocations.fromReply(call(Opcode.BATCH_GET_REPLICA_LIST, request, BatchLocationsReply.parser()),
                keys);
    }

    /** GetReplicaListByRegex: the locations of the keys matching {@code regex}, by key. */
    Map<String, ObjectLocation> locateByRegex(String regex) {
        LocationsByRegexReply reply = call(Opcode.GET_REPLICA_LIST_BY_REGEX,
                RegexRequest.newBuilder().setRegex(regex).build(), LocationsByRegexReply.parser());
        Map<String, ObjectLocation> out = new LinkedHashMap<>();
        for (ObjectLocationMsg m : reply.getLocationsList()) {
            out.put(m.getKey(), Messages.fromMsg(m));
        }
        return out;
    }

    /**
     * {@link #exists} answered by a master of this JVM in one direct call to its handler on this thread (as
     * {@link #lookUpInThisJvm}), or null when the master calls go to a master elsewhere (then nothing is asked).
     */
    Boolean existsInThisJvm(String key) {
        InProcessMaster local = masterInThisJvm();
        if (local == null) {
            return null;
        }
        lifecycle.checkOpen();
        return callInProcess(local, Opcode.EXIST_KEY, KeyRequest.newBuilder().setKey(key).build(),
                ExistReply.parser()).getExists();
    }

    /** ExistKey. */
    boolean exists(String key) {
        return call(Opcode.EXIST_KEY, KeyRequest.newBuilder().setKey(key).build(), ExistReply.parser()).getExists();
    }

    /**
     * EXPIRE: mode 0 reads {@code key}'s time to live, 1 sets it to {@code ttlMillis} from now, 2 drops it; returns
     * the time to live before (ms, -1 = none). Throws OBJECT_NOT_FOUND for a key that holds no object.
     */
    long expire(String key, int mode, long ttlMillis) {
        return expire(key, mode, ttlMillis, 0).getTtlMs();
    }

    /** {@code condition}: ExpireRequest.condition (0 = always). */
    io.tiffin.core.transport.proto.ExpireReply expire(String key, int mode, long ttlMillis, int condition) {
        return call(Opcode.EXPIRE, io.tiffin.core.transport.proto.ExpireRequest.newBuilder().setKey(key).setMode(mode)
                .setTtlMs(ttlMillis).setCondition(condition).build(), io.tiffin.core.transport.proto.ExpireReply.parser());
    }

    /** BatchExistKey: per key, in order, whether it exists or the master's code. */
    List<KeyResult<Boolean>> batchExists(List<String> keys) {
        BatchExistReply reply = call(Opcode.BATCH_EXIST_KEY, BatchKeysRequest.newBuilder().addAllKeys(keys).build(),
                BatchExistReply.parser());
        List<KeyResult<Boolean>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            ErrorCode code = ErrorCode.fromValue(reply.getCodes(i));
            out.add(code == ErrorCode.OK ? KeyResult.ok(keys.get(i), reply.getExists(i))
                    : KeyResult.failed(keys.get(i), code));
        }
        return out;
    }

    // ------------------------------------------------------------------ removes

    /**
     * Remove; {@code cacheOwner}: the caller's location cache, whose entries it drops itself. After an attempt whose
     * answer was lost (the leader died or could not be reached, or its connection closed before answering), a retry
     * that finds the key gone counts as done: that attempt removed it; and one refused because the object is being
     * read ({@code OBJECT_HAS_LEASE}) is repeated until the lease ends, within the failover time: that attempt may
     * have begun the removal (a leader that died after some of the object's nodes dropped its record leaves the
     * object to its successor with fewer replicas), so the remove is carried through rather than reported as not
     * done.
     */
    void remove(String key, boolean force, long cacheOwner) {
        KeyRequest request = KeyRequest.newBuilder().setKey(key).setForce(force).setCacheOwner(cacheOwner).build();
        boolean[] lost = new boolean[1];
        long deadline = System.nanoTime() + failoverNanos;
        for (int attempt = 0; ; attempt++) {
            try {
                call(Opcode.REMOVE, request, Empty.parser(), lost);
                return;
            } catch (TiffinException e) {
                if (lost[0] && e.code() == ErrorCode.OBJECT_NOT_FOUND) {
                    return;
                }
                if (!lost[0] || e.code() != ErrorCode.OBJECT_HAS_LEASE || lifecycle.isClosed()) {
                    throw e;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new TiffinException(e.code(), e.getMessage() + "; an earlier attempt of this remove, whose"
                            + " answer was lost, may have removed some of its replicas: remove it again (or with"
                            + " force) once it is no longer read", e);
                }
                pause(backoffMillis(attempt));
            }
        }
    }

    /**
     * BatchRemove: per key, in order, the master's code; after an attempt whose answer was lost (as {@link #remove}),
     * a key the repeat finds gone counts as removed.
     */
    List<ErrorCode> batchRemove(List<String> keys, boolean force, long cacheOwner) {
        boolean[] lost = new boolean[1];
        List<ErrorCode> codes = codes(call(Opcode.BATCH_REMOVE, BatchKeysRequest.newBuilder().addAllKeys(keys)
                .setForce(force).setCacheOwner(cacheOwner).build(), BatchCodesReply.parser(), lost));
        if (lost[0]) {
            codes.replaceAll(c -> c == ErrorCode.OBJECT_NOT_FOUND ? ErrorCode.OK : c);
        }
        return codes;
    }

    /** RemoveByRegex: how many objects were removed; as {@link #remove}. */
    long removeByRegex(String regex, boolean force, long cacheOwner) {
        return call(Opcode.REMOVE_BY_REGEX, RegexRequest.newBuilder().setRegex(regex).setForce(force)
                .setCacheOwner(cacheOwner).build(), CountReply.parser()).getCount();
    }

    /** RemoveAll: how many objects were removed; as {@link #remove}. */
    long removeAll(boolean force, long cacheOwner) {
        return call(Opcode.REMOVE_ALL, RemoveAllRequest.newBuilder().setForce(force).setCacheOwner(cacheOwner).build(),
                CountReply.parser()).getCount();
    }

    // ------------------------------------------------------------------ listings, stats, reports

    /** ListKeys: keys starting with {@code prefix}, sorted, with sizes; at most {@code limit}. */
    KeyListing listKeys(String prefix, int limit) {
        ListKeysReply reply = call(Opcode.LIST_KEYS, ListKeysRequest.newBuilder().setPrefix(prefix).setLimit(limit)
                .build(), ListKeysReply.parser());
        List<KeyListing.KeySize> keys = new ArrayList<>(reply.getKeysCount());
        for (int i = 0; i < reply.getKeysCount(); i++) {
            keys.add(new KeyListing.KeySize(reply.getKeys(i), reply.getSizes(i)));
        }
        return new KeyListing(keys, reply.getTruncated());
    }

    /** Stats: the cluster summary. */
    ClusterStats stats() {
        StatsReply s = call(Opcode.STATS, Empty.getDefaultInstance(), StatsReply.parser());
        List<ClusterStats.SegmentStats> segments = new ArrayList<>(s.getSegmentsCount());
        for (SegmentStat seg : s.getSegmentsList()) {
            segments.add(new ClusterStats.SegmentStats(seg.getName(), seg.getNodeId(), seg.getEndpoint(),
                    seg.getCapacity(), seg.getUsed(), seg.getLargestFree(), seg.getStatus()));
        }
        HotCacheTotals hc = s.getHotCache();
        return new ClusterStats(s.getVersion(), s.getKeys(), s.getCapacity(), s.getUsed(), s.getLiveNodes(), segments,
                s.getEvictedKeys(), new ClusterStats.CacheTotals(hc.getReportingClients(),
                hc.getLocationCacheClients(), counters(hc.getTotals())), s.getExpiringKeys());
    }

    /** ClientReport: this client's cache counters, for the master's /metrics and STATS. */
    void reportCaches(String clientId, CacheCounters c) {
        ClientReport report = ClientReport.newBuilder().setClientId(clientId).setHits(c.hits()).setMisses(c.misses())
                .setFills(c.fills()).setDroppedFills(c.droppedFills()).setRejectedFills(c.rejectedFills())
                .setEvictions(c.evictions()).setStaleRejected(c.staleRejected()).setInvalidations(c.invalidations())
                .setBytesCached(c.bytesCached()).setCapacityBytes(c.capacityBytes())
                .setLocationCache(c.locationCache()).setLocationHits(c.locationHits())
                .setLocationMisses(c.locationMisses()).setLocationRefused(c.locationRefused()).build();
        call(Opcode.CLIENT_REPORT, report, Empty.parser());
    }

    private static CacheCounters counters(ClientReport r) {
        return new CacheCounters(r.getHits(), r.getMisses(), r.getFills(), r.getDroppedFills(), r.getRejectedFills(),
                r.getEvictions(), r.getStaleRejected(), r.getInvalidations(), r.getBytesCached(), r.getCapacityBytes(),
                r.getLocationCache(), r.getLocationHits(), r.getLocationMisses(), r.getLocationRefused());
    }

    private static List<ErrorCode> codes(BatchCodesReply reply) {
        List<ErrorCode> out = new ArrayList<>(reply.getCodesCount());
        for (int code : reply.getCodesList()) {
            out.add(ErrorCode.fromValue(code));
        }
        return out;
    }

    private <T extends MessageLite> T call(Opcode op, MessageLite request, Parser<T> parser) {
        return call(op, request, parser, null);
    }

    /**
     * One master call, on the calling thread, to the leader. While no master leads (several listed), the leader
     * recovers, or it cannot be reached (several listed), the call is repeated for up to the failover time, the
     * leader looked for again between attempts; {@code lost[0]} (if given) is set when an attempt's answer was lost
     * (the leader gone or out of reach, or a reused connection closed unanswered and the pool sent the request again:
     * it may or may not have run), not when a recovering master refused it.
     */
    private <T extends MessageLite> T call(Opcode op, MessageLite request, Parser<T> parser, boolean[] lost) {
        long deadline = System.nanoTime() + failoverNanos;
        for (int attempt = 0; ; attempt++) {
            String target = leader;
            try {
                return callOnce(target, op, request, parser, lost);
            } catch (TiffinException e) {
                boolean leaderGone = addresses.size() > 1 && (e.code() == ErrorCode.RPC_FAIL
                        || e.code() == ErrorCode.RPC_TIMEOUT);
                if (!(leaderGone || e.code() == ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS)
                        || System.nanoTime() - deadline > 0 || lifecycle.isClosed()) {
                    throw e;
                }
                if (lost != null && leaderGone) {
                    lost[0] = true;
                }
                if (addresses.size() > 1) {
                    discover(target);
                }
                pause(backoffMillis(attempt));
            }
        }
    }

    /** The pause before repeat {@code attempt} + 1 of a call: 20 ms doubling to at most 200. */
    private static long backoffMillis(int attempt) {
        return Math.min(200, 20L << Math.min(attempt, 4));
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // paces the retries while masters elect a leader or one recovers
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.RPC_FAIL, "interrupted while looking for the master leader", e);
        }
    }

    /**
     * Asks every listed master whether it leads (in parallel, at most a second: a paused one must not hold the
     * others up) and follows the leader of the highest term. Unless another thread already moved on from
     * {@code failed}.
     */
    private void discover(String failed) {
        synchronized (discovery) {
            if (!leader.equals(failed)) {
                return;
            }
            List<String> all = addresses.all();
            java.util.concurrent.BlockingQueue<Integer> answered = new java.util.concurrent.LinkedBlockingQueue<>();
            List<java.util.concurrent.CompletableFuture<ServiceReadyReply>> answers = new ArrayList<>();
            for (int i = 0; i < all.size(); i++) {
                String a = all.get(i);
                int index = i;
                var f = java.util.concurrent.CompletableFuture.supplyAsync(() -> callOnce(a, Opcode.SERVICE_READY,
                        Empty.getDefaultInstance(), ServiceReadyReply.parser()), PROBES);
                f.whenComplete((r, e) -> answered.add(index));
                answers.add(f);
            }
            // answers as they come; after a leader's, only a short wait for one of a higher term (a paused master
            // must not hold the others up)
            long end = System.nanoTime() + 1_000_000_000L;
            long bestTerm = -1;
            for (int seen = 0; seen < all.size(); seen++) {
                Integer i;
                try {
                    i = answered.poll(Math.max(1, end - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (i == null) {
                    break;
                }
                ServiceReadyReply r = answers.get(i).isCompletedExceptionally() ? null : answers.get(i).getNow(null);
                if (r != null && r.getLeader() && r.getTerm() > bestTerm) {
                    bestTerm = r.getTerm();
                    leader = all.get(i);
                    end = Math.min(end, System.nanoTime() + 50_000_000L);
                }
            }
        }
    }

    /** One master call to {@code target}: direct to a master of this JVM, else on a pooled connection. */
    private <T extends MessageLite> T callOnce(String target, Opcode op, MessageLite request, Parser<T> parser) {
        return callOnce(target, op, request, parser, null);
    }

    /**
     * As {@link #callOnce(String, Opcode, MessageLite, Parser)}; {@code lost[0]} (if given) is set when the pool sent
     * the request again on a fresh connection, a reused one having closed unanswered: the master may have run it.
     */
    private <T extends MessageLite> T callOnce(String target, Opcode op, MessageLite request, Parser<T> parser,
                                               boolean[] lost) {
        lifecycle.checkOpen();
        InProcessMaster local = inProcess ? InProcessMasters.find(target) : null;
        if (local == null) {
            return connections.call(target, op, request, null, parser, null, lost);
        }
        return callInProcess(local, op, request, parser);
    }

    /** {@code op} answered by {@code local} on this thread, the reply as {@code parser}'s type. */
    private static <T extends MessageLite> T callInProcess(InProcessMaster local, Opcode op, MessageLite request,
                                                           Parser<T> parser) {
        MessageLite reply = local.call(op, request);
        if (reply != null && reply.getParserForType() == parser) {
            @SuppressWarnings("unchecked")
            T same = (T) reply; // the type the caller reads: the object itself (messages are immutable)
            return same;
        }
        try {
            // any other type goes through bytes, as over the wire: the reply's type is the parser's
            return parser.parseFrom(reply == null ? ByteString.EMPTY : reply.toByteString());
        } catch (InvalidProtocolBufferException e) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "cannot decode the in-process master's "
                    + op + " reply: " + e.getMessage(), e);
        }
    }
}
