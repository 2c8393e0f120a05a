package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.Ticker;
import java.util.Arrays;
import java.util.List;

/**
 * Ends objects: removals (one key, a batch, a regex, all), with Mooncake's checks, and
 * {@link #erase}, the one way an object's record and buffers go together. A forced removal of a leased
 * object quarantines its buffers until the lease ends; one of an object a client may still read through
 * its location cache notes in the caller's {@link CacheHold} until when the answer must wait.
 *
 * <p>Thread-safe: every removal runs under the key's shard lock ({@link ObjectTable}); {@link #erase} is
 * called with it held. Lock order: shard → quarantine / tier / segment.
 */
final class Removal {
    private final ObjectTable table;
    private final Quarantine quarantine;
    private final TierCoordinator tier;
    private final RestartGuard restartGuard;
    private final MasterCounters counters;
    private final Ticker ticker;

    Removal(ObjectTable table, Quarantine quarantine, TierCoordinator tier, RestartGuard restartGuard,
            MasterCounters counters, Ticker ticker) {
        this.table = table;
        this.counters = counters;
        this.quarantine = quarantine;
        this.tier = tier;
        this.restartGuard = restartGuard;
        this.ticker = ticker;
    }

    /** See {@link MasterService#remove(String, boolean, CacheHold)}; {@code hold} may be null. */
    ErrorCode remove(String key, boolean force, CacheHold hold) {
        if (table.validateKey(key) != ErrorCode.OK) {
            return ErrorCode.INVALID_KEY;
        }
        long now = ticker.millis();
        restartGuard.cover(hold, now);
        return table.inShard(key, shard -> removeLocked(shard, key, force, now, hold));
    }

