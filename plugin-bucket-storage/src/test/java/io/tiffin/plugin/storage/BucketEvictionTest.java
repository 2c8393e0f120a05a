package io.tiffin.plugin.storage;

import static io.tiffin.plugins.testkit.storage.StorageBackendContract.value;
import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.storage.StorageListener;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Watermark eviction. Capacity 1 MiB, high 0.90, low 0.50, buckets of 4 objects of 16 KiB (64 KiB files):
 * 14 buckets (896 KiB) fit under the high watermark; the 15th write evicts down to 512 KiB including
 * itself (896 KiB - 7 x 64 KiB + 64 KiB = 512 KiB), i.e. the first 7 buckets in policy order go.
 */
class BucketEvictionTest {
    private static final int OBJECT = 16 << 10;
    private static final long CAPACITY = 1 << 20;

    @TempDir
    Path tempDir;

    private BucketStorageConfig config(EvictionPolicy policy) {
        return BucketStorageConfig.defaults(tempDir).withCapacity(CAPACITY).withWatermarks(0.90, 0.50)
                .withEviction(policy).withBucketLimits(1 << 20, 4);
    }

    private static Map<String, MemorySegment> bucket(int b) {
        Map<String, MemorySegment> m = new LinkedHashMap<>();
        for (int i = 0; i < 4; i++) {
            m.put(key(b, i), MemorySegment.ofArray(value(b * 4L + i, 1, OBJECT)));
        }
        return m;
    }

    private static String key(int bucket, int i) {
        return "b" + bucket + "-" + i;
    }

    private static boolean readable(BucketStorageBackend backend, int b) {
        byte[] dest = new byte[OBJECT];
        for (int i = 0; i < 4; i++) {
            if (backend.read(key(b, i), MemorySegment.ofArray(dest)) < 0) {
                return false;
            }
            assertThat(dest).isEqualTo(value(b * 4L + i, 1, OBJECT));
        }
        return true;
    }

    private static List<String> keysOf(int... buckets) {
        List<String> keys = new ArrayList<>();
        for (int b : buckets) {
            for (int i = 0; i < 4; i++) {
                keys.add(key(b, i));
            }
        }
        return keys;
    }

    @Test
    void fifoEvictsTheOldestBucketsDownToTheLowWatermarkAndTellsTheListenerFirst() {
        try (BucketStorageBackend backend = BucketStorageBackend.open(config(EvictionPolicy.FIFO))) {
            List<String> heard = Collections.synchronizedList(new ArrayList<>());
            backend.listener(keys -> {
                // Told before anything goes: the keys still read, their files still exist.
                for (String k : keys) {
                    assertThat(backend.size(k)).as("%s still stored while the listener runs", k).isPresent();
                }
                assertThat(readable(backend, 0)).isTrue();
                heard.addAll(keys);
            });
            for (int b = 0; b < 14; b++) {
                backend.writeBatch(bucket(b));
            }
            readable(backend, 0); // FIFO ignores reads
            assertThat(backend.stats().diskBytes()).isEqualTo(14 * 65_536L);
            assertThat(heard).isEmpty();

            backend.writeBatch(bucket(14));

            assertThat(heard).containsExactlyInAnyOrderElementsOf(keysOf(0, 1, 2, 3, 4, 5, 6));
            for (int b = 0; b < 7; b++) {
                assertThat(readable(backend, b)).as("bucket %d evicted", b).isFalse();
            }
            for (int b = 7; b < 15; b++) {
                assertThat(readable(backend, b)).as("bucket %d kept", b).isTrue();
            }
            assertThat(backend.stats().diskBytes()).isLessThanOrEqualTo((long) (CAPACITY * 0.50));
            assertThat(backend.stats().evictedObjects()).isEqualTo(28);
            assertThat(backend.stats().objects()).isEqualTo(32);
            assertThat(backend.usedBytes()).isEqualTo(32L * OBJECT);
            assertThat(tempDir.resolve("buckets").toFile().list()).hasSize(8);
        }
    }

    @Test
    void lruEvictsTheLeastRecentlyReadBucketsAndCountsCreationAsARead() {
        try (BucketStorageBackend backend = BucketStorageBackend.open(config(EvictionPolicy.LRU))) {
            List<String> heard = Collections.synchronizedList(new ArrayList<>());
            backend.listener(heard::addAll);
            for (int b = 0; b < 14; b++) {
                backend.writeBatch(bucket(b));
            }
            assertThat(readable(backend, 1)).isTrue();
            assertThat(readable(backend, 0)).isTrue();

            backend.writeBatch(bucket(14));

            // Order by last read (or creation): 2..13 unread in creation order, then 1, then 0.
            assertThat(heard).containsExactlyInAnyOrderElementsOf(keysOf(2, 3, 4, 5, 6, 7, 8));
            assertThat(readable(backend, 0)).isTrue();
            assertThat(readable(backend, 1)).isTrue();
            assertThat(readable(backend, 13)).as("fresh, never read, not evicted first").isTrue();
            assertThat(readable(backend, 14)).isTrue();
        }
    }

