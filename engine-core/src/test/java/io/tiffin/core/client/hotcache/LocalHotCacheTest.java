package io.tiffin.core.client.hotcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.core.plugin.PluginRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class LocalHotCacheTest {
    private static final PluginRegistry PLUGINS = PluginRegistry.classPathOnly();
    private static final long BLOCK = 4096;

    @AfterAll
    static void closePlugins() {
        PLUGINS.close();
    }

    private static HotCachePolicy policy(String name, long blocks) {
        return PLUGINS.hotCachePolicy(name).create(blocks);
    }

    /** The bytes of version {@code v} of {@code key}. */
    static byte[] content(String key, long version, int size) {
        byte[] b = new byte[size];
        new SplittableRandom(key.hashCode() * 31L + version).nextBytes(b);
        return b;
    }

    /** Splits bytes into network-like buffers of at most {@code slice} bytes. */
    static List<ByteBuf> parts(byte[] bytes, int slice) {
        List<ByteBuf> out = new ArrayList<>();
        for (int off = 0; off < bytes.length; off += slice) {
            ByteBuf b = Unpooled.directBuffer(Math.min(slice, bytes.length - off));
            b.writeBytes(bytes, off, Math.min(slice, bytes.length - off));
            out.add(b);
        }
        return out;
    }

    private static byte[] read(LocalHotCache cache, String key, long version, int size) {
        byte[] out = new byte[size];
        return cache.tryRead(key, version, size, MemorySegment.ofArray(out)) ? out : null;
    }

    @Test
    void servesOnlyTheVersionAndSizeItHolds() {
        try (LocalHotCache cache = new LocalHotCache(64 * BLOCK, BLOCK, 0.5, policy("lru", 64), 1024)) {
            byte[] v1 = content("k", 1, 10_000); // spans three blocks
            assertThat(read(cache, "k", 1, v1.length)).isNull();
            cache.offerFill("k", 1, v1.length, parts(v1, 3000));
            cache.freeBlocksWhenQuiet();
            assertThat(read(cache, "k", 1, v1.length)).isEqualTo(v1);
            assertThat(read(cache, "k", 2, v1.length)).as("newer version at the master").isNull();
            assertThat(cache.stats().staleRejected()).isEqualTo(1);
            assertThat(read(cache, "k", 1, v1.length)).as("the stale copy was dropped").isNull();
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(64);
        }
    }

    @Test
    void invalidateDropsAtOnceAndTooLargeObjectsAreNotCached() {
        try (LocalHotCache cache = new LocalHotCache(16 * BLOCK, BLOCK, 0.25, policy("lru", 16), 1024)) {
            byte[] v = content("a", 7, 5000);
            cache.offerFill("a", 7, v.length, parts(v, 4096));
            cache.freeBlocksWhenQuiet();
            cache.invalidate("a");
            assertThat(read(cache, "a", 7, v.length)).isNull();
            assertThat(cache.accepts(4 * BLOCK)).isTrue();
            assertThat(cache.accepts(4 * BLOCK + 1)).isFalse();
            List<ByteBuf> big = parts(content("b", 1, (int) (5 * BLOCK)), 4096);
            assertThat(cache.offerFill("b", 1, 5 * BLOCK, big)).isFalse();
            assertThat(big).allMatch(b -> b.refCnt() == 0);
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(16);
        }
    }

    /** An LRU policy whose every call throws once armed for it: a plugin with a bug. */
    private static class FlakyPolicy implements HotCachePolicy {
        private final HotCachePolicy lru;
        final java.util.Set<String> failing = ConcurrentHashMap.newKeySet();

        FlakyPolicy(long blocks) {
            lru = policy("lru", blocks);
        }

        private void maybeFail(String call) {
            if (failing.remove(call)) {
                throw new IllegalStateException("a bug in the policy's " + call);
            }
        }

        @Override public String name() { return "flaky"; }
        @Override public long capacityBlocks() { return lru.capacityBlocks(); }
        @Override public void onHit(long k) { lru.onHit(k); maybeFail("onHit"); }
        @Override public void onMiss(long k) { lru.onMiss(k); maybeFail("onMiss"); }
        @Override public boolean admit(long k, int w) { maybeFail("admit"); return lru.admit(k, w); }
        @Override public void onInsert(long k, int w) { maybeFail("onInsert"); lru.onInsert(k, w); }
        @Override public void onRemove(long k) { lru.onRemove(k); maybeFail("onRemove"); }
        @Override public long victim() { maybeFail("victim"); return lru.victim(); }
        @Override public long residentBlocks() { return lru.residentBlocks(); }
    }

    /** A failing policy call costs at most that call's effect: no block is lost and the cache goes on. */
    @Test
    void aPolicyThatThrowsLosesNoBlocks() {
        FlakyPolicy flaky = new FlakyPolicy(4);
        try (LocalHotCache cache = new LocalHotCache(4 * BLOCK, BLOCK, 1.0, flaky, 64)) {
            for (String call : List.of("onRemove", "victim", "admit", "onInsert", "onHit")) {
                cache.offerFill("a", 1, 4 * BLOCK, parts(content("a", 1, (int) (4 * BLOCK)), 4096));
                cache.freeBlocksWhenQuiet();
                flaky.failing.add(call);
                // b needs a's blocks: evicting a calls victim and onRemove; b's fill calls admit and onInsert
                cache.offerFill("b", 1, BLOCK, parts(content("b", 1, (int) BLOCK), 4096));
                cache.freeBlocksWhenQuiet();
                try (Arena arena = Arena.ofConfined()) {
                    cache.tryRead("b", 1, BLOCK, arena.allocate(BLOCK));
                }
                cache.invalidate("a");
                cache.invalidate("b");
                assertThat(cache.freeBlocksWhenQuiet()).as("after a failing %s", call).isEqualTo(4);
                flaky.failing.clear();
            }
        }
    }

    /**
     * A policy that keeps naming a victim the cache does not hold (a plugin breaking its contract) does not spin the
     * maintenance thread: the fill is dropped and the cache goes on (the thread ran at 100% of a core for good).
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aPolicyNamingVictimsTheCacheDoesNotHoldDropsTheFillInsteadOfSpinning() {
        FlakyPolicy stray = new FlakyPolicy(4) {
            @Override public long victim() { return 42; }
            @Override public void onRemove(long k) { }
        };
        try (LocalHotCache cache = new LocalHotCache(4 * BLOCK, BLOCK, 1.0, stray, 64)) {
            assertThat(cache.offerFill("a", 1, 4 * BLOCK, parts(content("a", 1, (int) (4 * BLOCK)), 4096))).isTrue();
            assertThat(cache.freeBlocksWhenQuiet()).isZero();
            cache.offerFill("b", 1, BLOCK, parts(content("b", 1, (int) BLOCK), 4096)); // no room: victims are strays
            assertThat(cache.freeBlocksWhenQuiet()).as("returns: the maintenance thread is not stuck").isZero();
            try (Arena arena = Arena.ofConfined()) {
                assertThat(cache.tryRead("a", 1, 4 * BLOCK, arena.allocate(4 * BLOCK))).isTrue();
            }
        }
    }

    /** A fill whose buffers carry fewer bytes than announced is dropped, logged with its key; its blocks come back. */
    @Test
    void aShortFillGivesItsBlocksBack() {
        List<String> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        var logger = (org.apache.logging.log4j.core.Logger) org.apache.logging.log4j.LogManager.getLogger(
                LocalHotCache.class);
        var appender = new org.apache.logging.log4j.core.appender.AbstractAppender("short-fill", null, null, true,
                org.apache.logging.log4j.core.config.Property.EMPTY_ARRAY) {
            @Override
            public void append(org.apache.logging.log4j.core.LogEvent event) {
                errors.add(event.getMessage().getFormattedMessage());
            }
        };
        appender.start();
        logger.addAppender(appender);
        try (LocalHotCache cache = new LocalHotCache(8 * BLOCK, BLOCK, 1.0, policy("lru", 8), 64);
             Arena arena = Arena.ofConfined()) {
            cache.offerFill("short", 1, 3 * BLOCK, parts(content("short", 1, (int) (2 * BLOCK)), 4096));
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(8);
            assertThat(cache.tryRead("short", 1, 3 * BLOCK, arena.allocate(3 * BLOCK))).isFalse();
        } finally {
            logger.removeAppender(appender);
        }
        assertThat(errors)
                .containsExactly("Hot cache maintenance failed on a FILL event for short; the event is dropped");
    }

    /** A slow reader's fill of an older version leaves the newer cached copy alone. */
    @Test
    void aLateFillOfAnOlderVersionKeepsTheNewerCopy() {
        try (LocalHotCache cache = new LocalHotCache(16 * BLOCK, BLOCK, 1.0, policy("lru", 16), 64);
             Arena arena = Arena.ofConfined()) {
            cache.offerFill("k", 2, 100, parts(content("k", 2, 100), 4096));
            cache.freeBlocksWhenQuiet();
            cache.offerFill("k", 1, 100, parts(content("k", 1, 100), 4096));
            cache.freeBlocksWhenQuiet();
            assertThat(cache.tryRead("k", 2, 100, arena.allocate(100))).as("v2 still cached").isTrue();
        }
    }

    @Test
    void noCacheTakesAnObjectOf2GiBOrMore() {
        // a 4 GiB cache at share 0.5 would otherwise take 2 GiB objects, which no fill buffer can hold
        assertThat(LocalHotCache.maxEntryBytes(2, 1L << 30)).isEqualTo(LocalHotCache.MAX_ENTRY_BYTES);
        assertThat(LocalHotCache.MAX_ENTRY_BYTES).isLessThan(Integer.MAX_VALUE);
        assertThat(LocalHotCache.maxEntryBytes(4, BLOCK)).isEqualTo(4 * BLOCK);
    }

    private static byte[] bytesOf(List<MemorySegment> segments) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (MemorySegment s : segments) {
            out.writeBytes(s.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }
        return out.toByteArray();
    }

    @Test
    void aPinnedCopyKeepsItsBytesThroughInvalidationAndEvictionUntilClosed() {
        try (LocalHotCache cache = new LocalHotCache(4 * BLOCK, BLOCK, 1.0, policy("lru", 4), 1024)) {
            byte[] v1 = content("p", 1, (int) (2 * BLOCK + 100)); // three blocks
            cache.offerFill("p", 1, v1.length, parts(v1, 4096));
            cache.freeBlocksWhenQuiet();
            assertThat(cache.tryPin("p", 2, v1.length)).as("other version").isNull();
            cache.offerFill("p", 1, v1.length, parts(v1, 4096));
            cache.freeBlocksWhenQuiet();
            LocalHotCache.Pinned pinned = cache.tryPin("p", 1, v1.length);
            assertThat(pinned).isNotNull();
            assertThat(pinned.segments()).hasSize(3).allMatch(MemorySegment::isReadOnly);
            cache.invalidate("p");
            // the cache is full of other objects now, but the pinned blocks are not reused
            for (int i = 0; i < 8; i++) {
                byte[] other = content("o" + i, 1, (int) BLOCK);
                cache.offerFill("o" + i, 1, other.length, parts(other, 4096));
            }
            assertThat(cache.freeBlocksWhenQuiet()).isZero();
            assertThat(cache.residentBlocks()).isLessThanOrEqualTo(1);
            assertThat(bytesOf(pinned.segments())).isEqualTo(v1);
            pinned.close();
            pinned.close(); // idempotent
            assertThat(cache.freeBlocksWhenQuiet() + cache.residentBlocks()).isEqualTo(4);
        }
    }

    @Test
    void aReservationReadInPlaceBecomesTheCachedCopyOrGoesBackOnAbort() {
        try (LocalHotCache cache = new LocalHotCache(8 * BLOCK, BLOCK, 1.0, policy("lru", 8), 1024)) {
            byte[] v = content("r", 3, (int) (BLOCK + 10));
            LocalHotCache.Reservation r = cache.reserve("r", 3, v.length);
            assertThat(r).isNotNull();
            List<MemorySegment> pieces = r.segments();
            assertThat(pieces.stream().mapToLong(MemorySegment::byteSize).sum()).isEqualTo(v.length);
            long off = 0;
            for (MemorySegment piece : pieces) {
                MemorySegment.copy(MemorySegment.ofArray(v), off, piece, 0, piece.byteSize());
                off += piece.byteSize();
            }
            assertThat(read(cache, "r", 3, v.length)).as("invisible before commit").isNull();
            LocalHotCache.Pinned pinned = r.commit();
            assertThatThrownBy(r::abort).isInstanceOf(IllegalStateException.class);
            assertThat(bytesOf(pinned.segments())).isEqualTo(v);
            pinned.close();
            cache.freeBlocksWhenQuiet();
            assertThat(read(cache, "r", 3, v.length)).isEqualTo(v);
            assertThat(cache.stats().fills()).isEqualTo(1);

            LocalHotCache.Reservation failed = cache.reserve("s", 1, 3 * BLOCK);
            assertThat(failed).isNotNull();
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(8 - 2 - 3);
            failed.abort();
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(8 - 2);
            assertThat(read(cache, "s", 1, (int) (3 * BLOCK))).isNull();
            assertThat(cache.reserve("huge", 1, 9 * BLOCK)).as("larger than the cache").isNull();
        }
    }

    @Test
    void aCommitThatLostTheRaceToAnotherFillLeavesNoLeak() {
        try (LocalHotCache cache = new LocalHotCache(8 * BLOCK, BLOCK, 1.0, policy("lru", 8), 1024)) {
            byte[] v = content("x", 5, (int) BLOCK);
            LocalHotCache.Reservation r = cache.reserve("x", 5, v.length);
            cache.offerFill("x", 5, v.length, parts(v, 4096)); // an ordinary fill gets there first
            cache.freeBlocksWhenQuiet();
            MemorySegment.copy(MemorySegment.ofArray(v), 0, r.segments().getFirst(), 0, v.length);
            LocalHotCache.Pinned pinned = r.commit();
            assertThat(bytesOf(pinned.segments())).isEqualTo(v);
            pinned.close();
            assertThat(cache.freeBlocksWhenQuiet()).isEqualTo(7);
            assertThat(cache.residentBlocks()).isEqualTo(1);
            assertThat(read(cache, "x", 5, v.length)).isEqualTo(v);
        }
    }

    @Test
    void evictionKeepsWithinCapacity() {
        try (LocalHotCache cache = new LocalHotCache(8 * BLOCK, BLOCK, 0.5, policy("lru", 8), 1024)) {
            for (int i = 0; i < 20; i++) {
                byte[] v = content("k" + i, 1, (int) (2 * BLOCK));
                cache.offerFill("k" + i, 1, v.length, parts(v, 4096));
            }
            cache.freeBlocksWhenQuiet();
            assertThat(cache.residentBlocks()).isLessThanOrEqualTo(8);
            assertThat(cache.stats().evictions()).isPositive();
            assertThat(read(cache, "k19", 1, (int) (2 * BLOCK))).isEqualTo(content("k19", 1, (int) (2 * BLOCK)));
        }
    }

    @Test
    void aFullRingDropsFillsAndReleasesTheirBuffers() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        HotCachePolicy lru = policy("lru", 64);
        HotCachePolicy blocking = new HotCachePolicy() {
            public String name() {
                return "blocking";
            }

            public long capacityBlocks() {
                return lru.capacityBlocks();
            }

            public void onHit(long k) {
                lru.onHit(k);
            }

            public void onMiss(long k) {
                lru.onMiss(k);
            }

            public boolean admit(long k, int w) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return lru.admit(k, w);
            }

            public void onInsert(long k, int w) {
                lru.onInsert(k, w);
            }

            public void onRemove(long k) {
                lru.onRemove(k);
            }

            public long victim() {
                return lru.victim();
            }

            public long residentBlocks() {
                return lru.residentBlocks();
            }
        };
        try (LocalHotCache cache = new LocalHotCache(64 * BLOCK, BLOCK, 0.5, blocking, 64)) {
            List<List<ByteBuf>> offered = new ArrayList<>();
            int dropped = 0;
            for (int i = 0; i < 200; i++) {
                List<ByteBuf> p = parts(content("k" + i, 1, 100), 4096);
                offered.add(p);
                if (!cache.offerFill("k" + i, 1, 100, p)) {
                    dropped++;
                }
            }
            assertThat(dropped).isPositive();
            assertThat(cache.stats().droppedFills()).isEqualTo(dropped);
            gate.countDown();
            cache.freeBlocksWhenQuiet();
            assertThat(offered).allSatisfy(p -> assertThat(p).allMatch(b -> b.refCnt() == 0));
        }
    }

    @Test
    void memoryThatCannotBeReservedFailsClearly() {
        assertThatThrownBy(() -> new LocalHotCache(1L << 46, 1L << 30, 0.5, policy("lru", 1 << 16), 1024))
                .isInstanceOf(TiffinException.class).hasMessageContaining("hotcache.size");
    }

    @Test
    void concurrentReadersNeverSeeBytesOfAnotherObjectAndNoBlockLeaks() throws Exception {
        long seed = System.nanoTime();
        int blocks = 48;
        for (String policyName : PLUGINS.names(io.tiffin.core.plugin.ExtensionPoint.HOT_CACHE_POLICY)) {
            try (LocalHotCache cache = new LocalHotCache(blocks * BLOCK, BLOCK, 0.25, policy(policyName, blocks), 256)) {
                ConcurrentHashMap<String, Long> currentVersion = new ConcurrentHashMap<>();
                int keys = 40;
                for (int i = 0; i < keys; i++) {
                    currentVersion.put("k" + i, 1L);
                }
                AtomicLong servedReads = new AtomicLong();
                // readers go on until the filler is done, so reads overlap fills however the threads are scheduled
                java.util.concurrent.atomic.AtomicBoolean fillerDone = new java.util.concurrent.atomic.AtomicBoolean();
                ExecutorService pool = Executors.newFixedThreadPool(6);
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    final int id = t;
                    futures.add(pool.submit(() -> {
                        SplittableRandom rnd = new SplittableRandom(seed + id);
                        try (Arena arena = Arena.ofConfined()) {
                            for (int op = 0; op < 20_000 || !fillerDone.get(); op++) {
                                if (op >= 20_000) {
                                    java.util.concurrent.locks.LockSupport.parkNanos(100_000); // leave the CPU to the filler
                                }
                                String key = "k" + rnd.nextInt(keys);
                                long version = 1 + rnd.nextInt(3);
                                int size = 1 + (int) ((key.hashCode() * 7919L + version * 104729L) % (3 * BLOCK));
                                if (id % 2 == 1) { // zero-copy readers pin the blocks instead of copying
                                    LocalHotCache.Pinned pinned = cache.tryPin(key, version, size);
                                    if (pinned != null) {
                                        try (pinned) {
                                            assertThat(bytesOf(pinned.segments()))
                                                    .as("seed %d %s %s v%d pinned", seed, policyName, key, version)
                                                    .isEqualTo(content(key, version, size));
                                        }
                                        servedReads.incrementAndGet();
                                    }
                                    continue;
                                }
                                MemorySegment dst = arena.allocate(size);
                                if (cache.tryRead(key, version, size, dst)) {
                                    assertThat(dst.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                                            .as("seed %d %s %s v%d", seed, policyName, key, version)
                                            .isEqualTo(content(key, version, size));
                                    servedReads.incrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
                futures.add(pool.submit(() -> {
                    SplittableRandom rnd = new SplittableRandom(seed ^ 99);
                    try {
                        for (int op = 0; op < 20_000; op++) {
                            String key = "k" + rnd.nextInt(keys);
                            long version = 1 + rnd.nextInt(3);
                            int size = 1 + (int) ((key.hashCode() * 7919L + version * 104729L) % (3 * BLOCK));
                            int what = rnd.nextInt(10);
                            if (what == 0) {
                                cache.invalidate(key);
                            } else if (what < 4) { // zero-copy fill: written in place, then committed or aborted
                                LocalHotCache.Reservation r = cache.reserve(key, version, size);
                                if (r != null) {
                                    byte[] bytes = content(key, version, size);
                                    long off = 0;
                                    for (MemorySegment piece : r.segments()) {
                                        MemorySegment.copy(MemorySegment.ofArray(bytes), off, piece, 0, piece.byteSize());
                                        off += piece.byteSize();
                                    }
                                    if (what == 3) {
                                        r.abort();
                                    } else {
                                        r.commit().close();
                                    }
                                }
                            } else {
                                cache.offerFill(key, version, size, parts(content(key, version, size), 1500));
                            }
                        }
                    } finally {
                        fillerDone.set(true);
                    }
                    return null;
                }));
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
                pool.shutdown();
                int free = cache.freeBlocksWhenQuiet();
                assertThat(free + cache.residentBlocks()).as("seed %d %s: no block leaked", seed, policyName)
                        .isEqualTo(blocks);
                assertThat(cache.residentBlocks()).isLessThanOrEqualTo(blocks);
                assertThat(servedReads.get()).as("%s served some reads", policyName).isPositive();
            }
        }
    }
}
