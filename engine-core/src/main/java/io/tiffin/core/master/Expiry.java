package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.core.util.Ticker;
import java.util.List;

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
    /** What {@link #remainingMillis} answers for an object without a deadline. */
    static final long NONE = -1;

    private final ObjectTable table;
    private final Removal removal;
    private final Ticker ticker;
    /** Whether any object ever got a deadline: until then {@link #sweep} has nothing to look for. */
    private volatile boolean used;

    Expiry(ObjectTable table, Removal removal, Ticker ticker) {
        this.table = table;
        this.removal = removal;
        this.ticker = ticker;
    }

    /** The deadline for a time to live given at {@code now}: never 0 (which means none), never overflowing. */
    long deadline(long now, long ttlMillis) {
        used = true;
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
     * OBJECT_NOT_FOUND for a key that holds no complete object.
     */
    KeyResult<Long> expire(String key, int mode, long ttlMillis) {
        if (table.validateKey(key) != ErrorCode.OK) {
            return KeyResult.failed(key == null ? "" : key, ErrorCode.INVALID_KEY);
        }
        if (mode < QUERY || mode > PERSIST || ttlMillis < 0) {
            return KeyResult.failed(key, ErrorCode.INVALID_PARAMS);
        }
        long now = ticker.millis();
        return table.inShard(key, shard -> {
            ObjectMetadata m = shard.objects.get(key);
            if (m == null || m.processing || reapIfDue(shard, m, now) || !m.hasReadableReplica()) {
                return KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND);
            }
            long before = m.expireAtMillis == 0 ? NONE : m.expireAtMillis - now;
            if (mode == SET) {
                m.expireAtMillis = deadline(now, ttlMillis);
                reapIfDue(shard, m, now); // a time to live of 0 removes it now, as Redis's EXPIRE k 0
            } else if (mode == PERSIST) {
                m.expireAtMillis = 0;
            }
            return KeyResult.ok(key, before);
        });
    }

    /** Removes every expired object nobody asked for since its deadline; returns how many. */
    int sweep() {
        if (!used) {
            return 0;
        }
        long now = ticker.millis();
        int[] reaped = new int[1];
        table.forEachShard(shard -> {
            for (ObjectMetadata m : List.copyOf(shard.objects.values())) {
                if (m.isExpired(now) && reapIfDue(shard, m, now) && shard.objects.get(m.key) != m) {
                    reaped[0]++;
                }
            }
        });
        return reaped[0];
    }
}
