package io.tiffin.core.client.hotcache;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * The client's local hot cache: copies of objects this client fetched from remote nodes, kept in one
 * off-heap region split into fixed-size blocks, so that repeated reads skip the network.
 *
 * <p><b>Never stale.</b> A cached copy is served only when its version and size equal those the
 * master returned for this very read ({@link #tryRead}); otherwise it is a miss and the copy is
 * dropped. Puts and removes through this client {@link #invalidate} at once; versions catch changes made
 * by other clients.
 *
 * <p><b>No global lock on reads.</b> A read looks the key up in a concurrent map, pins the entry with a
 * reference count ({@link CacheEntry}), copies the blocks and unpins it. Blocks of an evicted or
 * invalidated entry are reused only after its last reader unpinned it, so a read never sees bytes of
 * another object. Reads record hits and misses by publishing to the ring without waiting (lossy when
 * full).
 *
 * <p><b>Asynchronous fills.</b> After a remote read the client hands the received network buffers to
 * {@link #offerFill} and returns; the cache-put Disruptor ring's single consumer (the maintenance
 * thread) asks the {@link HotCachePolicy} for admission, evicts, copies the bytes into blocks and
 * publishes the entry. A full ring drops the fill (counted). The policy is only ever called from that
 * thread.
 *
 * <p><b>Zero-copy reads and fills.</b> {@link #tryPin} hands out read-only views of a cached entry's
 * blocks, pinned until the {@link Pinned} handle is closed. {@link #reserve} asks the maintenance thread
 * for blocks (admission and eviction as for a fill) that the caller then receives an object into; its
 * {@link Reservation#commit()} publishes the entry and returns it pinned, {@link Reservation#abort()}
 * gives the blocks back. Pinned memory stays valid until the cache is closed.
 *
 * <p><b>Parts.</b> {@link BlockRegion} holds the memory, {@link BlockPool} the free blocks, {@link
 * EntryIndex} the entries and the version rules, {@link MaintenanceRing} the ring and its thread,
 * {@link HotCacheMaintenance} what that thread does, {@link GuardedPolicy} the policy's calls and
 * {@link HotCacheCounters} the counters; this class is the API and the read path.
 *
 * <p><b>Ownership.</b> This object owns the block region (its shared {@link Arena}) and the ring's
 * thread; {@link #close()} stops the ring first, then closes the arena once. Buffers passed to
 * {@link #offerFill} are owned by the cache from then on and released exactly once.
 *
 * <p>Thread-safe.
 */
public final class LocalHotCache implements AutoCloseable {
    /**
     * Largest object any cache takes: a fill arrives in Netty buffers, which hold less than 2 GiB, so a
     * larger object is read straight into the caller's memory and never cached.
     */
    public static final long MAX_ENTRY_BYTES = Integer.MAX_VALUE - 64;
    /** How long {@link #reserve} waits for the maintenance thread before it gives up. */
    private static final long RESERVE_TIMEOUT_MS = 100;

    private final BlockRegion region;
    private final int maxEntryBlocks;
    private final BlockPool pool;
    private final HotCacheCounters counters = new HotCacheCounters();
    private final EntryIndex index;
    private final MaintenanceRing ring;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param sizeBytes total cache size; at least one block
     * @param blockSize bytes per block, &gt; 0
     * @param maxEntryShare largest share of the cache one object may take, in (0, 1]
     * @param policy admission and eviction policy (called from the maintenance thread only)
     * @param ringSize slots of the cache-put ring, a power of two
     * @throws TiffinException INVALID_PARAMS if the memory cannot be reserved
     */
    public LocalHotCache(long sizeBytes, long blockSize, double maxEntryShare, HotCachePolicy policy, int ringSize) {
        this.region = new BlockRegion(sizeBytes, blockSize);
        long blocks = region.blockCount();
        this.maxEntryBlocks = (int) Math.max(1, Math.min(blocks, (long) Math.floor(blocks * maxEntryShare)));
        this.pool = new BlockPool(region.blockCount());
        this.index = new EntryIndex(counters, e -> publishInvalidate(e.key, e.keyHash));
        this.ring = new MaintenanceRing(ringSize,
                new HotCacheMaintenance(region, pool, index, new GuardedPolicy(policy), counters));
    }

    public long blockSize() {
        return region.blockSize();
    }

    public int blockCount() {
        return region.blockCount();
    }

    /** Largest object the cache takes, in bytes (at most {@link #MAX_ENTRY_BYTES}). */
    public long maxEntryBytes() {
        return maxEntryBytes(maxEntryBlocks, region.blockSize());
    }

    static long maxEntryBytes(long entryBlocks, long blockSize) {
        return Math.min(MAX_ENTRY_BYTES, entryBlocks * blockSize);
    }

    // ------------------------------------------------------------------ read path

    /** As {@link #tryRead(String, long, long, MemorySegment, boolean)}, the destination possibly in the CPU's caches. */
    public boolean tryRead(String key, long version, long size, MemorySegment destination) {
        return tryRead(key, version, size, destination, false);
    }

    /**
     * Copies the cached object into {@code destination} if a copy of exactly this version and size is
     * cached. Returns true when served; false is a miss (including a stale copy, which is dropped).
     *
     * @param aroundCaches the destination is out of the CPU's caches (one of a batch's destinations that together
     *                     exceed the last-level cache): a large copy then writes around the caches
     */
    public boolean tryRead(String key, long version, long size, MemorySegment destination, boolean aroundCaches) {
        CacheEntry e = acquireCurrent(key, version, size);
        if (e == null) {
            return false;
        }
        try {
            region.copyOut(e.blocks, size, destination, aroundCaches);
        } finally {
            e.release();
        }
        counters.hits.increment();
        recordAccess(MaintenanceRing.Kind.HIT, key);
        return true;
    }

    /**
     * Pins the cached copy of exactly this version and size and returns read-only views of its blocks
     * (in order; all but the last one block long), or null on a miss (a stale copy is dropped, as in
     * {@link #tryRead}). No byte is copied. The blocks are not reused, even if the entry is evicted or
     * invalidated meanwhile, until the handle is closed; close it promptly, since a pinned entry's
     * memory cannot serve other objects.
     */
    public Pinned tryPin(String key, long version, long size) {
        CacheEntry e = acquireCurrent(key, version, size);
        if (e == null) {
            return null;
        }
        List<MemorySegment> parts = region.slices(e.blocks, size).stream().map(MemorySegment::asReadOnly).toList();
        counters.hits.increment();
        recordAccess(MaintenanceRing.Kind.HIT, key);
        return new Pinned(e, parts);
    }

    /**
     * A cached object pinned by {@link #tryPin}: read-only views of its blocks, valid until {@link
     * #close()} (and at most until the cache is closed; afterwards access throws {@link
     * IllegalStateException}).
     *
     * <p>Thread-safe; close is idempotent.
     */
    public static final class Pinned implements AutoCloseable {
        private final CacheEntry entry;
        private final List<MemorySegment> segments;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Pinned(CacheEntry entry, List<MemorySegment> segments) {
            this.entry = entry;
            this.segments = segments;
        }

        /** The object's bytes, block by block. */
        public List<MemorySegment> segments() {
            return segments;
        }

        /** Unpins the blocks; idempotent. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                entry.release();
            }
        }
    }

    /**
     * Sets blocks aside for an object that the caller will read straight into them (zero-copy fills):
     * admission and eviction run on the maintenance thread as for {@link #offerFill}, and the caller
     * waits for its answer (at most {@value #RESERVE_TIMEOUT_MS} ms). Returns null when the object is
     * not taken (too large, not admitted, no room, ring full, closed). The caller must end the
     * reservation with exactly one {@link Reservation#commit()} or {@link Reservation#abort()}.
     */
    public Reservation reserve(String key, long version, long size) {
        PendingFill pending = requestBlocks(key, version, size);
        return pending == null ? null : pending.await();
    }

    /**
     * Asks the maintenance thread for blocks for an object the caller is about to receive into memory of
     * its own, without waiting: the caller receives the object meanwhile, then takes the blocks ({@link
     * PendingFill#await}), copies the received bytes in ({@link Reservation#copyIn}: one copy, checksummed on the
     * way, no staging buffer and no copy on the maintenance thread) and publishes or aborts them; or calls {@link
     * PendingFill#cancel}. Null when the object is not taken (too large, closed, ring full).
     */
    public PendingFill requestBlocks(String key, long version, long size) {
        if (closed.get() || !accepts(size)) {
            return null;
        }
        CompletableFuture<int[]> answer = new CompletableFuture<>();
        long keyHash = EntryIndex.hash(key);
        if (!ring.tryReserve(key, keyHash, version, size, answer)) {
            counters.droppedFills.increment();
            return null;
        }
        return new PendingFill(key, keyHash, version, size, answer);
    }

    /**
     * Blocks asked for by {@link #requestBlocks} (or {@link #reserve}), answered by the maintenance thread
     * later; ended by exactly one {@link #cancel} or {@link #await} (then the reservation's own end).
     *
     * <p>Not thread-safe: one caller's.
     */
    public final class PendingFill {
        private final String key;
        private final long keyHash;
        private final long version;
        private final long size;
        private final CompletableFuture<int[]> answer;

        private PendingFill(String key, long keyHash, long version, long size, CompletableFuture<int[]> answer) {
            this.key = key;
            this.keyHash = keyHash;
            this.version = version;
            this.size = size;
            this.answer = answer;
        }

        /**
         * The reservation, once the maintenance thread answered (at most {@value #RESERVE_TIMEOUT_MS} ms
         * from now); null when it refused or did not answer in time. Call at most once, and not after
         * {@link #cancel}; a non-null reservation must be committed, published or aborted.
         */
        public Reservation await() {
            int[] blocks;
            try {
                blocks = answer.get(RESERVE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (TimeoutException | InterruptedException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (answer.cancel(false)) {
                    counters.droppedFills.increment();
                    return null; // the maintenance thread gives the blocks back when it answers
                }
                blocks = answer.getNow(null);
            } catch (ExecutionException e) {
                return null;
            }
            return blocks == null ? null : new Reservation(key, keyHash, version, size, blocks);
        }

        /** The object was not received (or not within its lease): the blocks, if any, go back. */
        public void cancel() {
            Reservation r = await();
            if (r != null) {
                r.abort();
            }
        }
    }

    /**
     * Blocks reserved by {@link #reserve} or {@link #requestBlocks}: the caller writes the object into {@link
     * #segments()} (or {@link #copyIn copies it in}), then {@link #commit()}s (the object becomes visible to later
     * reads and the caller gets it pinned), {@link #publish()}es (visible, not pinned) or {@link #abort()}s.
     *
     * <p>Not thread-safe: one caller's.
     */
    public final class Reservation {
        private final String key;
        private final long keyHash;
        private final long version;
        private final long size;
        private final int[] blocks;
        private boolean ended;

        private Reservation(String key, long keyHash, long version, long size, int[] blocks) {
            this.key = key;
            this.keyHash = keyHash;
            this.version = version;
            this.size = size;
            this.blocks = blocks;
        }

        /** Writable views of the reserved blocks, in order; together exactly the object's size. */
        public List<MemorySegment> segments() {
            return region.slices(blocks, size);
        }

        /**
         * Copies the object, the first {@code size} bytes of {@code received}, into the reserved blocks (shared
         * with a pool task when large). With {@code checksum}, returns the CRC32C of those bytes, taken in the
         * same pass (no second read of them); else 0. The caller then publishes or aborts, as it judges the bytes.
         *
         * @throws IllegalStateException if the cache was closed meanwhile (the caller still aborts)
         */
        public int copyIn(MemorySegment received, boolean checksum) {
            if (ended) {
                throw new IllegalStateException("reservation for " + key + " already committed or aborted");
            }
            if (!checksum) {
                region.copyIn(blocks, received, size);
                return 0;
            }
            return region.copyInChecksummed(blocks, received, size);
        }

        /**
         * The CRC32C of the object written into the blocks, on two threads when large: what a fill that received
         * straight into them checks before it commits.
         */
        public int crc32c() {
            if (ended) {
                throw new IllegalStateException("reservation for " + key + " already committed or aborted");
            }
            return region.crc32c(blocks, size);
        }

        /**
         * The object has been written: publishes it to the cache (through the maintenance thread) and
         * returns it pinned for the caller, read-only.
         */
        public Pinned commit() {
            end();
            CacheEntry e = new CacheEntry(key, keyHash, version, size, blocks, pool);
            e.acquire();
            List<MemorySegment> views = segments().stream().map(MemorySegment::asReadOnly).toList();
            if (closed.get()) {
                return new Pinned(e, views); // nothing to publish to; the pinned memory lives until close()
            }
            ring.commit(e);
            return new Pinned(e, views);
        }

        /** The object has been written: publishes it to the cache, not pinned for the caller. */
        public void publish() {
            end();
            if (!closed.get()) {
                ring.commit(new CacheEntry(key, keyHash, version, size, blocks, pool));
            }
        }

        /** The object could not be written: the blocks go back to the free pool. */
        public void abort() {
            end();
            if (closed.get()) {
                return;
            }
            ring.abort(key, blocks);
        }

        private void end() {
            if (ended) {
                throw new IllegalStateException("reservation for " + key + " already committed or aborted");
            }
            ended = true;
        }
    }

    /** The entry holding exactly this version and size, acquired; or null, counted and recorded as a miss. */
    private CacheEntry acquireCurrent(String key, long version, long size) {
        CacheEntry e = index.acquire(key, version, size);
        if (e == null) {
            recordAccess(MaintenanceRing.Kind.MISS, key);
        }
        return e;
    }

    private void recordAccess(MaintenanceRing.Kind kind, String key) {
        if (closed.get()) {
            return;
        }
        if (!ring.tryRecord(kind, key)) {
            counters.droppedAccessRecords.increment();
        }
    }

    /** Whether an object of {@code size} bytes may be cached at all. */
    public boolean accepts(long size) {
        return size > 0 && size <= maxEntryBytes();
    }

    /**
     * Offers a freshly read object for caching. Takes ownership of {@code parts} (the received buffers,
     * in order, {@code size} bytes in total) in every case. Returns false when the fill was dropped
     * (full ring, closed cache or an object too large).
     */
    public boolean offerFill(String key, long version, long size, List<ByteBuf> parts) {
        if (closed.get() || !accepts(size)) {
            parts.forEach(ByteBuf::release);
            if (!closed.get()) {
                counters.rejectedFills.increment();
            }
            return false;
        }
        boolean published = ring.tryFill(key, version, size, parts);
        if (!published) {
            counters.droppedFills.increment();
            parts.forEach(ByteBuf::release);
        }
        return published;
    }

    /** Drops the cached copy of {@code key} at once (put, upsert or remove through this client). */
    public void invalidate(String key) {
        index.invalidate(key);
    }

    /** Drops every cached copy whose key matches (remove by regex, remove all). */
    public void invalidateMatching(Predicate<String> matches) {
        for (String key : index.keys()) {
            if (matches.test(key)) {
                invalidate(key);
            }
        }
    }

    /** An entry left the key map on a caller's thread: the maintenance thread retires it. */
    private void publishInvalidate(String key, long keyHash) {
        if (closed.get()) {
            return;
        }
        ring.invalidate(key, keyHash);
    }

    // ------------------------------------------------------------------ stats and lifecycle

    /** Counters, for metrics and {@code tiffin stat}. */
    public record Stats(long hits, long misses, long fills, long droppedFills, long rejectedFills, long evictions,
                        long staleRejected, long invalidations, long bytesCached, long entries, long capacityBytes) {
    }

    public Stats stats() {
        return counters.snapshot(index.bytesCached(), index.size(),
                (long) region.blockCount() * region.blockSize());
    }

    /**
     * Waits until every event published so far has been handled, then returns the number of free blocks
     * (blocks neither held by a resident entry nor pinned by a reader). For leak checks in tests.
     */
    public int freeBlocksWhenQuiet() {
        return ring.sync().join();
    }

    /** Blocks held by resident entries. */
    public int residentBlocks() {
        return index.residentBlocks();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        ring.close();
        index.clear();
        region.close();
    }
}
