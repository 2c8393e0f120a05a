package io.tiffin.core.master;

import com.google.common.base.Utf8;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.Ticker;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The master's object records: key → {@link ObjectMetadata} in {@value MetadataShard#COUNT} shards,
 * each with its own lock, an ordered index of every key (prefix and exact queries without a scan), the
 * key count, and the counters that number versions and replicas. The one place that adds or forgets
 * an object.
 *
 * <p>Single-key work runs under one shard lock ({@link #inShard}); batch work groups its keys by shard
 * and takes each shard's lock once ({@link #forEachByShard}); scans lock one shard at a time
 * ({@link #forEachShard}). No method takes two shard locks at once.
 *
 * <p>Thread-safe: a shard and the objects in it are guarded by the shard's lock, which callers hold
 * around {@link #insert} and {@link #forget}; the key index ({@link BatchedKeyIndex}) and counters are thread-safe.
 */
final class ObjectTable {
    private final Ticker ticker;
    private final int maxKeyLength;
    private final MetadataShard[] shards = new MetadataShard[MetadataShard.COUNT];
    /** Every key, ordered. Changed under the key's shard lock. */
    private final BatchedKeyIndex keyIndex = new BatchedKeyIndex();
    /**
     * How many keys the shards hold, changed with the key index: stats, metrics and the status page read it without
     * waiting for the index's buffered changes to be applied (under its write lock, on an event loop).
     */
    private final LongAdder keys = new LongAdder();
    /** The objects with an expiry deadline, by deadline. Updated under the key's shard lock. */
    private final ConcurrentSkipListSet<Deadline> deadlines = new ConcurrentSkipListSet<>();
    /** How many objects have a deadline (the size of {@link #deadlines}, which a skip list does not keep). */
    private final AtomicLong expiringCount = new AtomicLong();
    /** Bytes of the hard-pinned objects (master.max-hard-pinned-share caps them). */
    private final AtomicLong hardPinnedBytes = new AtomicLong();
    private final AtomicLong replicaIds = new AtomicLong();
    private final AtomicLong versions = new AtomicLong();

    /**
     * @param maxKeyLength longest valid key, in chars and in bytes of UTF-8
     */
    ObjectTable(Ticker ticker, int maxKeyLength) {
        this.ticker = ticker;
        this.maxKeyLength = maxKeyLength;
        // Versions survive a master restart: start above anything a previous run can have handed out.
        versions.set(ticker.millis() << 12);
        // So do replica ids: a client's read hint from a previous run never matches a replica of this one.
        replicaIds.set(ticker.millis() << 12);
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new MetadataShard();
        }
    }

    /**
     * INVALID_KEY for an empty key or one longer than the limit (in UTF-8 bytes); OK otherwise. Every PutStart checks
     * its keys: one of at most a third of the limit in chars fits whatever its chars (three bytes at most each), and
     * only a longer one is measured, without being encoded.
     */
    ErrorCode validateKey(String key) {
        if (key == null || key.isEmpty()) {
            return ErrorCode.INVALID_KEY;
        }
        if (key.length() > maxKeyLength
                || key.length() > maxKeyLength / 3 && Utf8.encodedLength(key) > maxKeyLength) {
            return ErrorCode.INVALID_KEY;
        }
        return ErrorCode.OK;
    }

    /** The version of an object completed now. */
    long nextVersion() {
        return versions.incrementAndGet();
    }

    /** Versions and replica ids continue above these (a master that took over, past its predecessor's reservations). */
    void continueAbove(long version, long replicaId) {
        versions.accumulateAndGet(version, Math::max);
        replicaIds.accumulateAndGet(replicaId, Math::max);
    }

    /** A recovered object's version: later ones are higher. */
    void noteVersion(long version) {
        versions.accumulateAndGet(version, Math::max);
    }

    long lastVersion() {
        return versions.get();
    }

    long lastReplicaId() {
        return replicaIds.get();
    }

    /** The id of a new (memory or SSD) replica. */
    long nextReplicaId() {
        return replicaIds.incrementAndGet();
    }

    /** How many keys are held, every insert and forget that returned before the call counted. */
    long keyCount() {
        return keys.sum();
    }

    /**
     * One object's expiry deadline (master ms) in {@link #deadlines}, ordered by deadline, then key.
     *
     * <p>Thread-safe (immutable).
     */
    record Deadline(long atMillis, String key) implements Comparable<Deadline> {
        @Override
        public int compareTo(Deadline o) {
            int c = Long.compare(atMillis, o.atMillis);
            return c != 0 ? c : key.compareTo(o.key);
        }
    }

    /** How many objects have an expiry deadline (passed or not). */
    long expiringCount() {
        return expiringCount.get();
    }

    /**
     * How many objects' deadlines have passed at {@code now} though they are still in the table (not yet reclaimed:
     * held by an SSD task, or not met by a lookup or the sweep yet). Costs O(that number).
     */
    long expiredCount(long now) {
        return deadlines.headSet(new Deadline(now + 1, ""), false).size(); // keys are never empty
    }

    /** The deadlines that have passed at {@code now}, earliest first (a copy). */
    List<Deadline> passedDeadlines(long now) {
        return List.copyOf(deadlines.headSet(new Deadline(now + 1, ""), false));
    }

    /** Sets (0 = drops) the expiry deadline of {@code m}, which is in the table. Caller holds the shard lock. */
    void setDeadline(ObjectMetadata m, long atMillis) {
        dropDeadline(m);
        m.expireAtMillis = atMillis;
        addDeadline(m);
    }

    private void addDeadline(ObjectMetadata m) {
        if (m.expireAtMillis != 0 && deadlines.add(new Deadline(m.expireAtMillis, m.key))) {
            expiringCount.incrementAndGet();
        }
    }

    private void dropDeadline(ObjectMetadata m) {
        if (m.expireAtMillis != 0 && deadlines.remove(new Deadline(m.expireAtMillis, m.key))) {
            expiringCount.decrementAndGet();
        }
    }

    /** Bytes of the hard-pinned objects held. */
    long hardPinnedBytes() {
        return hardPinnedBytes.get();
    }

    /** Adds an object to its shard and the key index. Caller holds the shard lock. */
    void insert(MetadataShard shard, ObjectMetadata m) {
        insert(shard, m, false);
    }

    /**
     * As {@link #insert(MetadataShard, ObjectMetadata)}; {@code keyKept}: the key's previous object was just
     * forgotten with {@code keyStays} under the same lock hold, so the key is still in the index and the count.
     */
    void insert(MetadataShard shard, ObjectMetadata m, boolean keyKept) {
        ObjectMetadata replaced = shard.objects.put(m);
        if (!keyKept) {
            keyIndex.add(m.key);
            if (replaced == null) {
                keys.increment();
            }
        }
        if (replaced != null) {
            dropDeadline(replaced);
        }
        addDeadline(m);
        long pinned = (m.hardPinned() ? m.size() : 0)
                - (replaced != null && replaced.hardPinned() ? replaced.size() : 0);
        if (pinned != 0) {
            hardPinnedBytes.addAndGet(pinned);
        }
    }

    /**
     * Removes a key from its shard and the key index (buffers are the caller's concern). If clients may
     * still read the object through cached locations, puts of the key are refused until they cannot.
     * Caller holds the shard lock.
     */
    void forget(MetadataShard shard, String key) {
        forget(shard, key, false);
    }

    /**
     * As {@link #forget(MetadataShard, String)}; with {@code keyStays} the key stays in the index and the count
     * because the caller inserts its next object ({@link #insert(MetadataShard, ObjectMetadata, boolean)}) before
     * it lets go of the shard lock: a replacement then costs no removal from and re-insertion into the sorted
     * index (a third of a replacing put's CPU when it did), and a prefix query never misses a replaced key.
     */
    void forget(MetadataShard shard, String key, boolean keyStays) {
        ObjectMetadata gone = shard.objects.remove(key);
        if (gone != null) {
            if (!keyStays) {
                keyIndex.remove(key);
                keys.decrement();
            }
            dropDeadline(gone);
            if (gone.hardPinned()) {
                hardPinnedBytes.addAndGet(-gone.size());
            }
            if (gone.cachedUntilMillis != 0 && gone.cachedUntilMillis > ticker.millis()) {
                shard.hold(key, gone.cachedUntilMillis);
            }
        }
    }

    /** Runs {@code action} under the lock of {@code key}'s shard. */
    <T> T inShard(String key, Function<MetadataShard, T> action) {
        MetadataShard shard = shards[MetadataShard.indexOf(key)];
        shard.lock.lock();
        try {
            return action.apply(shard);
        } finally {
            shard.lock.unlock();
        }
    }

    /** What a batch does with its key at {@code index}, under the lock of that key's {@code shard}. */
    @FunctionalInterface
    interface ShardAction {
        void apply(MetadataShard shard, int index);
    }

    /**
     * Runs {@code action} for every key index, taking each shard's lock once (a null key counts as
     * shard 0's, for the action to reject).
     */
    void forEachByShard(List<String> keys, ShardAction action) {
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

    /** Runs {@code action} on every shard in turn, under its lock (one shard locked at a time). */
    void forEachShard(Consumer<MetadataShard> action) {
        for (MetadataShard shard : shards) {
            shard.lock.lock();
            try {
                action.accept(shard);
            } finally {
                shard.lock.unlock();
            }
        }
    }

    /**
     * Calls {@code action} under the shard lock for every present key matching {@code q}; returns whether
     * the calls came in key order. With {@code fastPath}, prefix and exact queries walk the ordered index
     * and lock each key's shard on its own: their matches are spread over the shards anyway, so grouping
     * them by shard would only add a sort and undo the key order. Other queries (and every query without
     * {@code fastPath}, which also runs the regex engine on every key) scan the shards.
     */
    boolean forEachMatch(KeyQuery q, boolean fastPath, BiConsumer<MetadataShard, String> action) {
        if (fastPath && (q.kind() == KeyQuery.Kind.PREFIX || q.kind() == KeyQuery.Kind.EXACT)) {
            Iterable<String> candidates = q.kind() == KeyQuery.Kind.EXACT ? List.of(q.literal())
                    : keyIndex.from(q.literal());
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
        forEachShard(shard -> {
            for (String key : shard.objects.keysCopy()) {
                if (fastPath ? q.matches(key) : q.matchesWithRegexEngine(key)) {
                    action.accept(shard, key);
                }
            }
        });
        return false;
    }

    /**
     * Complete, unexpired objects whose key starts with {@code prefix}, in key order, at most {@code limit}; does
     * not grant leases. Costs O(log n + limit).
     */
    ListedKeys listKeys(String prefix, int limit) {
        long now = ticker.millis();
        LinkedHashMap<String, Long> found = new LinkedHashMap<>();
        boolean truncated = false;
        for (String key : keyIndex.from(prefix)) {
            if (!key.startsWith(prefix)) {
                break;
            }
            MetadataShard shard = shards[MetadataShard.indexOf(key)];
            shard.lock.lock();
            try {
                ObjectMetadata m = shard.objects.get(key);
                if (m == null || m.processing() || m.isExpired(now)) {
                    continue; // an expired object is gone for every client, reclaimed or not
                }
                if (found.size() == limit) {
                    truncated = true;
                    break;
                }
                found.put(key, m.size());
            } finally {
                shard.lock.unlock();
            }
        }
        return new ListedKeys(found, truncated);
    }
}
