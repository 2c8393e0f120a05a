package io.tiffin.plugin.storage;

import static io.tiffin.plugins.testkit.storage.StorageBackendContract.value;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.nio.file.ExtendedOpenOption;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageListener;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Faults on real file systems: no O_DIRECT, corrupt and truncated bucket files, full disks, orphans. */
class BucketStorageFaultTest {
    @TempDir
    Path tempDir;

    private static Map<String, MemorySegment> objects(String prefix, int count, int size, long version) {
        Map<String, MemorySegment> m = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            m.put(prefix + i, MemorySegment.ofArray(value(i, version, size)));
        }
        return m;
    }

    private static byte[] read(BucketStorageBackend backend, String key, int size) {
        byte[] dest = new byte[size];
        long n = backend.read(key, MemorySegment.ofArray(dest));
        return n < 0 ? null : dest;
    }

    private static List<Path> bucketFiles(Path storage) throws IOException {
        try (Stream<Path> s = Files.list(storage.resolve("buckets"))) {
            return s.sorted().toList();
        }
    }

    private static boolean directIoWorks(Path dir) throws IOException {
        Path probe = dir.resolve("probe");
        Files.write(probe, new byte[8192]);
        try (FileChannel ch = FileChannel.open(probe, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)) {
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            Files.delete(probe);
        }
    }

    @Test
    void tmpfsStorageServesReadsWithDirectIoOrThroughTheFallback() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "/dev/shm is not a writable directory");
        Path dir = Files.createTempDirectory(shm, "tiffin-bucket-test");
        try {
            boolean direct = directIoWorks(dir);
            try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(dir)
                    .withBucketLimits(1 << 20, 4))) {
                backend.writeBatch(objects("t", 8, 20_000, 1));
                for (int round = 0; round < 2; round++) {
                    for (int i = 0; i < 8; i++) {
                        assertThat(read(backend, "t" + i, 20_000)).isEqualTo(value(i, 1, 20_000));
                    }
                }
                // Linux 6.6+ tmpfs accepts O_DIRECT; older kernels refuse it and each file falls back once.
                assertThat(backend.stats().directIoFallbacks()).isEqualTo(direct ? 0 : 2);
            }
        } finally {
            deleteTree(dir);
        }
    }

    @Test
    void fileSystemWithoutDirectIoFallsBackToBufferedReadsOncePerFile() throws IOException {
        Path mountPoint = Files.createDirectories(tempDir.resolve("ramfs"));
        assumeTrue(Mounts.mount("ramfs", null, mountPoint), "cannot mount ramfs (needs root)");
        try {
            assumeTrue(!directIoWorks(mountPoint), "this ramfs accepts O_DIRECT");
            try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(mountPoint)
                    .withCapacity(64L << 20).withBucketLimits(1 << 20, 4))) {
                backend.writeBatch(objects("r", 12, 10_000, 2));
                for (int round = 0; round < 3; round++) {
                    for (int i = 0; i < 12; i++) {
                        assertThat(read(backend, "r" + i, 10_000)).as("r%d round %d", i, round)
                                .isEqualTo(value(i, 2, 10_000));
                    }
                }
                assertThat(backend.stats().directIoFallbacks()).as("one fallback per bucket file").isEqualTo(3);
                assertThat(backend.stats().corruptReads()).isZero();
            }
        } finally {
            Mounts.unmount(mountPoint);
        }
    }

    @Test
    void flippedBytesReadAsAMissWhileOtherObjectsKeepReading() throws IOException {
        List<String> lost = Collections.synchronizedList(new ArrayList<>());
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 4))) {
            backend.listener(new StorageListener() {
                @Override
                public void evicting(List<String> keys) {
                }

                @Override
                public void lost(List<String> keys) {
                    lost.addAll(keys);
                }
            });
            backend.writeBatch(objects("f", 4, 10_000, 3));
            // Object f1 starts at 12288 (objects are 4 KiB aligned); flip 3 bytes in its middle.
            Path file = bucketFiles(tempDir).getFirst();
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteBuffer b = ByteBuffer.allocate(3);
                ch.read(b, 12288 + 5000);
                b.flip();
                ByteBuffer flipped = ByteBuffer.allocate(3);
                while (b.hasRemaining()) {
                    flipped.put((byte) ~b.get());
                }
                flipped.flip();
                ch.write(flipped, 12288 + 5000);
                ch.force(true);
            }
            byte[] dest = new byte[10_000];
            assertThat(backend.read("f1", MemorySegment.ofArray(dest))).isEqualTo(-1);
            assertThat(dest).as("no corrupt bytes handed out").containsOnly(0);
            assertThat(backend.stats().corruptReads()).isEqualTo(1);
            assertThat(backend.size("f1")).as("dropped after the CRC miss").isEmpty();
            assertThat(lost).containsExactly("f1");
            for (int i : new int[] {0, 2, 3}) {
                assertThat(read(backend, "f" + i, 10_000)).isEqualTo(value(i, 3, 10_000));
            }
        }
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir))) {
            Map<String, Long> scanned = new HashMap<>();
            backend.scan(scanned::put);
            assertThat(scanned).containsOnlyKeys("f0", "f2", "f3");
        }
    }

    @Test
    void batchReadOfAdjacentObjectsReportsOnlyTheCorruptOneMissing() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 8))) {
            backend.writeBatch(objects("g", 6, 8_192, 20));
            try (FileChannel ch = FileChannel.open(bucketFiles(tempDir).getFirst(), StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}), 2 * 8_192 + 100);
                ch.force(true);
            }
            List<String> keys = List.of("g5", "g0", "g2", "g1", "g4", "g3");
            List<MemorySegment> dests = new ArrayList<>();
            try (Arena arena = Arena.ofConfined()) {
                for (int i = 0; i < keys.size(); i++) {
                    dests.add(arena.allocate(8_192, 4096));
                }
                long[] n = backend.readBatch(keys, dests);
                assertThat(n).containsExactly(8_192, 8_192, -1, 8_192, 8_192, 8_192);
                for (int i = 0; i < keys.size(); i++) {
                    if (n[i] > 0) {
                        int id = Integer.parseInt(keys.get(i).substring(1));
                        assertThat(dests.get(i).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(value(id, 20, 8_192));
                    }
                }
            }
            assertThat(backend.stats().corruptReads()).isEqualTo(1);
            assertThat(backend.size("g2")).isEmpty();
        }
    }

    @Test
    void bucketFileTruncatedWhileOpenReadsAsAMiss() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 4))) {
            backend.writeBatch(objects("a", 4, 10_000, 4));
            backend.writeBatch(objects("b", 4, 10_000, 5));
            Path first = bucketFiles(tempDir).getFirst();
            try (FileChannel ch = FileChannel.open(first, StandardOpenOption.WRITE)) {
                ch.truncate(20_000);
            }
            assertThat(read(backend, "a0", 10_000)).isEqualTo(value(0, 4, 10_000));
            assertThat(read(backend, "a1", 10_000)).as("cut short").isNull();
            assertThat(read(backend, "a3", 10_000)).as("past the end").isNull();
            assertThat(backend.stats().corruptReads()).isEqualTo(2);
            for (int i = 0; i < 4; i++) {
                assertThat(read(backend, "b" + i, 10_000)).isEqualTo(value(i, 5, 10_000));
            }
        }
    }

    @Test
    void truncatedBucketFileKeepsOnlyTheObjectsBeforeTheCutAfterRestart() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 4))) {
            backend.writeBatch(objects("a", 4, 10_000, 6));
            backend.writeBatch(objects("b", 4, 10_000, 7));
        }
        // Objects of bucket 1 lie at 0, 12288, 24576 and 36864; cutting at 30000 loses a2 and a3.
        try (FileChannel ch = FileChannel.open(bucketFiles(tempDir).getFirst(), StandardOpenOption.WRITE)) {
            ch.truncate(30_000);
        }
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir))) {
            Map<String, Long> scanned = new HashMap<>();
            backend.scan(scanned::put);
            assertThat(scanned).containsOnlyKeys("a0", "a1", "b0", "b1", "b2", "b3");
            assertThat(read(backend, "a1", 10_000)).isEqualTo(value(1, 6, 10_000));
            assertThat(read(backend, "a2", 10_000)).isNull();
            assertThat(backend.usedBytes()).isEqualTo(6 * 10_000L);
        }
    }

    @Test
    void orphansInBothDirectionsAreCleanedUpAtOpen() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 4))) {
            backend.writeBatch(objects("a", 4, 5_000, 8));
            backend.writeBatch(objects("b", 4, 5_000, 9));
        }
        List<Path> files = bucketFiles(tempDir);
        assertThat(files).hasSize(2);
        Files.delete(files.get(1)); // index entries without a bucket file
        Path stray = tempDir.resolve("buckets").resolve("999999.bucket"); // a bucket file without entries
        Files.write(stray, new byte[12_345]);
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir))) {
            Map<String, Long> scanned = new HashMap<>();
            backend.scan(scanned::put);
            assertThat(scanned).containsOnlyKeys("a0", "a1", "a2", "a3");
            assertThat(stray).doesNotExist();
            assertThat(backend.stats().diskBytes()).isEqualTo(Files.size(files.get(0)));
            backend.writeBatch(objects("c", 2, 5_000, 10));
            assertThat(read(backend, "c1", 5_000)).isEqualTo(value(1, 10, 5_000));
            assertThat(bucketFiles(tempDir)).as("new ids follow the highest id ever seen")
                    .contains(tempDir.resolve("buckets").resolve("1000000.bucket"));
        }
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir))) {
            assertThat(backend.stats().objects()).isEqualTo(6);
            assertThat(read(backend, "a2", 5_000)).isEqualTo(value(2, 8, 5_000));
        }
    }

    @Test
    void batchAboveTheCapacityFailsCleanlyAndLeavesEverythingElseAlone() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withCapacity(256 << 10).withBucketLimits(1 << 20, 4))) {
            backend.writeBatch(objects("small", 2, 10_000, 11));
            Map<String, MemorySegment> big = objects("big", 8, 40_000, 12);
            Map<String, byte[]> before = new HashMap<>();
            big.forEach((k, v) -> before.put(k, v.toArray(ValueLayout.JAVA_BYTE)));
            List<Path> filesBefore = bucketFiles(tempDir);
            assertThatThrownBy(() -> backend.writeBatch(big)).isInstanceOfSatisfying(TiffinException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.FILE_WRITE_FAIL);
                assertThat(e.getMessage()).contains("capacity").contains("nothing of the batch was stored");
            });
            big.keySet().forEach(k -> assertThat(backend.size(k)).as(k).isEmpty());
            big.forEach((k, v) -> assertThat(v.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(before.get(k)));
            assertThat(bucketFiles(tempDir)).isEqualTo(filesBefore);
            assertThat(read(backend, "small1", 10_000)).isEqualTo(value(1, 11, 10_000));
        }
    }

    @Test
    void fullFileSystemFailsTheBatchWithFileWriteFailAndNoPartialObjects() throws IOException {
        Path mountPoint = Files.createDirectories(tempDir.resolve("tiny"));
        assumeTrue(Mounts.mount("tmpfs", "size=8m", mountPoint), "cannot mount a small tmpfs (needs root)");
        try {
            // The configured capacity is above the real size: the disk's free space says no before a write starts.
            try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(mountPoint)
                    .withCapacity(1L << 30).withBucketLimits(4 << 20, 500))) {
                backend.writeBatch(objects("first", 2, 256 << 10, 13));
                Map<String, MemorySegment> big = objects("big", 24, 512 << 10, 14);
                long filesBefore = bucketFiles(mountPoint).size();
                assertThatThrownBy(() -> backend.writeBatch(big)).isInstanceOfSatisfying(TiffinException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.FILE_WRITE_FAIL);
                            assertThat(e.getMessage()).contains("the disk's free space")
                                    .contains("nothing of the batch was stored");
                        });
                big.keySet().forEach(k -> assertThat(backend.size(k)).as(k).isEmpty());
                assertThat(read(backend, "big0", 512 << 10)).isNull();
                assertThat(bucketFiles(mountPoint)).hasSize((int) filesBefore);
                assertThat(big.get("big5").toArray(ValueLayout.JAVA_BYTE))
                        .as("the caller's memory copy is untouched").isEqualTo(value(5, 14, 512 << 10));
                assertThat(read(backend, "first1", 256 << 10)).isEqualTo(value(1, 13, 256 << 10));
                backend.writeBatch(objects("after", 2, 256 << 10, 15));
                assertThat(read(backend, "after0", 256 << 10)).isEqualTo(value(0, 15, 256 << 10));
            }
            try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(mountPoint)
                    .withCapacity(1L << 30))) {
                Map<String, Long> scanned = new HashMap<>();
                backend.scan(scanned::put);
                assertThat(scanned).containsOnlyKeys("first0", "first1", "after0", "after1");
            }
        } finally {
            Mounts.unmount(mountPoint);
        }
    }

    /**
     * A disk smaller than the configured capacity, which its index shares, fills: the tier evicts by the disk's free
     * space and every write still succeeds. It used to fail every write from then on ("No space left on device")
     * while its files stayed below the high watermark of a capacity the disk could not hold.
     */
    @Test
    void aDiskThatFillsUpMakesTheTierEvictInsteadOfFailingEveryWrite() throws IOException {
        Path mountPoint = Files.createDirectories(tempDir.resolve("filling"));
        assumeTrue(Mounts.mount("tmpfs", "size=16m", mountPoint), "cannot mount a small tmpfs (needs root)");
        try {
            List<String> evicted = Collections.synchronizedList(new ArrayList<>());
            try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(mountPoint)
                    .withCapacity(1L << 30).withBucketLimits(1 << 20, 500))) {
                backend.listener(new StorageListener() {
                    @Override
                    public void evicting(List<String> keys) {
                        evicted.addAll(keys);
                    }

                    @Override
                    public void lost(List<String> keys) {
                    }
                });
                for (int round = 0; round < 40; round++) { // 40 MiB through a 16 MiB disk
                    backend.writeBatch(objects("r" + round + "-", 4, 256 << 10, round));
                    assertThat(read(backend, "r" + round + "-3", 256 << 10)).as("round " + round)
                            .isEqualTo(value(3, round, 256 << 10));
                }
                assertThat(evicted).contains("r0-0");
                assertThat(backend.stats().diskBytes()).isLessThan(16L << 20);
            }
        } finally {
            Mounts.unmount(mountPoint);
        }
    }

    @Test
    void restartKeepsObjectsAndDoesNotReuseBucketFiles() throws IOException {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 3))) {
            backend.writeBatch(objects("k", 10, 3_000, 16));
            assertThat(bucketFiles(tempDir)).hasSize(4);
        }
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)
                .withBucketLimits(1 << 20, 3))) {
            for (int i = 0; i < 10; i++) {
                assertThat(read(backend, "k" + i, 3_000)).isEqualTo(value(i, 16, 3_000));
            }
            backend.writeBatch(objects("n", 3, 3_000, 17));
            assertThat(bucketFiles(tempDir)).hasSize(5);
            assertThat(read(backend, "k9", 3_000)).isEqualTo(value(9, 16, 3_000));
        }
    }

    @Test
    void secondBackendOnTheSamePathFailsWithFileLockFail() {
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir))) {
            assertThat(backend.stats().objects()).isZero();
            assertThatThrownBy(() -> BucketStorageBackend.open(BucketStorageConfig.defaults(tempDir)))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.FILE_LOCK_FAIL));
        }
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
