package io.tiffin.core.client.hotcache;

import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

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
 * <p><b>Ownership.</b> This object owns its shared {@link Arena} (the block region) and its ring thread;
 * {@link #close()} stops the ring first, then closes the arena once. Buffers passed to
 * {@link #offerFill} are owned by the cache from then on and released exactly once.
 *
 * <p>Thread-safe.
 */
public final class LocalHotCache implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(LocalHotCache.class);

    private enum Kind { HIT, MISS, FILL, INVALIDATE, SYNC, RESERVE, COMMIT, ABORT }

    /** A reusable ring slot. */
    private static final class Event {
        Kind kind;
        String key;
        long keyHash;
        long version;
        long size;
        List<ByteBuf> parts;
        java.util.concurrent.CompletableFuture<Integer> sync;
        /** RESERVE: answered with the reserved blocks, or null when the object is not taken. */
        java.util.concurrent.CompletableFuture<int[]> reserve;
        /** COMMIT: the filled entry to install; ABORT: its blocks go back. */
        CacheEntry entry;
        int[] blocks;

        void clear() {
            key = null;
            parts = null;
            sync = null;
            reserve = null;
            entry = null;
            blocks = null;
        }
    }

    private final long blockSize;
    private final int blockCount;
    private final int maxEntryBlocks;
    private final HotCachePolicy policy;
    private final Arena arena;
    private final MemorySegment region;
    private final ConcurrentHashMap<String, CacheEntry> entries = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<CacheEntry> reclaimed = new ConcurrentLinkedQueue<>();
    private final Disruptor<Event> disruptor;
    private final EventHandler<Event> handler = this::onEvent;
    /**
     * The ring's consumer naps this long when idle. Hit and miss records are published without waking
     * it (they wait for the next nap to end, so a read pays no thread wake-up); everything a caller
     * waits for or that frees memory (fills, reservations, commits, invalidations, syncs) wakes it.
     */
    private static final long CONSUMER_NAP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The ring's consumer thread, once started. */
    private volatile Thread consumer;

    private final RingBuffer<Event> ring;
    private final AtomicBoolean closed = new AtomicBoolean();

    // Maintenance-thread state.
    private final ArrayDeque<Integer> freeBlocks = new ArrayDeque<>();
    private final Map<Long, CacheEntry> byHash = new HashMap<>();

    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder fills = new LongAdder();
    final LongAdder droppedFills = new LongAdder();
    final LongAdder rejectedFills = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder staleRejected = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder droppedAccessRecords = new LongAdder();
    private final LongAdder bytesCached = new LongAdder();

    /**
     * @param sizeBytes total cache size; at least one block
     * @param blockSize bytes per block, &gt; 0
     * @param maxEntryShare largest share of the cache one object may take, in (0, 1]
     * @param policy admission and eviction policy (called from the maintenance thread only)
     * @param ringSize slots of the cache-put ring, a power of two
     * @throws TiffinException INVALID_PARAMS if the memory cannot be reserved
     */
    public LocalHotCache(long sizeBytes, long blockSize, double maxEntryShare, HotCachePolicy policy, int ringSize) {
        if (blockSize <= 0 || sizeBytes < blockSize) {
            throw new IllegalArgumentException("hotcache.size = " + sizeBytes + ", hotcache.block-size = " + blockSize
                    + " (expected: block size > 0 and size >= one block)");
        }
        long blocks = sizeBytes / blockSize;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("hotcache.size / hotcache.block-size = " + blocks
                    + " blocks (expected: at most " + Integer.MAX_VALUE + "); use larger blocks");
        }
        this.blockSize = blockSize;
        this.blockCount = (int) blocks;
        this.maxEntryBlocks = (int) Math.max(1, Math.min(blocks, (long) Math.floor(blocks * maxEntryShare)));
        this.policy = policy;
        this.arena = Arena.ofShared();
        try {
            this.region = arena.allocate(blockCount * blockSize, 4096);
        } catch (OutOfMemoryError | IllegalArgumentException e) {
            arena.close();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "hotcache.size = " + sizeBytes
                    + ": cannot reserve that much off-heap memory for the hot cache (" + e.getMessage()
                    + "); lower hotcache.size or give the JVM more memory", e);
        }
        for (int i = 0; i < blockCount; i++) {
            freeBlocks.add(i);
        }
        this.disruptor = new Disruptor<>(Event::new, ringSize, r -> {
            Thread t = new Thread(r, "tiffin-hotcache-fill");
            consumer = t;
            t.setDaemon(true);
            return t;
        }, ProducerType.MULTI, new SleepingWaitStrategy(0, CONSUMER_NAP_NANOS));
        disruptor.handleEventsWith(handler);
        disruptor.setDefaultExceptionHandler(new ExceptionHandler<>() {
            @Override
            public void handleEventException(Throwable ex, long sequence, Event event) {
                LOG.error("Hot cache maintenance failed on a {} event for {}; the event is dropped", event.kind,
                        event.key, ex);
                releaseParts(event);
                event.clear();
            }

            @Override
            public void handleOnStartException(Throwable ex) {
                LOG.error("Hot cache maintenance thread failed to start", ex);
            }

            @Override
            public void handleOnShutdownException(Throwable ex) {
                LOG.warn("Hot cache maintenance thread failed to stop cleanly", ex);
            }
        });
        this.ring = disruptor.start();
    }

    public long blockSize() {
        return blockSize;
    }

    public int blockCount() {
        return blockCount;
    }

    /**
     * Largest object any cache takes: a fill arrives in Netty buffers, which hold less than 2 GiB, so a
     * larger object is read straight into the caller's memory and never cached.
     */
    public static final long MAX_ENTRY_BYTES = Integer.MAX_VALUE - 64;

    /** Largest object the cache takes, in bytes (at most {@link #MAX_ENTRY_BYTES}). */
    public long maxEntryBytes() {
        return maxEntryBytes(maxEntryBlocks, blockSize);
    }

    static long maxEntryBytes(long entryBlocks, long blockSize) {
        return Math.min(MAX_ENTRY_BYTES, entryBlocks * blockSize);
    }

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

    // ------------------------------------------------------------------ read path

    /**
     * Copies the cached object into {@code destination} if a copy of exactly this version and size is
     * cached. Returns true when served; false is a miss (including a stale copy, which is dropped).
     */
    public boolean tryRead(String key, long version, long size, MemorySegment destination) {
        CacheEntry e = acquireCurrent(key, version, size);
        if (e == null) {
            return false;
        }
        try {
            long off = 0;
            for (int block : e.blocks) {
                long len = Math.min(blockSize, size - off);
                MemorySegment.copy(region, (long) block * blockSize, destination, off, len);
                off += len;
            }
        } finally {
            e.release();
        }
        hits.increment();
        recordAccess(Kind.HIT, key);
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
        List<MemorySegment> parts = new ArrayList<>(e.blocks.length);
        long off = 0;
        for (int block : e.blocks) {
            long len = Math.min(blockSize, size - off);
            parts.add(region.asSlice((long) block * blockSize, len).asReadOnly());
            off += len;
        }
        hits.increment();
        recordAccess(Kind.HIT, key);
        return new Pinned(e, List.copyOf(parts));
    }

    /**
     * A cached object pinned by {@link #tryPin}: read-only views of its blocks, valid until {@link
     * #close()} (and at most until the cache is closed; afterwards access throws {@link
     * IllegalStateException}). Thread-safe; close is idempotent.
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

    /** How long {@link #reserve} waits for the maintenance thread before it gives up. */
    private static final long RESERVE_TIMEOUT_MS = 100;

    /**
     * Sets blocks aside for an object that the caller will read straight into them (zero-copy fills):
     * admission and eviction run on the maintenance thread as for {@link #offerFill}, and the caller
     * waits for its answer (at most {@value #RESERVE_TIMEOUT_MS} ms). Returns null when the object is
     * not taken (too large, not admitted, no room, ring full, closed). The caller must end the
     * reservation with exactly one {@link Reservation#commit()} or {@link Reservation#abort()}.
     */
    public Reservation reserve(String key, long version, long size) {
        if (closed.get() || !accepts(size)) {
            return null;
        }
        java.util.concurrent.CompletableFuture<int[]> answer = new java.util.concurrent.CompletableFuture<>();
        long keyHash = hash(key);
        boolean published = ring.tryPublishEvent((ev, seq, k, a) -> {
            ev.kind = Kind.RESERVE;
            ev.key = k;
            ev.keyHash = keyHash;
            ev.version = version;
            ev.size = size;
            ev.parts = null;
            ev.reserve = a;
        }, key, answer);
        wakeConsumer();
        if (!published) {
            droppedFills.increment();
            return null;
        }
        int[] blocks;
        try {
            blocks = answer.get(RESERVE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            if (answer.cancel(false)) {
                droppedFills.increment();
                return null; // the maintenance thread gives the blocks back when it answers
            }
            blocks = answer.getNow(null);
        } catch (java.util.concurrent.ExecutionException e) {
            return null;
        }
        return blocks == null ? null : new Reservation(key, keyHash, version, size, blocks);
    }

    /**
     * Blocks reserved by {@link #reserve}: the caller writes the object into {@link #segments()}, then
     * {@link #commit()}s (the object becomes visible to later reads and the caller gets it pinned) or
     * {@link #abort()}s. Not thread-safe: one caller's.
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
            List<MemorySegment> parts = new ArrayList<>(blocks.length);
            long off = 0;
            for (int block : blocks) {
                long len = Math.min(blockSize, size - off);
                parts.add(region.asSlice((long) block * blockSize, len));
                off += len;
            }
            return parts;
        }

        /**
         * The object has been written: publishes it to the cache (through the maintenance thread) and
         * returns it pinned for the caller, read-only.
         */
        public Pinned commit() {
            end();
            CacheEntry e = new CacheEntry(key, keyHash, version, size, blocks, LocalHotCache.this);
            e.acquire();
            List<MemorySegment> views = segments().stream().map(MemorySegment::asReadOnly).toList();
            if (closed.get()) {
                return new Pinned(e, views); // nothing to publish to; the pinned memory lives until close()
            }
            ring.publishEvent((ev, seq, entry) -> {
                ev.kind = Kind.COMMIT;
                ev.key = entry.key;
                ev.keyHash = entry.keyHash;
                ev.parts = null;
                ev.entry = entry;
            }, e);
            wakeConsumer();
            return new Pinned(e, views);
        }

        /** The object could not be written: the blocks go back to the free pool. */
        public void abort() {
            end();
            if (closed.get()) {
                return;
            }
            ring.publishEvent((ev, seq, b) -> {
                ev.kind = Kind.ABORT;
                ev.key = key;
                ev.parts = null;
                ev.blocks = b;
            }, blocks);
            wakeConsumer();
        }

        private void end() {
            if (ended) {
                throw new IllegalStateException("reservation for " + key + " already committed or aborted");
            }
            ended = true;
        }
    }

    /** The entry holding exactly this version and size, acquired; or null, counted as a miss. */
    private CacheEntry acquireCurrent(String key, long version, long size) {
        CacheEntry e = entries.get(key);
        if (e == null) {
            recordAccess(Kind.MISS, key);
            misses.increment();
            return null;
        }
        if (e.version != version || e.size != size) {
            staleRejected.increment();
            misses.increment();
            if (entries.remove(key, e)) {
                publishInvalidate(key, e.keyHash);
            }
            recordAccess(Kind.MISS, key);
            return null;
        }
        if (!e.acquire()) {
            misses.increment();
            recordAccess(Kind.MISS, key);
            return null;
        }
        return e;
    }

    private void recordAccess(Kind kind, String key) {
        if (closed.get()) {
            return;
        }
        boolean published = ring.tryPublishEvent((ev, seq, k, kd) -> {
            ev.kind = kd;
            ev.key = k;
            ev.keyHash = hash(k);
            ev.parts = null;
        }, key, kind);
        if (!published) {
            droppedAccessRecords.increment();
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
                rejectedFills.increment();
            }
            return false;
        }
        boolean published = ring.tryPublishEvent((ev, seq, k, p) -> {
            ev.kind = Kind.FILL;
            ev.key = k;
            ev.keyHash = hash(k);
            ev.version = version;
            ev.size = size;
            ev.parts = p;
        }, key, parts);
        wakeConsumer();
        if (!published) {
            droppedFills.increment();
            parts.forEach(ByteBuf::release);
        }
        return published;
    }

    /** Drops the cached copy of {@code key} at once (put, upsert or remove through this client). */
    public void invalidate(String key) {
        CacheEntry e = entries.remove(key);
        if (e != null) {
            invalidations.increment();
            publishInvalidate(key, e.keyHash);
        }
    }

    /** Drops every cached copy whose key matches (remove by regex, remove all). */
    public void invalidateMatching(java.util.function.Predicate<String> matches) {
        for (String key : List.copyOf(entries.keySet())) {
            if (matches.test(key)) {
                invalidate(key);
            }
        }
    }

    private void publishInvalidate(String key, long keyHash) {
        if (closed.get()) {
            return;
        }
        // Must not be lost: the entry's blocks come back only through the maintenance thread.
        ring.publishEvent((ev, seq, k) -> {
            ev.kind = Kind.INVALIDATE;
            ev.key = k;
            ev.keyHash = keyHash;
            ev.parts = null;
        }, key);
        wakeConsumer();
    }

    /** Wakes the ring's consumer for an event someone waits for. */
    private void wakeConsumer() {
        Thread t = consumer;
        if (t != null) {
            java.util.concurrent.locks.LockSupport.unpark(t);
        }
    }

    /** Called by the last reader of a retired entry, or by the retiring thread. */
    void reclaim(CacheEntry e) {
        reclaimed.add(e);
    }

    // ------------------------------------------------------------------ maintenance thread

    private void onEvent(Event ev, long sequence, boolean endOfBatch) {
        try {
            switch (ev.kind) {
                case HIT -> policyCall("onHit", () -> policy.onHit(ev.keyHash));
                case MISS -> policyCall("onMiss", () -> policy.onMiss(ev.keyHash));
                case INVALIDATE -> dropFromPolicy(ev.keyHash, ev.key);
                case FILL -> fill(ev);
                case RESERVE -> {
                    int[] blocks = takeBlocks(ev);
                    if (!ev.reserve.complete(blocks) && blocks != null) {
                        giveBack(blocks); // the reserver gave up waiting
                    }
                }
                case COMMIT -> install(ev.entry);
                case ABORT -> giveBack(ev.blocks);
                case SYNC -> {
                    drainReclaimed();
                    ev.sync.complete(freeBlocks.size());
                }
            }
        } finally {
            releaseParts(ev);
            ev.clear();
        }
    }

    private static void releaseParts(Event ev) {
        if (ev.parts != null) {
            ev.parts.forEach(ByteBuf::release);
            ev.parts = null;
        }
    }

    /** An entry left the map (invalidated or stale): retire it and tell the policy. */
    private void dropFromPolicy(long keyHash, String key) {
        CacheEntry e = byHash.get(keyHash);
        if (e != null && e.key.equals(key) && entries.get(key) != e) {
            byHash.remove(keyHash);
            retire(e);
            policyCall("onRemove", () -> policy.onRemove(keyHash));
        }
    }

    /**
     * Runs a call of the policy, which is plugin code. The cache's own bookkeeping is done before every
     * such call, so a failure leaves it whole: it is logged (the first, then every 1000th) and the
     * maintenance goes on.
     */
    private void policyCall(String what, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            policyFailed(what, e);
        }
    }

    private void policyFailed(String what, RuntimeException e) {
        long n = ++policyFailures;
        if (n == 1 || n % 1000 == 0) {
            LOG.warn("Hot cache policy {} failed in {} ({} failures so far); the cache goes on without that call",
                    policy.getClass().getName(), what, n, e);
        }
    }

    /** Policy calls that failed (maintenance thread only). */
    private long policyFailures;

    private void retire(CacheEntry e) {
        bytesCached.add(-e.size);
        e.retire();
    }

    private void drainReclaimed() {
        CacheEntry e;
        while ((e = reclaimed.poll()) != null) {
            for (int b : e.blocks) {
                freeBlocks.add(b);
            }
        }
    }

    private void fill(Event ev) {
        int[] blocks = takeBlocks(ev);
        if (blocks == null) {
            return;
        }
        try {
            copyInto(blocks, ev.parts, ev.size);
        } catch (RuntimeException e) {
            giveBack(blocks); // a short fill: the blocks were never anyone's
            throw e;
        }
        install(new CacheEntry(ev.key, ev.keyHash, ev.version, ev.size, blocks, this));
    }

    /**
     * Admission and room for the object of {@code ev}: null when it is already cached, collides, is not
     * admitted or no blocks can be freed; else the blocks, taken from the free pool.
     */
    private int[] takeBlocks(Event ev) {
        int weight = (int) ((ev.size + blockSize - 1) / blockSize);
        CacheEntry current = entries.get(ev.key);
        if (current != null && current.version == ev.version && current.size == ev.size) {
            return null; // already cached (two reads raced to fill it)
        }
        CacheEntry sameHash = byHash.get(ev.keyHash);
        if (sameHash != null && !sameHash.key.equals(ev.key)) {
            rejectedFills.increment(); // 64-bit hash collision: keep the resident one
            return null;
        }
        if (sameHash != null && sameHash.version > ev.version) {
            rejectedFills.increment(); // a slow reader's older version: the newer copy stays
            return null;
        }
        if (sameHash != null) {
            // An older version of this key: it goes first.
            entries.remove(ev.key, sameHash);
            byHash.remove(ev.keyHash);
            retire(sameHash);
            policyCall("onRemove", () -> policy.onRemove(ev.keyHash));
        }
        boolean admitted;
        try {
            admitted = policy.admit(ev.keyHash, weight);
        } catch (RuntimeException e) {
            policyFailed("admit", e);
            admitted = false;
        }
        if (!admitted) {
            rejectedFills.increment();
            return null;
        }
        drainReclaimed();
        while (freeBlocks.size() < weight) {
            long victim;
            try {
                victim = policy.victim();
            } catch (RuntimeException e) {
                policyFailed("victim", e);
                victim = -1;
            }
            if (victim == -1) {
                break;
            }
            CacheEntry v = byHash.remove(victim);
            if (v != null) {
                entries.remove(v.key, v);
                retire(v);
                evictions.increment();
            }
            long gone = victim;
            policyCall("onRemove", () -> policy.onRemove(gone));
            drainReclaimed();
        }
        if (freeBlocks.size() < weight) {
            droppedFills.increment(); // blocks still pinned by readers
            return null;
        }
        int[] blocks = new int[weight];
        for (int i = 0; i < weight; i++) {
            blocks[i] = freeBlocks.poll();
        }
        return blocks;
    }

    /** Makes a filled entry visible, unless another copy of the key got there first. */
    private void install(CacheEntry e) {
        CacheEntry current = entries.get(e.key);
        CacheEntry sameHash = byHash.get(e.keyHash);
        if ((current != null && current.version >= e.version) || (sameHash != null && !sameHash.key.equals(e.key))) {
            e.retire(); // never visible: its blocks come back once its reserver unpins it
            return;
        }
        if (sameHash != null) {
            entries.remove(e.key, sameHash);
            byHash.remove(e.keyHash);
            retire(sameHash);
            policyCall("onRemove", () -> policy.onRemove(e.keyHash));
        }
        try {
            policy.onInsert(e.keyHash, e.blocks.length);
        } catch (RuntimeException ex) {
            policyFailed("onInsert", ex);
            e.retire(); // a copy the policy does not know could never be evicted: not kept
            return;
        }
        byHash.put(e.keyHash, e);
        bytesCached.add(e.size);
        entries.put(e.key, e);
        fills.increment();
    }

    private void giveBack(int[] blocks) {
        for (int b : blocks) {
            freeBlocks.add(b);
        }
    }

    private void copyInto(int[] blocks, List<ByteBuf> parts, long size) {
        int blockIndex = 0;
        long inBlock = 0;
        long copied = 0;
        for (ByteBuf part : parts) {
            int readerIndex = part.readerIndex();
            int remaining = part.readableBytes();
            while (remaining > 0 && copied < size) {
                int n = (int) Math.min(remaining, blockSize - inBlock);
                MemorySegment dst = region.asSlice((long) blocks[blockIndex] * blockSize + inBlock, n);
                part.getBytes(readerIndex, dst.asByteBuffer());
                readerIndex += n;
                remaining -= n;
                inBlock += n;
                copied += n;
                if (inBlock == blockSize) {
                    blockIndex++;
                    inBlock = 0;
                }
            }
        }
        if (copied != size) {
            throw new IllegalStateException("fill carried " + copied + " bytes for an object of " + size);
        }
    }

    // ------------------------------------------------------------------ stats and lifecycle

    /** Counters, for metrics and {@code tiffin stat}. */
    public record Stats(long hits, long misses, long fills, long droppedFills, long rejectedFills, long evictions,
                        long staleRejected, long invalidations, long bytesCached, long entries, long capacityBytes) {
    }

    public Stats stats() {
        return new Stats(hits.sum(), misses.sum(), fills.sum(), droppedFills.sum(), rejectedFills.sum(),
                evictions.sum(), staleRejected.sum(), invalidations.sum(), bytesCached.sum(), entries.size(),
                (long) blockCount * blockSize);
    }

    /**
     * Waits until every event published so far has been handled, then returns the number of free blocks
     * (blocks neither held by a resident entry nor pinned by a reader). For leak checks in tests.
     */
    public int freeBlocksWhenQuiet() {
        java.util.concurrent.CompletableFuture<Integer> f = new java.util.concurrent.CompletableFuture<>();
        ring.publishEvent((ev, seq, fut) -> {
            ev.kind = Kind.SYNC;
            ev.key = "";
            ev.sync = fut;
        }, f);
        wakeConsumer();
        return f.join();
    }

    /** Blocks held by resident entries. */
    public int residentBlocks() {
        return entries.values().stream().mapToInt(e -> e.blocks.length).sum();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            disruptor.shutdown(5, TimeUnit.SECONDS);
        } catch (com.lmax.disruptor.TimeoutException e) {
            LOG.warn("Hot cache ring did not drain within 5 s at close");
            disruptor.halt();
        }
        // Fills published after the last handled event (racing with close) still own buffers.
        for (long seq = disruptor.getSequenceValueFor(handler) + 1; seq <= ring.getCursor(); seq++) {
            releaseParts(ring.get(seq));
        }
        entries.clear();
        arena.close();
    }
}