    /** See {@link MasterService#batchRemove(List, boolean, CacheHold)}; {@code hold} may be null. */
    List<ErrorCode> batchRemove(List<String> keys, boolean force, CacheHold hold) {
        ErrorCode[] out = new ErrorCode[keys.size()];
        long now = ticker.millis();
        restartGuard.cover(hold, now);
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = table.validateKey(key) != ErrorCode.OK ? ErrorCode.INVALID_KEY
                    : removeLocked(shard, key, force, now, hold);
        });
        return Arrays.asList(out);
    }

    /**
     * Removes the objects matching {@code q} that pass the remove checks; returns how many. {@code hold} may
     * be null.
     */
    long removeMatching(KeyQuery q, boolean force, CacheHold hold) {
        long now = ticker.millis();
        restartGuard.cover(hold, now);
        long[] removed = new long[1];
        table.forEachMatch(q, true, (shard, key) -> {
            if (removeLocked(shard, key, force, now, hold) == ErrorCode.OK) {
                removed[0]++;
            }
        });
        tier.forgetAwayCopiesMatching(q::matches);
        if (hold != null) {
            // matching keys that are already gone but still readable through cached locations (see removeLocked)
            table.forEachShard(shard -> hold.cover(shard.heldUntilMatching(q::matches, now)));
        }
        return removed[0];
    }

    private ErrorCode removeLocked(MetadataShard shard, String key, boolean force, long now, CacheHold hold) {
        ObjectMetadata m = shard.objects.get(key);
        if (m != null && reapIfExpired(shard, m, now)) {
            tier.forgetAwayCopies(key);
            return ErrorCode.OBJECT_NOT_FOUND; // gone since its deadline, whether or not reclaimed yet
        }
        if (m == null) {
            if (hold != null) {
                // already forced out (or lost with its node) and still readable through cached locations:
                // "not found" may be said only once those reads are over, as the first removal's answer
                hold.cover(shard.heldUntil(key, now));
            }
            tier.forgetAwayCopies(key); // a copy on the SSD of a node that is away must not come back with it
            return ErrorCode.OBJECT_NOT_FOUND;
        }
        if (!force && m.isLeased(now)) {
            return ErrorCode.OBJECT_HAS_LEASE;
        }
        if (m.processing()) {
            return ErrorCode.REPLICA_IS_NOT_READY; // a put of it is being written
        }
        if (!m.allComplete() || m.offloadPending()) {
            return ErrorCode.OBJECT_HAS_REPLICATION_TASK; // a node copies it from SSD (promotion) or to SSD
        }
        if (hold != null) {
            hold.cover(shard.heldUntil(key, now)); // objects of the key forced out before, as a PutEnd does
        }
        if (hold != null && m.cachedUntilMillis > now) {
            if (hold.owner() > 0 && m.cachedByOwner == hold.owner()) {
                m.cachedUntilMillis = 0; // only the remover's cache holds it: nothing to wait for, no hold on puts
            } else {
                hold.cover(m.cachedUntilMillis);
            }
        }
        forceOut(shard, m, now);
        tier.forgetAwayCopies(key);
        return ErrorCode.OK;
    }

    /**
     * Whether {@code m} has expired ({@link Expiry}); if so and no SSD-tier task holds it, ends it now (counted as
     * expired). An expired object still held stays in the table, unseen by lookups, until a later call. Caller
     * holds the shard lock.
     */
    boolean reapIfExpired(MetadataShard shard, ObjectMetadata m, long now) {
        if (!m.isExpired(now)) {
            return false;
        }
        if (m.allComplete() && !m.offloadPending()) {
            forceOut(shard, m, now);
            counters.expiredObjects.increment();
        }
        return true;
    }

    /**
     * Ends a complete object at once even if it is being read (a forced removal, a forced replacement, an
     * expiry): the key goes now, but a leased object's buffers stay out of reach of new puts until the lease
     * ends, so its readers never see another object's bytes. Its records on the nodes go now: no takeover brings
     * it back. Caller holds the shard lock and has checked that no replica is being written or read by a task.
     */
    void forceOut(MetadataShard shard, ObjectMetadata m, long now) {
        forceOut(shard, m, now, false);
    }

    /**
     * As {@link #forceOut(MetadataShard, ObjectMetadata, long)}; {@code keyStays}: the caller puts the key's next
     * object in before it lets go of the shard lock (a replacement), so the key stays in the table's key index
     * ({@link ObjectTable#forget(MetadataShard, String, boolean)}).
     */
    void forceOut(MetadataShard shard, ObjectMetadata m, long now, boolean keyStays) {
        if (m.isLeased(now)) {
            m.replicas().forEach(r -> r.forgetRecord(m.version));
            quarantine.addAll(m.replicas(), m.version, m.leaseTimeoutMillis);
            m.replicas().clear();
            tier.dropDiskCopies(m);
            table.forget(shard, m.key, keyStays);
        } else {
            erase(shard, m, keyStays);
        }
    }

    /**
     * Ends a put in progress that another takes the key from, keeping the buffers still being written until
     * {@code releaseAtMillis} (its writer may still be writing into them) and freeing the others. Caller holds
     * the object's shard lock.
     */
    void preempt(MetadataShard shard, ObjectMetadata m, long releaseAtMillis) {
        for (ReplicaRecord r : m.replicas()) {
            if (r.status() == io.tiffin.api.ReplicaStatus.PROCESSING) {
                quarantine.add(r, m.version, releaseAtMillis);
            } else {
                r.free(m.version);
            }
        }
        m.replicas().clear();
        table.forget(shard, m.key);
    }

    /**
     * Erases an object: frees its buffers (a promotion's replica still being written goes to quarantine
     * instead; a put's own are the revoking writer's, or the stuck-put release's, concern), asks the nodes
     * holding SSD copies to delete them and forgets the key. Caller holds the shard lock.
     */
    void erase(MetadataShard shard, ObjectMetadata m) {
        erase(shard, m, false);
    }

    private void erase(MetadataShard shard, ObjectMetadata m, boolean keyStays) {
        if (!m.processing()) {
            quarantine.takeWriting(m);
        }
        m.freeAll();
        tier.dropDiskCopies(m);
        table.forget(shard, m.key, keyStays);
    }
}
