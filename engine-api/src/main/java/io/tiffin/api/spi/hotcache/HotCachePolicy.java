package io.tiffin.api.spi.hotcache;

/**
 * Admission and eviction decisions of the client's local hot cache. The cache owns the memory and the
 * entries; the policy only decides: which candidate to admit and which resident entry to evict.
 * Entries are identified by a {@code long} id chosen by the cache and weighted in blocks.
 *
 * <p><b>Threads</b>: not required to be thread-safe. The cache calls a policy from one thread at a
 * time (its maintenance thread, which drains recorded accesses in batches), never on the read path.
 *
 * <p><b>Not found</b>: calls naming an id the policy does not hold are ignored.
 */
public interface HotCachePolicy {
    /** Records a read of {@code keyHash}, resident or not (feeds frequency estimates). */
    void recordAccess(long keyHash);

    /**
     * Decides whether a new entry for {@code keyHash} of {@code weight} blocks should enter the cache,
     * given that admitting it would evict {@code victimKeyHash} (or -1 if there is room).
     */
    boolean admit(long keyHash, int weight, long victimKeyHash);

    /** The entry {@code keyHash} (weight in blocks) became resident. */
    void onInsert(long keyHash, int weight);

    /** The resident entry {@code keyHash} was read. */
    void onHit(long keyHash);

    /** The entry left the cache (evicted, invalidated or replaced). */
    void onRemove(long keyHash);

    /** The resident entry to evict next, or -1 if the policy holds none. Does not remove it. */
    long victim();
}
