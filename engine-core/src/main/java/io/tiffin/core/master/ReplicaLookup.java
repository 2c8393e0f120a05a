package io.tiffin.core.master;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Answers where an object can be read (getReplicaList, single, batched or by regex) and whether it
 * exists, granting a read lease ({@code master.lease-ttl}) with every positive answer, and noting how
 * long a client's location cache will reuse the answer ({@link ObjectMetadata#noteCachedLookup}). An
 * SSD-only read counts towards the object's promotion. For the first moments of a takeover's recovery, a lookup that
 * needs an object the recovery may still bring back is refused for the client to retry ({@link Recovery#holdsLookups}).
 *
 * <p>Thread-safe: each key is answered under its shard lock ({@link ObjectTable}).
 */
final class ReplicaLookup {
    /** The shortest read lease a lookup of an object about to expire gets (enough for a read of a few MiB). */
    static final long SHORTEST_EXPIRING_LEASE_MILLIS = 100;

    private final ObjectTable table;
    private final Removal removal;
    private final TierCoordinator tier;
    private final long leaseTtlMillis;
    private final Ticker ticker;
    private final Recovery recovery;

    ReplicaLookup(ObjectTable table, Removal removal, TierCoordinator tier, long leaseTtlMillis, Ticker ticker,
                  Recovery recovery) {
        this.recovery = recovery;
        this.table = table;
        this.removal = removal;
        this.tier = tier;
        this.leaseTtlMillis = leaseTtlMillis;
        this.ticker = ticker;
    }

    /** See {@link MasterService#getReplicaList(String, long, long)}. */
    KeyResult<ObjectLocation> getReplicaList(String key, long cacheForMillis, long owner) {
        if (table.validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        if (recovery.holdsLookups()) { // no list made in the common case
            refuseWhileRecovering(List.of(key));
        }
        return table.inShard(key, shard -> locateLocked(shard, key, ticker.millis(), cacheForMillis, owner));
    }

    /** See {@link MasterService#batchGetReplicaList(List, long, long)}. */
    List<KeyResult<ObjectLocation>> batchGetReplicaList(List<String> keys, long cacheForMillis, long owner) {
        refuseWhileRecovering(keys);
        @SuppressWarnings("unchecked")
        KeyResult<ObjectLocation>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = table.validateKey(key) != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY)
                    : locateLocked(shard, key, now, cacheForMillis, owner);
        });
        return Arrays.asList(out);
    }

    /**
     * The readable replicas of every key matching {@code q}, with leases, in key order; {@code fastPath}
     * as {@link ObjectTable#forEachMatch}.
     */
    List<ObjectLocation> locateMatching(KeyQuery q, boolean fastPath) {
        if (recovery.holdsLookups()) {
            throw recovering("a query by pattern");
        }
        long now = ticker.millis();
        List<ObjectLocation> out = new ArrayList<>();
        boolean inKeyOrder = table.forEachMatch(q, fastPath, (shard, key) -> {
            KeyResult<ObjectLocation> r = locateLocked(shard, key, now, 0, 0);
            if (r.isOk()) {
                out.add(r.value());
            }
        });
        if (!inKeyOrder) {
            out.sort(Comparator.comparing(ObjectLocation::key));
        }
        return out;
    }

    private KeyResult<ObjectLocation> locateLocked(MetadataShard shard, String key, long now, long cacheForMillis,
                                                   long owner) {
        ObjectMetadata m = shard.objects.get(key);
        if (m != null && removal.reapIfExpired(shard, m, now)) {
            return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
        }
        if (m == null) {
            // after a takeover the key may still come back with a node that has not attached: "retry", not "gone"
            return KeyResult.failed(key, recovery.active() ? ErrorCode.REPLICA_IS_NOT_READY : ErrorCode.OBJECT_NOT_FOUND);
        }
        if (recovery.active() && m.grantedHere()) {
            // put during the recovery: it yields to the key's object if a node still brings one back
            // (SegmentAttachment), so it is the key's value only once the recovery has ended
            return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY);
        }
        List<ReplicaDescriptor> readable = null;
        long lease = 0;
        for (ReplicaRecord r : m.replicas()) {
            if (r.isReadable()) {
                if (readable == null) {
                    readable = new ArrayList<>(m.replicas().size());
                    lease = leaseFor(m, now);
                }
                // read grants end with the lease: no client may read (or reuse the location) beyond it anyway
                readable.add(r.toDescriptor(m.size(), DataGrant.READ, now + lease));
            }
        }
        if (!m.diskReplicas().isEmpty() && !m.processing()) {
            if (readable == null) {
                readable = new ArrayList<>(m.diskReplicas().size());
                tier.promotions().countSsdOnlyRead(m);
            }
            for (DiskReplica d : m.diskReplicas()) {
                readable.add(d.toDescriptor()); // after the memory replicas: the client prefers those
            }
        }
        if (readable == null) {
            if (m.processing()) {
                return KeyResult.failed(key, ErrorCode.REPLICA_IS_NOT_READY);
            }
            removal.erase(shard, m);
            return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
        }
        if (lease == 0) {
            lease = leaseFor(m, now);
        }
        m.grantLease(now, lease);
        if (cacheForMillis > 0) {
            m.noteCachedLookup(now, lease, cacheForMillis, owner);
        }
        return KeyResult.ok(key, new ObjectLocation(key, m.size(), m.version, lease, readable, m.crc32c));
    }

    /**
     * The read lease of a lookup at {@code now}: {@code master.lease-ttl}, but for an object with an expiry deadline
     * at most twice the time left (at least {@link #SHORTEST_EXPIRING_LEASE_MILLIS}), since a client reuses a lookup
     * for at most half its lease: a location cache does not serve the object long after it expired.
     */
    private long leaseFor(ObjectMetadata m, long now) {
        if (m.expireAtMillis == 0) {
            return leaseTtlMillis;
        }
        long left = m.expireAtMillis - now;
        return Math.min(leaseTtlMillis, Math.max(SHORTEST_EXPIRING_LEASE_MILLIS, left > leaseTtlMillis ? left : 2 * left));
    }

    /** See {@link MasterService#existKey}. */
    KeyResult<Boolean> existKey(String key) {
        if (table.validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        if (recovery.holdsLookups()) { // no list made in the common case
            refuseWhileRecovering(List.of(key));
        }
        return table.inShard(key, shard -> KeyResult.ok(key, existsLocked(shard, key, ticker.millis())));
    }

    /** See {@link MasterService#batchExistKey}. */
    List<KeyResult<Boolean>> batchExistKey(List<String> keys) {
        refuseWhileRecovering(keys);
        @SuppressWarnings("unchecked")
        KeyResult<Boolean>[] out = new KeyResult[keys.size()];
        long now = ticker.millis();
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            out[i] = table.validateKey(key) != ErrorCode.OK
                    ? KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY)
                    : KeyResult.ok(key, existsLocked(shard, key, now));
        });
        return Arrays.asList(out);
    }

    private boolean existsLocked(MetadataShard shard, String key, long now) {
        ObjectMetadata m = shard.objects.get(key);
        if (m == null || removal.reapIfExpired(shard, m, now) || !m.hasReadableReplica()) {
            return false;
        }
        m.grantLease(now, leaseFor(m, now));
        return true;
    }

    /**
     * Refuses a lookup of {@code keys}, before it grants any lease, while the recovery holds lookups and the object of
     * one of them may still come back with a node: the master knows none, or only a put granted during the recovery.
     *
     * @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS} (clients retry it)
     */
    private void refuseWhileRecovering(List<String> keys) {
        if (!recovery.holdsLookups()) {
            return;
        }
        String[] waiting = new String[1];
        table.forEachByShard(keys, (shard, i) -> {
            String key = keys.get(i);
            if (waiting[0] == null && table.validateKey(key) == ErrorCode.OK) {
                ObjectMetadata m = shard.objects.get(key);
                if (m == null || m.grantedHere()) {
                    waiting[0] = key;
                }
            }
        });
        if (waiting[0] != null) {
            throw recovering("the lookup of " + waiting[0]);
        }
    }

    private static TiffinException recovering(String what) {
        return new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, what + ": this master took over moments ago"
                + " and its nodes have not all brought their objects back yet; retry in a moment");
    }
}
