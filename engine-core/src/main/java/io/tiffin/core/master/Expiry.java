package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.core.util.Ticker;

/**
 * Objects' expiry deadlines (master clock): set by a put ({@code PutOptions.ttlMillis}) or {@link #expire}, read by
 * {@link #remainingMillis}. Once its deadline has passed an object is gone for every client: every lookup, exists,
 * remove and put that meets it removes it first ({@link #reapIfDue}), as a forced removal would (the buffers of a
 * leased object stay quarantined until its readers' leases end), and {@link #sweep} reclaims those nobody asks for.
 * Counted apart from evictions ({@code tiffin_master_expired_objects_total}).
 *
 * <p>Thread-safe: works under the key's shard lock ({@link ObjectTable}).
 */
final class Expiry {
    /** {@link #expire}'s request: only read the time to live. */
    static final int QUERY = 0;
    /** {@link #expire}'s request: set the deadline {@code ttlMillis} from now (0 = now: the object goes). */
    static final int SET = 1;
    /** {@link #expire}'s request: drop the deadline. */
    static final int PERSIST = 2;
    /** What {@link #expire} answers for an object without a deadline. */
    static final long NONE = -1;
    /** {@link #expire}'s condition of a {@link #SET}: none (as older clients send). */
    static final int ALWAYS = 0;
    /** Only if the object has no deadline (Redis's NX). */
    static final int IF_NONE = 1;
    /** Only if it has one (XX). */
    static final int IF_SET = 2;
    /** Only if the new deadline is later than the current one, which an object without one never is (GT). */
    static final int IF_LATER = 3;
    /** Only if the new deadline is earlier than the current one, or there is none (LT). */
    static final int IF_SOONER = 4;
    /** Only if it has one and the new deadline is earlier (XX LT). */
    static final int IF_SET_AND_SOONER = 5;

    /**
     * What {@link #expire} answers: the time to live before (ms, {@link #NONE}) and whether it changed it.
     *
     * <p>Thread-safe (immutable).
     */
    record Outcome(long ttlBeforeMillis, boolean applied) {
    }

    private final ObjectTable table;
    private final Removal removal;
    private final TierCoordinator tier;
    private final Ticker ticker;

    Expiry(ObjectTable table, Removal removal, TierCoordinator tier, Ticker ticker) {
        this.table = table;
        this.removal = removal;
        this.tier = tier;
        this.ticker = ticker;
    }

    /** The deadline for a time to live given at {@code now}: never 0 (which means none), never overflowing. */
    long deadline(long now, long ttlMillis) {
        return Math.max(1, ttlMillis > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + ttlMillis);
    }

    /**
     * Whether {@code m} has expired; if so and nothing holds it (an SSD-tier task), removes it now. An expired
     * object still held stays in the table, unseen by lookups, until a later call. Caller holds the shard lock.
     */
    boolean reapIfDue(MetadataShard shard, ObjectMetadata m, long now) {
        return removal.reapIfExpired(shard, m, now);
    }

    /**
     * EXPIRE, PEXPIRE, PERSIST, TTL and PTTL of one key: per {@code mode} ({@link #QUERY}, {@link #SET},
     * {@link #PERSIST}), answers the time to live before the change (ms, {@link #NONE} without a deadline), or
     * OBJECT_NOT_FOUND for a key that holds no complete object. A {@link #SET} is made only if {@code condition}
     * ({@link #ALWAYS}, {@link #IF_NONE}, {@link #IF_SET}, {@link #IF_LATER}, {@link #IF_SOONER},
     * {@link #IF_SET_AND_SOONER}) holds, checked
     * with the key locked.
     */
    KeyResult<Outcome> expire(String key, int mode, long ttlMillis, int condition) {
        if (table.validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        if (mode < QUERY || mode > PERSIST || ttlMillis < 0 || condition < ALWAYS || condition > IF_SET_AND_SOONER
                || (condition != ALWAYS && mode != SET)) {
            return KeyResult.failed(key, ErrorCode.INVALID_PARAMS);
        }
        long now = ticker.millis();
        return table.inShard(key, shard -> {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null || m.processing() || reapIfDue(shard, m, now) || !m.hasReadableReplica()) {
                return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
            }
            long before = m.expireAtMillis == 0 ? NONE : m.expireAtMillis - now;
            boolean applied = mode != QUERY && holds(condition, before, ttlMillis);
            if (applied && mode == SET) {
                table.setDeadline(m, deadline(now, ttlMillis));
                if (!reapIfDue(shard, m, now)) { // a time to live of 0 removes it now, as Redis's EXPIRE k 0
                    recordDeadline(m);
                }
            } else if (applied) {
                applied = m.expireAtMillis != 0;
                table.setDeadline(m, 0);
                if (applied) {
                    recordDeadline(m);
                }
            }
            return KeyResult.ok(key, new Outcome(before, applied));
        });
    }

    /**
     * With failover on, has the nodes of {@code m}'s memory replicas set its new deadline in their records, and those
     * of its SSD copies report it with them, so a master that takes over keeps it (the EXPIRE answers once they have:
     * {@link MasterService#collectForgets}).
     */
    void recordDeadline(ObjectMetadata m) {
        for (ReplicaRecord r : m.replicas()) {
            r.recordDeadline(m.version, m.expireAtMillis);
        }
        tier.recordDiskDeadlines(m);
    }

    private static boolean holds(int condition, long before, long ttlMillis) {
        return switch (condition) {
            case IF_NONE -> before == NONE;
            case IF_SET -> before != NONE;
            case IF_LATER -> before != NONE && ttlMillis > before;
            case IF_SOONER -> before == NONE || ttlMillis < before;
            case IF_SET_AND_SOONER -> before != NONE && ttlMillis < before;
            default -> true;
        };
    }

    /**
     * Removes every expired object nobody asked for since its deadline; returns how many. Walks the deadlines
     * that have passed only ({@link ObjectTable#passedDeadlines}), not the table.
     */
    int sweep() {
        if (table.expiringCount() == 0) {
            return 0; // no object has a deadline (also those recovered from the nodes' records count)
        }
        long now = ticker.millis();
        int reaped = 0;
        for (ObjectTable.Deadline d : table.passedDeadlines(now)) {
            boolean gone = table.inShard(d.key(), shard -> {
                ObjectMetadata m = shard.objects.get(d.key());
                return m != null && m.isExpired(now) && reapIfDue(shard, m, now) && shard.objects.get(d.key()) != m;
            });
            if (gone) {
                reaped++;
            }
        }
        return reaped;
    }
}
