package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Writes: PutStart → write every replica → PutEnd; any failed write → PutRevoke and {@link
 * ErrorCode#TRANSFER_FAIL}. A PutStart that finds no room ({@code NO_AVAILABLE_HANDLE}) is retried a few
 * times while the master's evictor frees some, one that finds another writer's put of the key in progress
 * ({@code REPLICA_IS_NOT_READY}) while that put ends, and one that finds a node copying the object to SSD or back
 * ({@code OBJECT_HAS_REPLICATION_TASK}) while that copy ends ({@link BriefRefusals}). A put of an existing
 * (complete) key without upsert is a successful no-op (Mooncake's rule). Every put carries a random put id, the
 * same when {@link MasterStub} resends it after a lost answer or a leader change, so a retried PutStart gets the
 * same replicas and is never doubled. With failover on ({@code commit_on_nodes}) the last write of every replica
 * carries the object's commit record, which its node keeps for a master that takes over. Replicas in a segment this
 * client reaches directly ({@link SameHostSegments}) are written with a memory copy, the others through
 * {@link SliceExchange}. The key is dropped from the client's caches before the put, and a written object's
 * first replica becomes its read hint. Every put carries the value's CRC32C ({@link Checksums}) in its commit
 * records and its PutEnd, computed once before the writes (the commit record, which must hold it, rides on the
 * first frame of some replicas' writes; the pass also brings a value that is not yet in the cache into it for
 * the copies that follow).
 *
 * <p>Thread-safe (no state of its own). Arguments are checked by the caller ({@link TiffinClient}).
 */
final class PutPipeline {
    private static final Logger LOG = LogManager.getLogger(PutPipeline.class);
    private final MasterStub master;
    private final String clientId;
    private final ClientCaches caches;
    private final SameHostSegments sameHost;
    private final SliceExchange slices;
    private final ClientLifecycle lifecycle;

    /**
     * This client's location cache (as {@code cache_owner}): a forced replacement's PutEnd does not wait for
     * locations only this cache holds, since the client drops the key after PutEnd itself.
     */
    private final long cacheOwner;

    PutPipeline(MasterStub master, String clientId, ClientCaches caches, SameHostSegments sameHost,
                SliceExchange slices, ClientLifecycle lifecycle, long cacheOwner) {
        this.cacheOwner = cacheOwner;
        this.master = master;
        this.clientId = clientId;
        this.caches = caches;
        this.sameHost = sameHost;
        this.slices = slices;
        this.lifecycle = lifecycle;
    }

    /** A put's id: random and non-zero, the same for its retries. */
    private static long newPutId() {
        long id = 0;
        while (id == 0) {
            id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        }
        return id;
    }

    /** Stores {@code value} (shareable: not thread-confined) under {@code key}. */
    void put(String key, MemorySegment value, PutOptions putOptions) {
        caches.invalidate(key);
        long size = value.byteSize();
        long putId = newPutId();
        MasterStub.Grant grant = null;
        try {
            for (int attempt = 0; grant == null; attempt++) {
                try {
                    grant = master.putStart(clientId, key, size, putOptions, putId);
                } catch (TiffinException e) {
                    // A failed allocation wakes the master's evictor (every 10 ms); give it a moment. Another
                    // writer's put of the key (REPLICA_IS_NOT_READY) usually ends or is revoked as soon, and a
                    // node's copy of the object to SSD or back (OBJECT_HAS_REPLICATION_TASK) sooner.
                    if (!BriefRefusals.ofPut(e.code()) || attempt >= BriefRefusals.RETRIES) {
                        throw e;
                    }
                    BriefRefusals.pause(attempt, e.code(), "a PutStart of " + key);
                }
            }
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                return; // Mooncake rule: a put of an existing key is a successful no-op.
            }
            throw e;
        }
        List<ReplicaDescriptor> replicas = grant.replicas();
        int crc = 0;
        TiffinException failed;
        try {
            crc = Checksums.crc32c(value); // under the revoke: the grant must not outlive a failure here either
            failed = writeAll(List.of(replicas), List.of(value),
                    java.util.Collections.singletonList(commitOf(key, size, grant, putId, putOptions, crc)))[0];
        } catch (RuntimeException e) {
            failed = lifecycle.transferFailure("put " + key, e);
        }
        if (failed != null) {
            revokeQuietly(key);
            throw lifecycle.transferFailure("put " + key, failed);
        }
        master.putEnd(clientId, key, crc, cacheOwner);
        ended(key, replicas);
    }

    /**
     * After a PutEnd of {@code key}: lookups until then found the replaced value (an upsert's old value stays
     * readable until then), so one this client made meanwhile must not be reused now; the new replicas become the
     * key's read hint.
     */
    private void ended(String key, List<ReplicaDescriptor> replicas) {
        caches.invalidate(key);
        if (caches.hints() != null) {
            caches.hints().remember(key, replicas, sameHost::isDirect);
        }
    }

    /**
     * {@link #put} made without any wait, when it can be: the master runs in this JVM (asked directly, once per
     * step) and grants replicas that all lie in segments of this JVM (memory copies, each recorded in its
     * segment). Null when it cannot — master elsewhere, a replica elsewhere, or a refusal that {@link #put} would
     * wait out (no room yet, another put of the key under way) — with nothing stored (a grant is revoked).
     * Otherwise the put has taken effect when this returns, and the future completes when {@link #put} would have
     * returned: at once, or once other clients' cached locations of the replaced value let go (exceptionally if
     * the master could not hold its answer that long; the error says the put took effect).
     */
    java.util.concurrent.CompletableFuture<Void> putInThisJvm(String key, MemorySegment value, PutOptions putOptions) {
        io.tiffin.core.local.InProcessMaster local = master.masterInThisJvm();
        if (local == null) {
            return null;
        }
        caches.invalidate(key);
        long size = value.byteSize();
        long putId = newPutId();
        MasterStub.Grant grant;
        try {
            grant = master.putStartIn(local, clientId, key, size, putOptions, putId);
        } catch (TiffinException e) {
            if (e.code() == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                return java.util.concurrent.CompletableFuture.completedFuture(null); // as put: a no-op success
            }
            return null;
        }
        List<ReplicaDescriptor> replicas = grant.replicas();
        for (ReplicaDescriptor d : replicas) {
            if (sameHost.sameJvm(d) == null || sameHost.epochMoved(d)) {
                revokeQuietly(local, key);
                return null;
            }
        }
        int crc = Checksums.crc32c(value);
        java.util.concurrent.CompletableFuture<Void> answered;
        try {
            // every replica is in this JVM: memory copies only, nothing sent
            if (writeAll(List.of(replicas), List.of(value), java.util.Collections.singletonList(
                    commitOf(key, size, grant, putId, putOptions, crc)))[0] != null) {
                revokeQuietly(local, key);
                return null;
            }
            answered = master.putEndIn(local, clientId, key, crc, cacheOwner);
        } catch (RuntimeException e) {
            revokeQuietly(local, key);
            return null;
        }
        ended(key, replicas);
        return answered;
    }

    private void revokeQuietly(io.tiffin.core.local.InProcessMaster local, String key) {
        try {
            master.putRevokeIn(local, clientId, key);
        } catch (RuntimeException e) {
            LOG.warn("PutRevoke of {} failed ({}); the master releases it after the put timeout", key, e.getMessage());
        }
    }

    /** The record a writer leaves on the nodes with the object (failover on), or null. */
    private static io.tiffin.core.transport.proto.CommitRecord commitOf(String key, long size, MasterStub.Grant g,
                                                                    long putId, PutOptions o, int crc32c) {
        if (!g.commitOnNodes()) {
            return null;
        }
        return io.tiffin.core.transport.proto.CommitRecord.newBuilder().setKey(key).setSize(size)
                .setVersion(g.version()).setPutId(putId).setHardPin(o.hardPin()).setSoftPin(o.softPin())
                .setCrc32C(crc32c).setYields(g.yields()).setExpireAtMs(g.expireAtMillis()).build();
    }

    private void revokeQuietly(String key) {
        // a put cut short by an interrupt revokes all the same: the flag is cleared for the revoke and set again,
        // or the revoke failed at once and the key stayed unusable for every client until the put timeout
        boolean interrupted = Thread.interrupted();
        try {
            master.putRevoke(clientId, key);
        } catch (RuntimeException e) {
            LOG.warn("PutRevoke of {} failed ({}); the master releases it after the put timeout", key, e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Stores many values (shareable, one per key) with one master round trip per step; one result per key. The keys
     * another writer was still writing, or a node was copying to SSD or back ({@link BriefRefusals#ofBatchPut}), are
     * put again, together, after the single put's pauses (about 0.6 s in all): a key whose other put completed
     * meanwhile is then a successful no-op, as for a single put. An interrupt ends the retries with the answers so far.
     */
    List<KeyResult<Void>> batchPut(List<String> keys, List<MemorySegment> values, PutOptions putOptions) {
        List<KeyResult<Void>> out = new ArrayList<>(batchPutOnce(keys, values, putOptions));
        for (int attempt = 0; attempt < BriefRefusals.RETRIES; attempt++) {
            List<Integer> again = new ArrayList<>();
            for (int i = 0; i < out.size(); i++) {
                if (BriefRefusals.ofBatchPut(out.get(i).code())) {
                    again.add(i);
                }
            }
            if (again.isEmpty()) {
                break;
            }
            try {
                Thread.sleep(20L << attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            List<KeyResult<Void>> retried = batchPutOnce(again.stream().map(keys::get).toList(),
                    again.stream().map(values::get).toList(), putOptions);
            for (int j = 0; j < again.size(); j++) {
                out.set(again.get(j), retried.get(j));
            }
        }
        return out;
    }

    private List<KeyResult<Void>> batchPutOnce(List<String> keys, List<MemorySegment> values, PutOptions putOptions) {
        keys.forEach(caches::invalidate);
        int n = keys.size();
        long[] sizes = new long[n];
        long[] putIds = new long[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = values.get(i).byteSize();
            putIds[i] = newPutId();
        }
        List<KeyResult<MasterStub.Grant>> started = master.batchPutStart(clientId, keys, sizes, putOptions, putIds);
        ErrorCode[] codes = new ErrorCode[n];
        int[] crcs = new int[n];
        List<List<ReplicaDescriptor>> toWrite = new ArrayList<>(n);
        List<io.tiffin.core.transport.proto.CommitRecord> commits = new ArrayList<>(n);
        Map<String, Integer> firstGranted = new java.util.HashMap<>();
        Map<Integer, Integer> sameAs = new LinkedHashMap<>(); // a key given twice: its later index → the first
        for (int i = 0; i < n; i++) {
            KeyResult<MasterStub.Grant> r = started.get(i);
            ErrorCode code = r.code();
            if (code == ErrorCode.OBJECT_ALREADY_EXISTS && !putOptions.upsert()) {
                code = ErrorCode.OK; // existing (complete) key: successful no-op
                toWrite.add(null);
                commits.add(null);
            } else if (code == ErrorCode.OK) {
                toWrite.add(r.value().replicas());
                crcs[i] = Checksums.crc32c(values.get(i));
                commits.add(commitOf(keys.get(i), sizes[i], r.value(), putIds[i], putOptions, crcs[i]));
                firstGranted.putIfAbsent(keys.get(i), i);
            } else {
                toWrite.add(null);
                commits.add(null);
                if (code == ErrorCode.REPLICA_IS_NOT_READY && firstGranted.containsKey(keys.get(i))) {
                    sameAs.put(i, firstGranted.get(keys.get(i))); // in progress: by this very batch
                }
            }
            codes[i] = code;
        }
        TiffinException[] failed;
        try {
            failed = writeAll(toWrite, values, commits);
        } catch (RuntimeException e) {
            failed = new TiffinException[n];
            Arrays.fill(failed, lifecycle.transferFailure("batch put", e));
        }
        List<String> toEnd = new ArrayList<>();
        List<Integer> endIdx = new ArrayList<>();
        List<Integer> endCrcs = new ArrayList<>();
        List<String> toRevoke = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (toWrite.get(i) == null) {
                continue;
            }
            if (failed[i] == null) {
                toEnd.add(keys.get(i));
                endIdx.add(i);
                endCrcs.add(crcs[i]);
            } else {
                LOG.debug("batch put: write of {} failed", keys.get(i), failed[i]);
                codes[i] = ErrorCode.TRANSFER_FAIL;
                toRevoke.add(keys.get(i));
            }
        }
        if (!toRevoke.isEmpty()) {
            boolean interrupted = Thread.interrupted(); // as in revokeQuietly
            try {
                master.batchPutRevoke(clientId, toRevoke);
            } catch (RuntimeException e) {
                LOG.warn("BatchPutRevoke failed ({}); the master releases the buffers after the put timeout", e.getMessage());
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (!toEnd.isEmpty()) {
            List<ErrorCode> ended = master.batchPutEnd(clientId, toEnd, endCrcs, cacheOwner);
            for (int j = 0; j < toEnd.size(); j++) {
                int i = endIdx.get(j);
                codes[i] = ended.get(j);
                caches.invalidate(keys.get(i)); // as in put: a lookup made during the put found the replaced value
                if (codes[i] == ErrorCode.OK && caches.hints() != null) {
                    caches.hints().remember(keys.get(i), toWrite.get(i), sameHost::isDirect);
                }
            }
        }
        // a key given twice is written once (its first value): the later one shares that write's outcome
        sameAs.forEach((later, first) -> codes[later] = codes[first]);
        List<KeyResult<Void>> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(codes[i] == ErrorCode.OK ? KeyResult.ok(keys.get(i), null) : KeyResult.failed(keys.get(i), codes[i]));
        }
        return out;
    }

    /**
     * Writes every replica of every object: replicas in a segment this client reaches directly by memory
     * copy, the others over pooled blocking connections, all requests to all nodes sent before any answer
     * is awaited. Returns per object null when all its replicas were written, else the first failure.
     */
    private TiffinException[] writeAll(List<List<ReplicaDescriptor>> replicasPerObject, List<MemorySegment> srcs,
                                       List<io.tiffin.core.transport.proto.CommitRecord> commits) {
        int n = srcs.size();
        TiffinException[] failed = new TiffinException[n];
        Map<String, SliceExchange.NodeRequests> byNode = new LinkedHashMap<>();
        for (int k = 0; k < n; k++) {
            List<ReplicaDescriptor> replicas = replicasPerObject.get(k);
            if (replicas == null) {
                continue;
            }
            MemorySegment src = srcs.get(k);
            io.tiffin.core.transport.proto.CommitRecord commit = commits.get(k);
            for (ReplicaDescriptor d : replicas) {
                MemorySegment local;
                try {
                    local = sameHost.slice(d, true);
                } catch (RuntimeException e) {
                    failed[k] = failed[k] != null ? failed[k] : lifecycle.transferFailure("local write", e);
                    continue;
                }
                if (local != null && sameHost.epochMoved(d)) {
                    local = null; // re-mounted since PutStart: the node refuses the write over the socket
                }
                if (local != null) {
                    try {
                        MemorySegment.copy(src, 0, local, 0, d.size());
                        if (commit != null) {
                            commitDirect(byNode, k, d, commit);
                        }
                    } catch (RuntimeException e) {
                        failed[k] = failed[k] != null ? failed[k] : lifecycle.transferFailure("local write", e);
                    }
                    continue;
                }
                slices.addWrite(byNode, k, d, src, commit == null ? null : commit.toBuilder().setOffset(d.offset())
                        .build());
            }
        }
        if (byNode.isEmpty()) {
            return failed;
        }
        TiffinException[] sent = slices.write(byNode.values(), n);
        return merge(failed, sent);
    }

    /**
     * Records an object copied straight into a replica's memory on its node: in its segment object when the node
     * runs in this JVM, else with a write of no bytes carrying the record (sent with the other writes).
     */
    private void commitDirect(Map<String, SliceExchange.NodeRequests> byNode, int k, ReplicaDescriptor d,
                              io.tiffin.core.transport.proto.CommitRecord commit) {
        io.tiffin.core.local.LocalSegment same = sameHost.sameJvm(d);
        if (same != null) {
            same.commit(d.mountEpoch(), io.tiffin.core.local.SegmentLedger.Entry.of(commit, d.offset()));
        } else {
            slices.addCommit(byNode, k, d, commit.toBuilder().setOffset(d.offset()).build());
        }
    }

    private static TiffinException[] merge(TiffinException[] failed, TiffinException[] sent) {
        int n = failed.length;
        for (int k = 0; k < n; k++) {
            if (failed[k] == null) {
                failed[k] = sent[k];
            }
        }
        return failed;
    }
}
