package io.tiffin.api.spi.hotcache;

/**
 * Admission and eviction decisions of the client's local hot cache. The cache owns the memory and the
 * entries; the policy only decides which candidate to admit and which resident entry to evict next.
 * Entries are identified by a {@code long} key hash chosen by the cache and weighted in blocks: an
 * object of {@code n} bytes occupies {@code ceil(n / blockSize)} blocks, so one entry may span several.
 *
 * <p><b>Protocol</b>. The cache reports every read exactly once: {@link #onHit} for a resident entry,
 * {@link #onMiss} otherwise. To fill an entry it asks {@link #admit}; on {@code true} it evicts
 * {@link #victim()} (calling {@link #onRemove} for each) while the resident weight plus the new
 * entry's weight exceeds the capacity, then calls {@link #onInsert}. An entry that leaves the cache for
 * any other reason (invalidation, a stale version, a replaced value) is reported with
 * {@link #onRemove}. A cache that follows this protocol never holds more than
 * {@link #capacityBlocks()} blocks. If the cache abandons a fill after {@code admit} (for example the
 * ring dropped it), it simply does not call {@code onInsert}; the next {@code admit} supersedes it.
 * {@link PolicySimulator} is the reference driver of this protocol.
 *
 * <p><b>Threads</b>: implementations need not be thread-safe. The cache calls a policy from one thread
 * at a time (its maintenance thread, which drains recorded reads in batches), with a happens-before
 * edge between calls, and never on the read path.
 *
 * <p><b>Keys</b>: any {@code long} except {@code -1}, which is reserved for "none" (see
 * {@link #victim()}); the cache never passes it.
 *
 * <p><b>Not found</b>: {@link #onHit} and {@link #onRemove} naming a key the policy does not hold are
 * ignored. {@link #onInsert} for a key that is already resident replaces it (as if removed first).
 *
 * <p><b>Determinism</b>: for a given sequence of calls a policy makes the same decisions (no wall
 * clock, no unseeded randomness), so simulations and tests are repeatable.
 *
 * <p><b>Scan resistance</b>: KV-cache reads mix a small hot set (shared prefixes) with long runs of
 * blocks read once. A policy must keep the hot set resident through such runs: the test kit's
 * {@code HotCachePolicyContract} requires more than 90% hits on 20 hot keys in a 100-block cache when
 * half of the reads are of keys never seen again. Plain FIFO or LRU admission without a filter fail it.
 *
 * <p><b>Failures</b>: an exception from any method is logged by the cache and that call's effect is
 * skipped; the cache's own bookkeeping stays whole (a policy that keeps throwing degrades hit ratio,
 * never correctness).
 */
public interface HotCachePolicy {

    /** The name this policy is registered under, e.g. {@code lru}. */
    String name();

    /** The capacity in blocks this policy was created for; at least 1. */
    long capacityBlocks();

    /** A read of the resident entry {@code keyHash}. */
    void onHit(long keyHash);

    /**
     * A read of {@code keyHash} that the cache could not serve (not resident, or a stale copy was just
     * dropped). Feeds frequency estimates and ghost histories; changes no residency.
     */
    void onMiss(long keyHash);

    /**
     * Whether a new entry for {@code keyHash} of {@code weight} blocks should be cached. Always
     * {@code false} when {@code weight > capacityBlocks()}. After {@code true}, the following
     * {@link #victim()} calls make room for this entry.
     *
     * @throws IllegalArgumentException if {@code weight < 1}
     */
    boolean admit(long keyHash, int weight);

    /**
     * The entry {@code keyHash} of {@code weight} blocks became resident (after a successful
     * {@link #admit} and the evictions it required).
     *
     * @throws IllegalArgumentException if {@code weight < 1}
     */
    void onInsert(long keyHash, int weight);

    /** The entry {@code keyHash} left the cache: evicted, invalidated or replaced. */
    void onRemove(long keyHash);

    /**
     * The resident entry to evict next, or -1 if the policy holds none. The policy may reorganise its
     * internal queues to choose (for example promote a candidate that wins an admission duel), but
     * residency changes only when the cache calls {@link #onRemove} for the returned key, which it does
     * before asking again.
     */
    long victim();

    /** The total weight in blocks of the entries the policy holds as resident. */
    long residentBlocks();
}
