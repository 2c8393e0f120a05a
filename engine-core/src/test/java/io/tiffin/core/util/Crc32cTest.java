package io.tiffin.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class Crc32cTest {
    @Test
    void combinedChecksumsOfPiecesEqualTheChecksumOfTheWhole() {
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        for (int round = 0; round < 200; round++) {
            byte[] bytes = new byte[random.nextInt(0, 1 << 16)];
            random.nextBytes(bytes);
            int cut = bytes.length == 0 ? 0 : random.nextInt(0, bytes.length + 1);
            MemorySegment all = MemorySegment.ofArray(bytes);
            int first = Crc32c.of(all.asSlice(0, cut));
            int second = Crc32c.of(all.asSlice(cut));
            assertEquals(Crc32c.of(all), Crc32c.combine(first, second, bytes.length - cut),
                    "seed " + seed + ", round " + round + ", length " + bytes.length + ", cut " + cut);
        }
    }

    @Test
    void combineMatchesTheJdkOverManyPiecesAndLongZeroRuns() {
        byte[] zeros = new byte[3 << 20];
        CRC32C jdk = new CRC32C();
        jdk.update(new byte[] {1, 2, 3});
        jdk.update(zeros);
        int whole = (int) jdk.getValue();
        int combined = Crc32c.of(MemorySegment.ofArray(new byte[] {1, 2, 3}));
        for (int i = 0; i < 3; i++) {
            combined = Crc32c.combine(combined, Crc32c.of(MemorySegment.ofArray(new byte[1 << 20])), 1 << 20);
        }
        assertEquals(whole, combined);
        assertEquals(combined, Crc32c.combine(combined, Crc32c.of(MemorySegment.ofArray(new byte[0])), 0));
    }

    @Test
    void negativeLengthIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Crc32c.combine(0, 0, -1));
    }

    @Test
    void aLargeChecksumTakenOnSeveralThreadsIsTheChecksumOfTheWhole() throws Exception {
        SplittableRandom random = new SplittableRandom(42);
        long min = Crc32c.PARALLEL_MIN_BYTES;
        for (long size : new long[] {min - 1, min, min + 1, 3 * min + 12345, 33L << 20}) {
            byte[] bytes = new byte[(int) size];
            random.nextBytes(bytes);
            CRC32C plain = new CRC32C();
            plain.update(bytes);
            int expected = (int) plain.getValue();
            assertEquals(expected, Crc32c.ofLarge(MemorySegment.ofArray(bytes)), "heap, " + size);
            try (java.lang.foreign.Arena shared = java.lang.foreign.Arena.ofShared();
                 java.lang.foreign.Arena confined = java.lang.foreign.Arena.ofConfined()) {
                MemorySegment off = shared.allocate(size);
                off.copyFrom(MemorySegment.ofArray(bytes));
                assertEquals(expected, Crc32c.ofLarge(off), "shared, " + size);
                assertEquals(expected, Crc32c.ofLarge(off.asSlice(0, size)), "a slice, " + size);
                MemorySegment mine = confined.allocate(size); // only this thread may read it: checksummed here
                mine.copyFrom(MemorySegment.ofArray(bytes));
                assertEquals(expected, Crc32c.ofLarge(mine), "confined, " + size);
                // from a thread of the pool itself
                assertEquals(expected, (int) java.util.concurrent.ForkJoinPool.commonPool()
                        .submit(() -> Crc32c.ofLarge(off)).get(), "from the pool, " + size);
            }
            bytes[(int) (size / 2)] ^= 1;
            assertNotEquals(expected, Crc32c.ofLarge(MemorySegment.ofArray(bytes)), "one bit apart, " + size);
        }
    }

    @Test
    void aLargeChecksumOfFreedMemoryIsAnErrorNotAHang() {
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
        MemorySegment freed = arena.allocate(Crc32c.PARALLEL_MIN_BYTES * 2);
        arena.close();
        assertThrows(IllegalStateException.class, () -> Crc32c.ofLarge(freed));
    }
}