    @Test
    void evictionKeepsUsageUnderTheWatermarkWhileReadersKeepReading() throws Exception {
        try (BucketStorageBackend backend = BucketStorageBackend.open(config(EvictionPolicy.LRU))) {
            Map<String, Boolean> evicted = new ConcurrentHashMap<>();
            backend.listener(keys -> keys.forEach(k -> evicted.put(k, true)));
            int buckets = 60;
            AtomicBoolean done = new AtomicBoolean();
            ConcurrentHashMap<String, Long> wrong = new ConcurrentHashMap<>();
            ExecutorService pool = Executors.newFixedThreadPool(3);
            List<Future<Integer>> readers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                long seed = 42 + t;
                readers.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    byte[] dest = new byte[OBJECT];
                    MemorySegment d = MemorySegment.ofArray(dest);
                    int hits = 0;
                    while (!done.get()) {
                        int b = r.nextInt(buckets);
                        int i = r.nextInt(4);
                        long n = backend.read(key(b, i), d);
                        if (n >= 0) {
                            hits++;
                            if (n != OBJECT || !Arrays.equals(dest, value(b * 4L + i, 1, OBJECT))) {
                                wrong.put(key(b, i), seed);
                            }
                        }
                    }
                    return hits;
                }));
            }
            long maxDisk = 0;
            for (int b = 0; b < buckets; b++) {
                backend.writeBatch(bucket(b));
                maxDisk = Math.max(maxDisk, backend.stats().diskBytes());
            }
            done.set(true);
            pool.shutdown();
            assertThat(pool.awaitTermination(1, TimeUnit.MINUTES)).isTrue();
            int hits = 0;
            for (Future<Integer> f : readers) {
                hits += f.get();
            }
            assertThat(wrong).as("reads that returned wrong bytes (key -> seed)").isEmpty();
            assertThat(hits).isPositive();
            assertThat(maxDisk).isLessThanOrEqualTo((long) (CAPACITY * 0.90));
            assertThat(backend.stats().evictedObjects()).isEqualTo(evicted.size()).isPositive();
            assertThat(backend.stats().objects() + evicted.size()).isEqualTo(buckets * 4L);
            // Once readers are gone, every evicted bucket's file is gone too.
            long files;
            try (var s = Files.list(tempDir.resolve("buckets"))) {
                files = s.count();
            }
            assertThat(files * 65_536).isEqualTo(backend.stats().diskBytes());
            assertThat(IntStream.range(0, buckets).filter(b -> readable(backend, b)).count() * 4)
                    .isEqualTo(backend.stats().objects());
        }
    }

    @Test
    void listenerFailureDoesNotStopEviction() {
        try (BucketStorageBackend backend = BucketStorageBackend.open(config(EvictionPolicy.FIFO))) {
            backend.listener(new StorageListener() {
                @Override
                public void evicting(List<String> keys) {
                    throw new IllegalStateException("listener down");
                }
            });
            for (int b = 0; b < 15; b++) {
                backend.writeBatch(bucket(b));
            }
            assertThat(backend.stats().evictedObjects()).isEqualTo(28);
            assertThat(backend.stats().diskBytes()).isLessThanOrEqualTo((long) (CAPACITY * 0.50));
        }
    }

    @Test
    void removingEveryObjectOfABucketDeletesItsFile() throws Exception {
        try (BucketStorageBackend backend = BucketStorageBackend.open(config(EvictionPolicy.FIFO))) {
            backend.writeBatch(bucket(0));
            backend.writeBatch(bucket(1));
            backend.removeAll(keysOf(0).subList(0, 3));
            assertThat(tempDir.resolve("buckets").toFile().list()).hasSize(2);
            backend.remove(key(0, 3));
            assertThat(tempDir.resolve("buckets").toFile().list()).containsExactly("2.bucket");
            assertThat(backend.stats().diskBytes()).isEqualTo(65_536);
            byte[] dest = new byte[OBJECT];
            assertThat(backend.read(key(1, 2), MemorySegment.ofArray(dest))).isEqualTo(OBJECT);
            assertThat(MemorySegment.ofArray(dest).get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(6);
        }
    }
}
