package io.tiffin.plugins.testkit.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.ObjectStamp;
import io.tiffin.api.spi.storage.StorageBackend;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The behaviour every {@link StorageBackend} must show. Extend it in a JUnit 5 test and implement
 * {@link #open(Path)}; the suite writes, reads, removes, restarts and hammers the backend from several
 * threads.
 *
 * <p>Values are self-describing ({@link #value}: key id, version and pseudo-random bytes derived from
 * both), so a read that returns partial, stale-mixed or foreign bytes is caught. Random choices use a
 * seeded {@link SplittableRandom}; failures print the seed.
 *
 * <p>Thread-safety: an instance runs one test at a time, as JUnit does; the concurrency test starts its
 * own threads and joins them before it returns. Every backend the suite opens is closed by the test that
 * opened it.
 */
public abstract class StorageBackendContract {
    private static final long SEED = 0x5EED_5709L;

    /** A fresh temporary directory per test; {@link #open} gets it (or a sub-directory). */
    @TempDir
    protected Path tempDir;

    /**
     * Opens a backend over {@code dir}: empty the first time, and holding what an earlier backend over
     * the same directory wrote (and did not remove) once that one is closed. The test closes it.
     */
    protected abstract StorageBackend open(Path dir);

    /**
     * A value of {@code length} bytes (at least 16) that names its key id and version in its first 16
     * bytes and is otherwise pseudo-random from both.
     */
    public static byte[] value(long keyId, long version, int length) {
        if (length < 16) {
            throw new IllegalArgumentException("length = " + length + " (expected: >= 16)");
        }
        byte[] b = new byte[length];
        SplittableRandom r = new SplittableRandom(keyId * 1_000_003L + version);
        r.nextBytes(b);
        MemorySegment s = MemorySegment.ofArray(b);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, keyId);
        s.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, version);
        return b;
    }

    /** The length {@link #value} has for a key id and version in the concurrency test. */
    static int lengthOf(long keyId, long version, int maxLength) {
        long h = (keyId * 0x9E3779B97F4A7C15L) ^ (version * 0xC2B2AE3D27D4EB4FL);
        return 16 + (int) Math.floorMod(h, (long) (maxLength - 16));
    }

    private static Map<String, MemorySegment> batch(Map<String, byte[]> values) {
        Map<String, MemorySegment> m = new LinkedHashMap<>();
        values.forEach((k, v) -> m.put(k, MemorySegment.ofArray(v)));
        return m;
    }

    private static byte[] readAll(StorageBackend backend, String key) {
        OptionalLong size = backend.size(key);
        if (size.isEmpty()) {
            return null;
        }
        byte[] dest = new byte[(int) size.getAsLong()];
        long n = backend.read(key, MemorySegment.ofArray(dest));
        return n < 0 ? null : dest;
    }

    @Test
    public void objectsOfSeveralSizesReadBackExactly() {
        int[] sizes = {16, 17, 511, 4095, 4096, 4097, 65_536 + 3, 1 << 20, (1 << 20) + 1};
        Map<String, byte[]> written = new LinkedHashMap<>();
        try (StorageBackend backend = open(tempDir)) {
            for (int i = 0; i < sizes.length; i++) {
                byte[] v = value(i, 1, sizes[i]);
                written.put("size-" + sizes[i], v);
                backend.writeBatch(batch(Map.of("size-" + sizes[i], v)));
            }
            try (Arena arena = Arena.ofConfined()) {
                for (Map.Entry<String, byte[]> e : written.entrySet()) {
                    assertThat(backend.size(e.getKey())).hasValue(e.getValue().length);
                    MemorySegment offHeap = arena.allocate(e.getValue().length + 100L, 1);
                    assertThat(backend.read(e.getKey(), offHeap)).as("read of %s", e.getKey())
                            .isEqualTo(e.getValue().length);
                    assertThat(offHeap.asSlice(0, e.getValue().length).toArray(ValueLayout.JAVA_BYTE))
                            .as("bytes of %s", e.getKey()).isEqualTo(e.getValue());
                    assertThat(readAll(backend, e.getKey())).isEqualTo(e.getValue());
                }
            }
        }
    }

    @Test
    public void batchWriteStoresEveryObject() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        for (int i = 0; i < 60; i++) {
            values.put("batch-" + i, value(i, 7, 100 + i * 37));
        }
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(values));
            values.forEach((k, v) -> assertThat(readAll(backend, k)).as("key %s", k).isEqualTo(v));
            assertThat(backend.stats().objects()).isEqualTo(values.size());
        }
    }

    @Test
    public void readBatchReturnsOneResultPerKeyAndMinusOneForUnknownKeys() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            values.put("rb-" + i, value(i, 3, 5000 + i));
        }
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(values));
            List<String> keys = new ArrayList<>(List.of("rb-7", "missing", "rb-0", "rb-3"));
            List<MemorySegment> dests = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                dests.add(MemorySegment.ofArray(new byte[6000]));
            }
            long[] n = backend.readBatch(keys, dests);
            assertThat(n).containsExactly(5007, -1, 5000, 5003);
            for (int i = 0; i < keys.size(); i++) {
                if (n[i] > 0) {
                    assertThat(dests.get(i).asSlice(0, n[i]).toArray(ValueLayout.JAVA_BYTE))
                            .isEqualTo(values.get(keys.get(i)));
                }
            }
            assertThatThrownBy(() -> backend.readBatch(List.of("rb-1"), List.of()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
        }
    }

    @Test
    public void unknownKeyReadsAsMinusOneAndHasNoSize() {
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(Map.of("known", value(1, 1, 64))));
            assertThat(backend.read("unknown", MemorySegment.ofArray(new byte[64]))).isEqualTo(-1);
            assertThat(backend.size("unknown")).isEmpty();
            assertThat(backend.remove("unknown")).isFalse();
        }
    }

    @Test
    public void removedObjectReadsAsMissing() {
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(Map.of("a", value(1, 1, 300), "b", value(2, 1, 300), "c", value(3, 1, 300))));
            assertThat(backend.remove("a")).isTrue();
            assertThat(backend.remove("a")).isFalse();
            assertThat(backend.read("a", MemorySegment.ofArray(new byte[300]))).isEqualTo(-1);
            assertThat(backend.size("a")).isEmpty();
            assertThat(backend.removeAll(List.of("b", "x"))).containsExactly("b");
            assertThat(readAll(backend, "c")).isEqualTo(value(3, 1, 300));
            assertThat(backend.stats().objects()).isEqualTo(1);
        }
    }

    @Test
    public void writingAnExistingKeyReplacesTheObject() {
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(Map.of("k", value(1, 1, 1000))));
            backend.writeBatch(batch(Map.of("k", value(1, 2, 200))));
            assertThat(readAll(backend, "k")).isEqualTo(value(1, 2, 200));
            assertThat(backend.usedBytes()).isEqualTo(200);
        }
    }

    @Test
    public void scanAfterReopenReportsWhatWasWrittenAndNotRemoved() {
        Map<String, byte[]> values = new LinkedHashMap<>();
        for (int i = 0; i < 25; i++) {
            values.put("restart-" + i, value(i, 9, 777 + i));
        }
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(values));
            backend.remove("restart-3");
        }
        values.remove("restart-3");
        try (StorageBackend backend = open(tempDir)) {
            Map<String, Long> scanned = new HashMap<>();
            backend.scan((k, s) -> assertThat(scanned.put(k, s)).as("key %s scanned twice", k).isNull());
            Map<String, Long> expected = new HashMap<>();
            values.forEach((k, v) -> expected.put(k, (long) v.length));
            assertThat(scanned).isEqualTo(expected);
            values.forEach((k, v) -> assertThat(readAll(backend, k)).as("key %s", k).isEqualTo(v));
            assertThat(backend.usedBytes()).isEqualTo(expected.values().stream().mapToLong(Long::longValue).sum());
        }
    }

    /**
     * A backend that keeps stamps gives each object's stamp back after a reopen, a restamp moves the deadline of
     * the version it names only, and an overwrite replaces the stamp; one that keeps none reports {@link
     * ObjectStamp#NONE} and refuses every restamp.
     */
    @Test
    public void stampsComeBackAfterReopenAndARestampMovesOnlyItsOwnVersion() {
        Map<String, ObjectStamp> expected = new HashMap<>();
        boolean keeps;
        try (StorageBackend backend = open(tempDir)) {
            keeps = backend.keepsStamps();
            backend.writeBatch(batch(Map.of("a", value(1, 1, 300), "b", value(2, 1, 400), "c", value(3, 1, 500))),
                    Map.of("a", new ObjectStamp(7, 1_000), "b", new ObjectStamp(8, 0), "not-written",
                            new ObjectStamp(9, 9)));
            assertThat(backend.restamp("a", 7, 2_000)).as("restamp of a's own version").isEqualTo(keeps);
            assertThat(backend.restamp("b", 99, 5_000)).as("restamp naming another version of b").isFalse();
            assertThat(backend.restamp("missing", 7, 5_000)).as("restamp of an unknown key").isFalse();
            backend.writeBatch(batch(Map.of("b", value(2, 2, 450))), Map.of("b", new ObjectStamp(10, 3_000)));
            assertThat(backend.restamp("b", 8, 6_000)).as("restamp of b's replaced version").isFalse();
            if (keeps) {
                expected.put("a", new ObjectStamp(7, 2_000));
                expected.put("b", new ObjectStamp(10, 3_000));
                expected.put("c", ObjectStamp.NONE);
            } else {
                expected.put("a", ObjectStamp.NONE);
                expected.put("b", ObjectStamp.NONE);
                expected.put("c", ObjectStamp.NONE);
            }
        }
        try (StorageBackend backend = open(tempDir)) {
            Map<String, ObjectStamp> scanned = new HashMap<>();
            Map<String, Long> sizes = new HashMap<>();
            backend.scanStamped((k, size, stamp) -> {
                assertThat(scanned.put(k, stamp)).as("key %s scanned twice", k).isNull();
                sizes.put(k, size);
            });
            assertThat(scanned).isEqualTo(expected);
            assertThat(sizes).isEqualTo(Map.of("a", 300L, "b", 450L, "c", 500L));
            expected.forEach((k, stamp) -> assertThat(backend.stamp(k)).as("stamp(%s)", k).isEqualTo(stamp));
            assertThat(backend.stamp("missing")).as("stamp of an unknown key").isNull();
            assertThat(readAll(backend, "b")).isEqualTo(value(2, 2, 450));
        }
    }

    @Test
    public void tooSmallDestinationFailsWithBufferOverflowAndKeepsTheObject() {
        try (StorageBackend backend = open(tempDir)) {
            backend.writeBatch(batch(Map.of("big", value(1, 1, 10_000))));
            assertThatThrownBy(() -> backend.read("big", MemorySegment.ofArray(new byte[9_999])))
                    .isInstanceOfSatisfying(TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.BUFFER_OVERFLOW);
                        assertThat(e.getMessage()).contains("9999").contains("10000");
                    });
            assertThat(readAll(backend, "big")).isEqualTo(value(1, 1, 10_000));
        }
    }

    @Test
    public void emptyObjectsAndEmptyKeysAreRejected() {
        try (StorageBackend backend = open(tempDir)) {
            assertThatThrownBy(() -> backend.writeBatch(Map.of("empty", MemorySegment.ofArray(new byte[0]))))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
            assertThatThrownBy(() -> backend.writeBatch(Map.of("", MemorySegment.ofArray(new byte[5]))))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY));
            assertThat(backend.stats().objects()).isZero();
        }
    }

    @Test
    public void usedBytesGrowsWithWritesAndShrinksWithRemovals() {
        try (StorageBackend backend = open(tempDir)) {
            assertThat(backend.usedBytes()).isZero();
            backend.writeBatch(batch(Map.of("x", value(1, 1, 5000), "y", value(2, 1, 3000))));
            assertThat(backend.usedBytes()).isEqualTo(8000);
            backend.writeBatch(batch(Map.of("z", value(3, 1, 1000))));
            assertThat(backend.usedBytes()).isEqualTo(9000);
            backend.remove("x");
            assertThat(backend.usedBytes()).isEqualTo(4000);
            backend.removeAll(List.of("y", "z"));
            assertThat(backend.usedBytes()).isZero();
            assertThat(backend.stats().usedBytes()).isZero();
            assertThat(backend.capacityBytes()).isPositive();
        }
    }

    @Test
    public void callsAfterCloseFail() {
        StorageBackend backend = open(tempDir);
        backend.close();
        backend.close();
        assertThatThrownBy(() -> backend.read("k", MemorySegment.ofArray(new byte[1])))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS));
    }

    /**
     * Writers, removers and readers on a small key set at once: every read returns -1 or one whole
     * version of the key's own value, and at the end every key holds its last acknowledged version or is
     * missing because a removal came later.
     */
    @Test
    public void concurrentReadersWritersAndRemoversNeverSeePartialOrForeignBytes() throws Exception {
        int keys = 24;
        int maxLength = 40_000;
        int writers = 2;
        int readers = 3;
        int opsPerThread = 150;
        AtomicLong versions = new AtomicLong();
        ConcurrentHashMap<String, Long> failures = new ConcurrentHashMap<>();
        try (StorageBackend backend = open(tempDir)) {
            ExecutorService pool = Executors.newFixedThreadPool(writers + readers + 1);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                long seed = SEED + w;
                futures.add(pool.submit(() -> {
                    start.await();
                    SplittableRandom r = new SplittableRandom(seed);
                    for (int i = 0; i < opsPerThread; i++) {
                        Map<String, MemorySegment> b = new LinkedHashMap<>();
                        int n = 1 + r.nextInt(4);
                        for (int j = 0; j < n; j++) {
                            int k = r.nextInt(keys);
                            long v = versions.incrementAndGet();
                            b.put("c-" + k, MemorySegment.ofArray(value(k, v, lengthOf(k, v, maxLength))));
                        }
                        backend.writeBatch(b);
                    }
                    return null;
                }));
            }
            futures.add(pool.submit(() -> {
                start.await();
                SplittableRandom r = new SplittableRandom(SEED + 100);
                for (int i = 0; i < opsPerThread; i++) {
                    if (r.nextBoolean()) {
                        backend.remove("c-" + r.nextInt(keys));
                    } else {
                        backend.removeAll(List.of("c-" + r.nextInt(keys), "c-" + r.nextInt(keys)));
                    }
                }
                return null;
            }));
            for (int t = 0; t < readers; t++) {
                long seed = SEED + 200 + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    SplittableRandom r = new SplittableRandom(seed);
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment dest = arena.allocate(maxLength, 8);
                        MemorySegment dest2 = arena.allocate(maxLength, 8);
                        for (int i = 0; i < opsPerThread * 3; i++) {
                            int k = r.nextInt(keys);
                            if (r.nextInt(4) == 0) {
                                int k2 = r.nextInt(keys);
                                long[] n = backend.readBatch(List.of("c-" + k, "c-" + k2), List.of(dest, dest2));
                                check(k, dest, n[0], seed, failures);
                                check(k2, dest2, n[1], seed, failures);
                            } else {
                                check(k, dest, backend.read("c-" + k, dest), seed, failures);
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            pool.shutdown();
            assertThat(pool.awaitTermination(5, TimeUnit.MINUTES)).as("threads finished").isTrue();
            for (Future<?> f : futures) {
                f.get();
            }
            assertThat(failures).as("reads with wrong bytes (message -> seed)").isEmpty();
            long used = 0;
            for (int k = 0; k < keys; k++) {
                byte[] v = readAll(backend, "c-" + k);
                if (v != null) {
                    long version = MemorySegment.ofArray(v).get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
                    assertThat(v).as("final value of c-%d", k).isEqualTo(value(k, version, v.length));
                    used += v.length;
                }
            }
            assertThat(backend.usedBytes()).isEqualTo(used);
        }
    }

    private static void check(int keyId, MemorySegment dest, long n, long seed, Map<String, Long> failures) {
        if (n < 0) {
            return;
        }
        long id = dest.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        long version = dest.get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
        if (id != keyId) {
            failures.put("key c-" + keyId + " returned bytes of key id " + id, seed);
            return;
        }
        if (n != lengthOf(keyId, version, 40_000)) {
            failures.put("key c-" + keyId + " version " + version + " returned " + n + " bytes", seed);
            return;
        }
        byte[] expected = value(keyId, version, (int) n);
        if (!Arrays.equals(dest.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), expected)) {
            failures.put("key c-" + keyId + " version " + version + " returned mixed bytes", seed);
        }
    }
}
