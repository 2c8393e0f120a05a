package io.tiffin.core.client.hotcache;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Which cached entry holds which key, and the version rules that keep stale bytes from ever being
 * served: a reader gets an entry only when its version and size equal those the master returned for
 * that read ({@link #acquire}); a fill or a reservation never replaces a newer copy of its key, nor a
 * resident key with the same 64-bit hash ({@link #judge}, {@link #mayInstall}).
 *
 * <p>Two maps: by key, read by every reader, and by key hash, the maintenance thread's view that the
 * policy's key hashes are resolved against. An entry leaves the key map first (a reader's stale find,
 * an invalidation, a replacement or an eviction) and is retired, its blocks returned once unpinned
 * ({@link CacheEntry}), only on the maintenance thread.
 *
 * <p>Thread-safety: {@link #acquire}, {@link #invalidate}, {@link #keys()}, {@link #size()}, {@link
 * #bytesCached()} and {@link #residentBlocks()} are thread-safe; the methods marked "maintenance thread"
 * are called by that thread only.
 */
final class EntryIndex {
    private final ConcurrentHashMap<String, CacheEntry> entries = new ConcurrentHashMap<>();
    /** Maintenance thread only. */
    private final Map<Long, CacheEntry> byHash = new HashMap<>();
    private final LongAdder bytesCached = new LongAdder();
    private final HotCacheCounters counters;
    /** Told of an entry a reader or an invalidation took out of the key map; must reach the maintenance thread. */
    private final Consumer<CacheEntry> unmapped;

    /**
     * @param counters where misses, stale finds and invalidations are counted
     * @param unmapped told of each entry a caller's thread took out of the key map, so that the
     *     maintenance thread retires it ({@link #retireUnmapped})
     */
    EntryIndex(HotCacheCounters counters, Consumer<CacheEntry> unmapped) {
        this.counters = counters;
        this.unmapped = unmapped;
    }

    /** The 64-bit hash the policy knows a key by (FNV-1a, mixed); never -1, which the policy reserves. */
    static long hash(String key) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < key.length(); i++) {
            h ^= key.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= (h >>> 33);
        h *= 0xff51afd7ed558ccdL;
        h ^= (h >>> 33);
        return h == -1 ? 0 : h;
    }

    // ------------------------------------------------------------------ any thread

    /**
     * The entry holding exactly this version and size, pinned (the caller releases it); or null, counted
     * as a miss. A copy of another version or size is stale: it is dropped from the map (and counted).
     */
    CacheEntry acquire(String key, long version, long size) {
        CacheEntry e = entries.get(key);
        if (e == null) {
            counters.misses.increment();
            return null;
        }
        if (e.version != version || e.size != size) {
            counters.staleRejected.increment();
            counters.misses.increment();
            if (entries.remove(key, e)) {
                unmapped.accept(e);
            }
            return null;
        }
        if (!e.acquire()) {
            counters.misses.increment();
            return null;
        }
        return e;
    }

    /** Drops the entry of {@code key}, if any (counted as an invalidation). */
    void invalidate(String key) {
        CacheEntry e = entries.remove(key);
        if (e != null) {
            counters.invalidations.increment();
            unmapped.accept(e);
        }
    }

    /** The keys cached now, a copy. */
    List<String> keys() {
        return List.copyOf(entries.keySet());
    }

    int size() {
        return entries.size();
    }

    /** Bytes of the objects resident now. */
    long bytesCached() {
        return bytesCached.sum();
    }

    /** Blocks held by resident entries. */
    int residentBlocks() {
        return entries.values().stream().mapToInt(e -> e.blocks.length).sum();
    }

    /** Forgets every entry, without retiring them: the cache is closing and its memory goes with it. */
    void clear() {
        entries.clear();
    }

    // ------------------------------------------------------------------ maintenance thread

    /** Whether a new copy of a key is to be taken. */
    enum Verdict {
        /** Exactly this version and size is resident already (two reads raced to fill it). */
        CACHED,
        /** A newer version of the key is resident, or another key with the same hash. */
        REFUSED,
        /** Take it (after {@link #retireResident} of an older copy). */
        TAKE
    }

    /** Maintenance thread: whether a new copy ({@code key}, {@code version}, {@code size}) is to be taken. */
    Verdict judge(String key, long keyHash, long version, long size) {
        CacheEntry current = entries.get(key);
        if (current != null && current.version == version && current.size == size) {
            return Verdict.CACHED;
        }
        CacheEntry sameHash = byHash.get(keyHash);
        if (sameHash != null && !sameHash.key.equals(key)) {
            return Verdict.REFUSED; // 64-bit hash collision: keep the resident one
        }
        if (sameHash != null && sameHash.version > version) {
            return Verdict.REFUSED; // a slow reader's older version: the newer copy stays
        }
        return Verdict.TAKE;
    }

    /**
     * Maintenance thread: whether a filled entry may become visible, that is no copy of its key of the
     * same or a newer version got there first, and no other key with its hash is resident.
     */
    boolean mayInstall(CacheEntry e) {
        CacheEntry current = entries.get(e.key);
        CacheEntry sameHash = byHash.get(e.keyHash);
        return !((current != null && current.version >= e.version) || (sameHash != null && !sameHash.key.equals(e.key)));
    }

    /**
     * Maintenance thread: retires the resident copy of {@code key} (found by its hash; an older version
     * about to be replaced). Returns whether there was one, which the policy must then forget.
     */
    boolean retireResident(String key, long keyHash) {
        CacheEntry sameHash = byHash.get(keyHash);
        if (sameHash == null) {
            return false;
        }
        entries.remove(key, sameHash);
        byHash.remove(keyHash);
        retire(sameHash);
        return true;
    }

    /** Maintenance thread: makes {@code e} the resident, visible copy of its key. */
    void install(CacheEntry e) {
        byHash.put(e.keyHash, e);
        bytesCached.add(e.size);
        entries.put(e.key, e);
    }

    /** Maintenance thread: evicts the entry the policy named; false if none is resident under that hash. */
    boolean evict(long keyHash) {
        CacheEntry v = byHash.remove(keyHash);
        if (v == null) {
            return false;
        }
        entries.remove(v.key, v);
        retire(v);
        return true;
    }

    /**
     * Maintenance thread: retires the entry of {@code key} that a caller took out of the key map
     * ({@link #acquire} found it stale, or {@link #invalidate}), unless it was replaced meanwhile.
     * Returns whether it was retired, which the policy must then forget.
     */
    boolean retireUnmapped(long keyHash, String key) {
        CacheEntry e = byHash.get(keyHash);
        if (e != null && e.key.equals(key) && entries.get(key) != e) {
            byHash.remove(keyHash);
            retire(e);
            return true;
        }
        return false;
    }

    private void retire(CacheEntry e) {
        bytesCached.add(-e.size);
        e.retire();
    }
}
