package io.tiffin.core.master;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The put protocol: PutStart allocates an object's replicas (status PROCESSING), PutEnd completes them
 * and gives the object its version, PutRevoke abandons them; single or batched. Also frees what puts
 * (and SSD-tier tasks) left behind when their writer never came back ({@link #releaseStuckPuts}): a put neither
 * ended nor revoked within {@code master.put-timeout} of its PutStart is abandoned, its space freed, and a late
 * PutEnd of it refused; the sweep looks only at the puts and tasks that are due (the shards' lists of puts in
 * progress, {@link MetadataShard#putStarted}, and the tasks of {@link PutDeadlines}).
 *
 * <p>Thread-safe: each key is handled under its shard lock ({@link ObjectTable}); allocation takes
 * segment monitors inside it. Lock order: shard → quarantine / tier / segment.
 */
final class PutCoordinator {
    private static final Logger LOG = LogManager.getLogger(PutCoordinator.class);
    /**
     * A writer's grant: write, and read its own bytes back (a read hint taken from the put reads the replica
     * before the lookup confirms it; any client may look the key up and read it then anyway).
     */
    static final int WRITER_OPS = DataGrant.READ | DataGrant.WRITE;

    private final MasterSettings settings;
    private final ObjectTable table;
    private final ReplicaPlacement placement;
    private final Removal removal;
    private final Expiry expiry;
    private final TierCoordinator tier;
    private final Quarantine quarantine;
    private final MasterCounters counters;
    private final Ticker ticker;
    private final PutDeadlines deadlines;
    /** Whether the master recovers objects from its nodes: a put granted then yields ({@link PutGrant#yields}). */
    private final java.util.function.BooleanSupplier recovering;
    /**
     * Runs what it is given and returns when the nodes' records have what it changed (null: no failover, nothing to
     * wait for): {@link MasterService#collectForgets}.
     */
    private final Function<Runnable, CompletableFuture<Void>> records;

    PutCoordinator(MasterSettings settings, ObjectTable table, ReplicaPlacement placement, Removal removal,
                   Expiry expiry, TierCoordinator tier, Quarantine quarantine, MasterCounters counters, Ticker ticker,
                   PutDeadlines deadlines, java.util.function.BooleanSupplier recovering,
                   Function<Runnable, CompletableFuture<Void>> records) {
        this.records = records;
        this.deadlines = deadlines;
        this.recovering = recovering;
        this.expiry = expiry;
        this.settings = settings;
        this.table = table;
        this.placement = placement;
        this.removal = removal;
        this.tier = tier;
        this.quarantine = quarantine;
        this.counters = counters;
        this.ticker = ticker;
    }

    /** See {@link MasterService#putStart(String, String, long, PutOptions, long)}. */
    KeyResult<PutGrant> putStart(String clientId, String key, long size, PutOptions options, long putId) {
        ErrorCode invalid = validatePut(key, size);
        if (invalid != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, invalid);
        }
        return table.inShard(key, shard -> putStartLocked(shard, clientId, key, size, options, ticker.millis(), putId));
    }

    /** @param putIds one per key, or empty (none) */
    List<KeyResult<PutGrant>> batchPutStart(String clientId, List<String> keys, List<Long> sizes,
                                            PutOptions options, List<Long> putIds) {
        if (keys.size() != sizes.size() || (!putIds.isEmpty() && putIds.size() != keys.size())) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "batch put: " + keys.size() + " keys but "
                    + sizes.size() + " sizes" + (putIds.isEmpty() ? "" : " and " + putIds.size() + " put ids"));
        }
        @SuppressWarnings("unchecked")
        KeyResult<PutGrant>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            ErrorCode invalid = validatePut(key, sizes.get(i));
            out[i] = invalid != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, invalid)
                    : putStartLocked(shard, clientId, key, sizes.get(i), options, now,
                            putIds.isEmpty() ? 0 : putIds.get(i));
        });
        return Arrays.asList(out);
    }

    private ErrorCode validatePut(String key, long size) {
        ErrorCode k = table.validateKey(key);
        if (k != ErrorCode.OK) {
            return k;
        }
        if (size < 0 || size > settings.maxObjectSize()) {
            return ErrorCode.INVALID_PARAMS;
        }
        return ErrorCode.OK;
    }

    private KeyResult<PutGrant> putStartLocked(MetadataShard shard, String clientId, String key, long size,
                                               PutOptions options, long now, long putId) {
        ObjectMetadata pending = shard.replacement(key);
        if (pending != null) {
            if (putId != 0 && pending.putId == putId) {
                return KeyResult.ok(key, new PutGrant(descriptorsOf(pending), pending.version,
                        recovering.getAsBoolean(), pending.expireAtMillis)); // a retried PutStart
            }
            if (pending.putStartMillis() + settings.putStartDiscardTimeout().toMillis() > now) {
                return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY); // another replacement is being written
            }
            preemptStuckReplacement(shard, pending);
        }
        ObjectMetadata existing = shard.objects.get(key);
        if (existing != null && putId != 0 && existing.putId == putId) {
            // The same put again (its writer retried a PutStart whose answer it lost): the same replicas while it
            // is written; once complete, "exists", which the writer rightly takes as done (its bytes are there).
            if (!existing.processing()) {
                return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
            }
            // yields as first granted: a retry after the recovery finds the put still written only if no node
            // brought the key back (it would have pre-empted the put), and then nothing is there to yield to
            return KeyResult.ok(key, new PutGrant(descriptorsOf(existing), existing.version,
                    recovering.getAsBoolean(), existing.expireAtMillis));
        }
        if (existing != null && removal.reapIfExpired(shard, existing, now)) {
            if (shard.objects.get(key) == existing) {
                return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY); // expired, held by an SSD task: retry
            }
            existing = null; // expired: the key holds nothing
        }
        boolean force = options.replaceLeased();
        if (existing == null && !force && shard.heldUntil(key, now) != 0) {
            // forced out (or lost with its node) while clients may still read it through cached locations
            return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE);
        }
        long keptDeadline = 0;
        boolean replaces = false;
        if (existing != null) {
            existing.dropDeadReplicas();
            boolean complete = existing.hasReadableReplica();
            if (!complete && existing.cachedUntilMillis > now) {
                return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE); // as above: its readers may still read it
            }
            if (complete && options.upsert() && !existing.processing()) {
                if (options.condition() == PutOptions.Condition.IF_ABSENT
                        || options.condition() == PutOptions.Condition.IF_VERSION
                        && existing.version != options.expectedVersion()) {
                    return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
                }
                // As for a remove: the replaced object's buffers must be nobody's destination or source; a forced
                // replacement quarantines those being read until their leases end (Removal.forceOut).
                if (!force && existing.isLeased(now)) {
                    return KeyResult.failed(key, ErrorCode.OBJECT_HAS_LEASE);
                }
                if (!existing.allComplete() || existing.offloadPending()) {
                    // a node writes one from SSD (promotion) or reads one for SSD (offload)
                    return KeyResult.failed(key, ErrorCode.OBJECT_HAS_REPLICATION_TASK);
                }
                // The existing object stays readable until the new one's PutEnd swaps it in (swapIn).
                keptDeadline = existing.expireAtMillis;
                replaces = true;
            } else if (complete) {
                return KeyResult.failed(key, ErrorCode.OBJECT_ALREADY_EXISTS);
            } else if (existing.putStartMillis() + settings.putStartDiscardTimeout().toMillis() > now) {
                // Another put of the key is being written: not "exists", which writers take as done, while its
                // writer may still fail and revoke (a put reported done with no bytes anywhere).
                return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY);
            } else if (needsObject(options)) {
                return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND); // a stuck put is no object
            } else {
                // A stuck put: pre-empt it, but keep its buffers until its put timeout since its
                // writer may still be writing into them.
                preemptStuckPut(shard, existing);
            }
        } else if (needsObject(options)) {
            return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
        }
        List<String> preferred = options.preferredSegment().map(List::of).orElse(List.of());
        SegmentReplicaSink sink = placement.sink(size, key, options.replicas());
        // clients are not nodes: the writer's node is unknown to a put (a promotion names its node). A 0-byte
        // object takes one allocation unit (MountedSegment.aligned) and its replicas say length 0.
        if (!placement.place(new AllocationRequest(Math.max(1, size), options.replicas(), preferred, ""), sink)) {
            return KeyResult.failed(key, ErrorCode.INTERNAL_ERROR);
        }
        if (sink.placed() == 0) {
            counters.allocationFailures.increment();
            placement.noteAllocationFailure(size);
            return KeyResult.failed(key, ErrorCode.NO_AVAILABLE_HANDLE);
        }
        if (sink.placed() < options.replicas()) {
            counters.partialAllocations.increment();
        }
        long version = table.nextVersion();
        ReplicaRecord[] replicaArray = new ReplicaRecord[sink.placed()];
        ReplicaDescriptor[] descriptorArray = new ReplicaDescriptor[replicaArray.length];
        for (int i = 0; i < replicaArray.length; i++) {
            replicaArray[i] = new ReplicaRecord(table.nextReplicaId(), sink.segment(i), sink.handle(i), sink.offset(i));
            descriptorArray[i] = replicaArray[i].toDescriptor(size, WRITER_OPS, writeGrantEnd(now));
        }
        // immutable lists over the arrays: the grant keeps them as they are (List.copyOf of one returns it)
        List<ReplicaRecord> replicas = List.of(replicaArray);
        List<ReplicaDescriptor> descriptors = List.of(descriptorArray);
        ObjectMetadata m = new ObjectMetadata(key, clientId, size, now, options.hardPin(), options.softPin(), replicas);
        m.version = version;
        m.putId = putId;
        m.replaceOptions(options.upsert(), options.keepTtl(), options.expectedVersion());
        m.expireAtMillis = options.keepTtl() ? keptDeadline
                : options.ttlMillis() > 0 ? expiry.deadline(now, options.ttlMillis()) : 0;
        if (replaces) {
            shard.startReplacement(m);
        } else {
            table.insert(shard, m);
            tier.forgetAwayCopies(key); // a new object: an away node's copy of an older one must not come back
        }
        shard.putStarted(m);
        deadlines.putStarted(key);
        return KeyResult.ok(key, new PutGrant(descriptors, version, recovering.getAsBoolean(), m.expireAtMillis));
    }

    private static boolean needsObject(PutOptions options) {
        return options.condition() == PutOptions.Condition.IF_PRESENT
                || options.condition() == PutOptions.Condition.IF_VERSION;
    }

    /** The replicas of a put in progress, as its writer gets them again (a retried PutStart). */
    private List<ReplicaDescriptor> descriptorsOf(ObjectMetadata m) {
        List<ReplicaDescriptor> out = new ArrayList<>(m.replicas().size());
        for (ReplicaRecord r : m.replicas()) {
            out.add(r.toDescriptor(m.size(), WRITER_OPS, writeGrantEnd(m.putStartMillis())));
        }
        return out;
    }

    /** As {@link #preemptStuckPut}, for a replacement: the replaced object stays. */
    private void preemptStuckReplacement(MetadataShard shard, ObjectMetadata stuck) {
        long releaseAt = stuck.putStartMillis() + settings.putTimeout().toMillis();
        for (ReplicaRecord r : stuck.replicas()) {
            quarantine.add(r, stuck.version, releaseAt); // its writer may still be writing into them
        }
        stuck.replicas().clear();
        shard.endReplacement(stuck.key);
        shard.putEnded(stuck);
        counters.putStartDiscards.increment();
    }

    /**
     * Swaps a written replacement in: the object it replaces (if still there) ends as by a forced removal (its
     * readers finish reading its bytes), and the new one takes the key. A replacement of one version
     * ({@code PutOptions.Condition.IF_VERSION}) whose object went meanwhile (removed, expired, evicted) is dropped
     * instead: false. Caller holds the shard lock.
     */
    private boolean swapIn(MetadataShard shard, ObjectMetadata m, long now, CacheHold hold) {
        shard.endReplacement(m.key);
        ObjectMetadata old = shard.objects.get(m.key);
        boolean keyKept = false; // the old object forced out with its key left in the index for m
        if (m.expectedVersion() != 0 && (old == null || old.version != m.expectedVersion() || old.isExpired(now))) {
            m.freeAll();
            return false;
        }
        if (old != null && old.processing()) {
            preemptStuckPut(shard, old); // not expected: puts of the key are refused while a replacement is written
            old = null;
        } else if (old != null) {
            if (m.keepTtl()) {
                m.expireAtMillis = old.isExpired(now) ? 0 : old.expireAtMillis;
            }
            if (old.offloadPending()) {
                // its node may still be reading a memory replica for the SSD tier: keep them that long
                old.leaseTimeoutMillis = Math.max(old.leaseTimeoutMillis,
                        now + settings.putStartReleaseTimeout().toMillis());
            }
            if (old.taskNode() != null) {
                tier.abandonTask(old, false); // its copy, if the node reports it, is stale and deleted
            }
            if (hold != null && old.cachedUntilMillis > now) {
                if (hold.owner() > 0 && old.cachedByOwner == hold.owner()) {
                    old.cachedUntilMillis = 0; // only the writer's own cache holds it (it drops the key itself): no
                                               // wait, and no hold on the key's later writes either
                } else {
                    // as a forced removal: another client may read the old bytes through a location it cached
                    // until then, so the PutEnd is reported no earlier, and so are the key's later writes
                    hold.cover(old.cachedUntilMillis);
                }
            }
            removal.forceOut(shard, old, now, true);
            keyKept = true;
        } else if (m.keepTtl()) {
            m.expireAtMillis = 0; // the replaced object went meanwhile (removed or expired)
        }
        table.insert(shard, m, keyKept);
        return true;
    }

    /**
     * A KEEPTTL replacement ({@code m}, swapped in and complete) took the replaced object's deadline as it was at its
     * PutEnd ({@link #swapIn}); its writer recorded the one granted at PutStart with it on the nodes. If an EXPIRE or
     * PERSIST moved it in between ({@code granted} differs), the nodes' records get the new one too (failover on), and
     * the PutEnd answers once they have it ({@code hold}).
     */
    private void recordKeptDeadline(ObjectMetadata m, long granted, CacheHold hold) {
        if (m.expireAtMillis == granted) {
            return;
        }
        CompletableFuture<Void> recorded = records.apply(() -> expiry.recordDeadline(m));
        if (recorded != null && hold != null) {
            hold.awaitRecords(recorded);
        }
    }

    private void preemptStuckPut(MetadataShard shard, ObjectMetadata stuck) {
        removal.preempt(shard, stuck, stuck.putStartMillis() + settings.putTimeout().toMillis());
        shard.putEnded(stuck);
        counters.putStartDiscards.increment();
    }

    /**
     * See {@link MasterService#putEnd}. {@code hold} (null = none) collects until when other clients may still read
     * a replaced object through locations they cached: the PutEnd is reported no earlier.
     */
    ErrorCode putEnd(String clientId, String key, int crc32c, CacheHold hold) {
        return table.inShard(key, shard -> putEndLocked(shard, clientId, key, crc32c, ticker.millis(), hold));
    }

    /** @param crc32cs one per key, or empty (none); {@code hold} as for {@link #putEnd} */
    List<ErrorCode> batchPutEnd(String clientId, List<String> keys, List<Integer> crc32cs, CacheHold hold) {
        if (!crc32cs.isEmpty() && crc32cs.size() != keys.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "batch put end: " + keys.size() + " keys but "
                    + crc32cs.size() + " checksums; send one per key or none");
        }
        ErrorCode[] out = new ErrorCode[keys.size()];
        long now = ticker.millis();
        table.forEachByShard(keys, (shard, i) -> out[i] = putEndLocked(shard, clientId, keys.get(i),
                crc32cs.isEmpty() ? 0 : crc32cs.get(i), now, hold));
        return Arrays.asList(out);
    }

    private ErrorCode putEndLocked(MetadataShard shard, String clientId, String key, int crc32c, long now,
                                   CacheHold hold) {
        if (hold != null) {
            // objects of the key forced out before (replaced or removed) whose windows have not ended: a client may
            // still read one of them through a location it cached, even though the object this put replaces (if
            // any) was never cached; the first write's answer waited for them, and so does every later one
            hold.cover(shard.heldUntil(key, now));
        }
        ObjectMetadata pending = shard.replacement(key);
        long grantedDeadline = -1; // a KEEPTTL replacement's deadline as its PutStart granted it; -1 = none
        if (pending != null && pending.writerId.equals(clientId)) {
            grantedDeadline = pending.keepTtl() ? pending.expireAtMillis : -1;
            pending.dropDeadReplicas();
            if (pending.replicas().isEmpty()) {
                shard.endReplacement(key);
                shard.putEnded(pending);
                return ErrorCode.OBJECT_NOT_FOUND;
            }
            if (!swapIn(shard, pending, now, hold)) {
                shard.putEnded(pending);
                return ErrorCode.OBJECT_NOT_FOUND; // the version it was to replace is gone
            }
            // swapped in: completed below as any put
        }
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            // a put freed after master.put-timeout: not "not found", which reads as a put that never started
            return deadlines.timedOutAt(key, now) >= 0 ? ErrorCode.INVALID_WRITE : ErrorCode.OBJECT_NOT_FOUND;
        }
        if (m.recovered() && !m.processing()) {
            // its writer's PutEnd, retried after a failover; or a put that yielded to it during the recovery (a put
            // of an existing key), whose writer has now finished writing: its buffers go at once
            m.releaseYielded(clientId);
            return ErrorCode.OK;
        }
        if (!m.writerId.equals(clientId)) {
            // a replacement freed after master.put-timeout: the replaced object is still the key's
            return pending == null && deadlines.timedOutAt(key, now) >= 0 ? ErrorCode.INVALID_WRITE
                    : ErrorCode.ILLEGAL_CLIENT;
        }
        if (!m.processing()) {
            return m.allComplete() ? ErrorCode.OK : ErrorCode.INVALID_WRITE;
        }
        m.dropDeadReplicas();
        if (m.replicas().isEmpty()) {
            table.forget(shard, key);
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        for (ReplicaRecord r : m.replicas()) {
            r.status(ReplicaStatus.COMPLETE);
        }
        shard.putEnded(m);
        m.complete();
        m.crc32c = crc32c;
        m.leaseTimeoutMillis = now; // a 0 ms lease seeds the least-recently-used order
        if (m.softPinRequested()) {
            m.softPinUntil(now + settings.softPinTtl().toMillis());
        }
        tier.writeThrough(m);
        if (grantedDeadline >= 0) {
            recordKeptDeadline(m, grantedDeadline, hold);
        }
        return ErrorCode.OK;
    }

    /** See {@link MasterService#putRevoke}. */
    ErrorCode putRevoke(String clientId, String key) {
        return table.inShard(key, shard -> putRevokeLocked(shard, clientId, key));
    }

    List<ErrorCode> batchPutRevoke(String clientId, List<String> keys) {
        ErrorCode[] out = new ErrorCode[keys.size()];
        table.forEachByShard(keys, (shard, i) -> out[i] = putRevokeLocked(shard, clientId, keys.get(i)));
        return Arrays.asList(out);
    }

    private ErrorCode putRevokeLocked(MetadataShard shard, String clientId, String key) {
        ObjectMetadata pending = shard.replacement(key);
        if (pending != null && pending.writerId.equals(clientId)) {
            pending.freeAll(); // the replaced object stays
            shard.endReplacement(key);
            shard.putEnded(pending);
            return ErrorCode.OK;
        }
        ObjectMetadata m = shard.objects.get(key);
        if (m == null) {
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        if (m.recovered() && m.releaseYielded(clientId)) {
            return ErrorCode.OK; // a put that yielded to the recovered object: its buffers go now
        }
        if (!m.writerId.equals(clientId)) {
            return ErrorCode.ILLEGAL_CLIENT;
        }
        if (!m.processing()) {
            return ErrorCode.INVALID_WRITE;
        }
        shard.putEnded(m);
        removal.erase(shard, m);
        return ErrorCode.OK;
    }

    /** Puts in progress and SSD-tier tasks that the sweep watches (for tests and metrics). */
    int watched() {
        int[] puts = new int[1];
        table.forEachShard(shard -> puts[0] += shard.putsListed());
        return puts[0] + deadlines.watchedTasks();
    }

    /**
     * Why a PutEnd of {@code key} failed with {@code code}, for its writer: a put that timed out ({@code
     * master.put-timeout}) and was freed, or one this master holds nothing of (OBJECT_NOT_FOUND: to a writer that
     * reads as "your key is missing" otherwise, where it means the put did not take effect); null for other codes.
     */
    String putEndFailure(String key, ErrorCode code) {
        if (code == ErrorCode.OBJECT_NOT_FOUND) {
            return key + ": OBJECT_NOT_FOUND: this master holds no put of the key in progress (its replicas were on"
                    + " a node that left, the key or the version it was to replace was removed while it was written,"
                    + " the put was revoked, or this master took over before any node recorded it); nothing was"
                    + " stored: put the object again";
        }
        if (code != ErrorCode.INVALID_WRITE) {
            return null;
        }
        long at = deadlines.timedOutAt(key, ticker.millis());
        if (at < 0) {
            return null;
        }
        return key + ": INVALID_WRITE: the put timed out: neither PutEnd nor PutRevoke came within master.put-timeout = "
                + settings.putTimeout().toSeconds() + "s of its PutStart, so the master freed its space (" + (ticker.millis() - at)
                + " ms ago); put the object again";
    }

    /**
     * Frees what puts and SSD-tier tasks left behind: quarantined buffers whose release time passed; puts still in
     * progress {@code master.put-timeout} after their PutStart (their space is freed, a late PutEnd refused); SSD-tier
     * tasks whose node never reported within {@code master.put-start-release-timeout}; passed holds of forgotten keys
     * ({@link MetadataShard#hold}). Looks only at the puts and tasks that are due: the heads of the shards' lists of
     * puts in progress ({@link MetadataShard#takePutsStartedBy}) and the tasks {@link PutDeadlines} names. Returns the
     * number of buffers freed.
     */
    int releaseStuckPuts() {
        long now = ticker.millis();
        int released = quarantine.releaseDue();
        int[] freed = new int[1];
        long startedBy = now - settings.putTimeout().toMillis();
        table.forEachShard(shard -> {
            for (ObjectMetadata stuck : shard.takePutsStartedBy(startedBy)) {
                freed[0] += abandonStuckPut(shard, stuck, now);
            }
            shard.purgeHeld(now);
        });
        long releaseMs = settings.putStartReleaseTimeout().toMillis();
        for (PutDeadlines.Due due : deadlines.dueTasks(now)) {
            table.inShard(due.key(), shard -> {
                ObjectMetadata m = shard.objects.get(due.key());
                if (m != null && m.taskNode() != null && m.taskStartMillis() == due.startedMillis()
                        && m.taskStartMillis() + releaseMs <= now) {
                    // An offload or promotion whose node never reported (a lost answer, a node that
                    // died after taking the task): without this the object stays pinned forever.
                    LOG.warn("Abandoning the {} of {} on node {}: no report within {}",
                            m.offloadPending() ? "offload" : "promotion", m.key, m.taskNode(),
                            settings.putStartReleaseTimeout());
                    counters.abandonedTasks.increment();
                    tier.abandonTask(m, true);
                    if (m.isEmpty()) {
                        table.forget(shard, m.key);
                    }
                }
                return null;
            });
        }
        released += freed[0];
        counters.putStartReleases.add(released);
        return released;
    }

    /**
     * Frees the put of {@code stuck}, taken from its shard's list of puts in progress after its timeout, if it is
     * still its key's put (or replacement) being written; returns the buffers freed. Caller holds the shard lock.
     */
    private int abandonStuckPut(MetadataShard shard, ObjectMetadata stuck, long now) {
        if (shard.replacement(stuck.key) == stuck) {
            LOG.info("Abandoning the replacing put of {} by {}: neither PutEnd nor PutRevoke within"
                    + " master.put-timeout ({}); its {} buffer(s) are freed, the replaced value stays",
                    stuck.key, stuck.writerId, settings.putTimeout(), stuck.replicas().size());
            int freed = stuck.replicas().size();
            stuck.freeAll();
            shard.endReplacement(stuck.key);
            deadlines.timedOut(stuck.key, now);
            counters.putTimeouts.increment();
            return freed;
        }
        if (shard.objects.get(stuck.key) == stuck && stuck.processing() && !stuck.recovered()) {
            LOG.info("Abandoning the put of {} by {}: neither PutEnd nor PutRevoke within master.put-timeout"
                    + " ({}); its {} buffer(s) are freed", stuck.key, stuck.writerId, settings.putTimeout(),
                    stuck.replicas().size());
            int freed = stuck.replicas().size();
            stuck.freeAll(); // the writer is done or gone
            removal.erase(shard, stuck);
            deadlines.timedOut(stuck.key, now);
            counters.putTimeouts.increment();
            return freed;
        }
        return 0;
    }

    /**
     * When the grants of a put started at {@code putStartMillis} end: when the master frees an unfinished put's
     * buffers ({@code master.put-timeout}), after which the space may hold another object.
     */
    long writeGrantEnd(long putStartMillis) {
        return putStartMillis + settings.putTimeout().toMillis();
    }
}
