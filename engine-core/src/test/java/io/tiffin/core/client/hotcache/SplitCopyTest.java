package io.tiffin.core.client.hotcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.core.util.Crc32c;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** {@link SplitCopy}: copies shared with the helper thread land whole and in place; failures reach the caller. */
class SplitCopyTest {
    private static final long BLOCK = 3L << 20;

    @Test
    void aLargeCopyOutOfScatteredBlocksIsWholeWithAndWithoutTheHelper() {
        for (boolean split : new boolean[] {true, false}) {
            try (BlockRegion region = new BlockRegion(6 * BLOCK, BLOCK, new SplitCopy(split));
                 Arena arena = Arena.ofShared()) {
                byte[] value = random(1, (int) (2 * BLOCK + 12345));
                int[] blocks = {5, 0, 3};
                region.copyIn(blocks, MemorySegment.ofArray(value), value.length);
                for (boolean aroundCaches : new boolean[] {true, false}) {
                    MemorySegment out = arena.allocate(value.length + 10);
                    region.copyOut(blocks, value.length, out, aroundCaches);
                    assertThat(out.asSlice(0, value.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(value);
                    assertThat(out.get(ValueLayout.JAVA_BYTE, value.length)).isZero(); // nothing past the object
                    byte[] heap = new byte[value.length];
                    region.copyOut(blocks, value.length, MemorySegment.ofArray(heap), aroundCaches);
                    assertThat(heap).isEqualTo(value);
                }
            }
        }
    }

    @Test
    void aChecksummedCopyTakesTheChecksumOfTheBytesItCopiesWithAndWithoutTheHelper() {
        for (boolean split : new boolean[] {true, false}) {
            try (BlockRegion region = new BlockRegion(6 * BLOCK, BLOCK, new SplitCopy(split));
                 Arena arena = Arena.ofShared()) {
                for (int size : new int[] {1, 12345, (int) SplitCopy.MIN_SPLIT_BYTES - 1, (int) (2 * BLOCK + 12345)}) {
                    byte[] value = random(size, size);
                    MemorySegment source = arena.allocate(size);
                    source.copyFrom(MemorySegment.ofArray(value));
                    int[] blocks = {4, 1, 2};
                    int expected = Crc32c.of(MemorySegment.ofArray(value));
                    assertThat(region.copyInChecksummed(blocks, source, size)).as("size %d, split %s", size, split)
                            .isEqualTo(expected);
                    byte[] out = new byte[size];
                    region.copyOut(blocks, size, MemorySegment.ofArray(out), false);
                    assertThat(out).isEqualTo(value);
                    assertThat(region.copyInChecksummed(blocks, MemorySegment.ofArray(value), size))
                            .as("from the heap").isEqualTo(expected);
                }
                byte[] value = random(7, (int) (2 * BLOCK));
                int whole = Crc32c.of(MemorySegment.ofArray(value));
                value[value.length - 3] ^= 1;
                assertThat(region.copyInChecksummed(new int[] {0, 5}, MemorySegment.ofArray(value), value.length))
                        .as("one bit apart").isNotEqualTo(whole);
            }
        }
    }

    @Test
    void aCopyAroundTheCachesTakesChunksLargeEnoughForNonTemporalStoresInPairs() {
        assertThat(SplitCopy.Job.chunkAroundCaches(2 * SplitCopy.LARGE_COPY_BYTES - 1)).as("too small for two")
                .isEqualTo(SplitCopy.CHUNK_BYTES);
        for (long piece : new long[] {2 * SplitCopy.LARGE_COPY_BYTES, 10_000_000, 16L << 20, 16L << 20 | 1, 1L << 30}) {
            long chunk = SplitCopy.Job.chunkAroundCaches(piece);
            long chunks = (piece + chunk - 1) / chunk;
            assertThat(chunk).as("piece %d", piece).isGreaterThanOrEqualTo(SplitCopy.LARGE_COPY_BYTES);
            assertThat(chunks % 2).as("piece %d in %d chunks", piece, chunks).isZero();
            assertThat(piece - (chunks - 1) * chunk).as("the last chunk of %d", piece)
                    .isGreaterThanOrEqualTo(SplitCopy.LARGE_COPY_BYTES - chunks);
        }
        assertThat(SplitCopy.Job.chunkAroundCaches(10_000_000)).isEqualTo(5_000_000);
    }

    @Test
    void aLargeCopyAroundTheCachesOfSeveralPiecesIsWholeAndInPlace() {
        long block = 16L << 20;
        try (BlockRegion region = new BlockRegion(3 * block, block, new SplitCopy(true)); Arena arena = Arena.ofShared()) {
            byte[] value = random(3, (int) (2 * block - 777));
            int[] blocks = {2, 0};
            region.copyIn(blocks, MemorySegment.ofArray(value), value.length);
            MemorySegment out = arena.allocate(value.length + 1);
            region.copyOut(blocks, value.length, out, true);
            assertThat(out.asSlice(0, value.length).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(value);
            assertThat(out.get(ValueLayout.JAVA_BYTE, value.length)).isZero();
        }
    }

    @Test
    void aChecksumIsOnlyGivenByAChecksumJobThatRan() {
        SplitCopy copier = new SplitCopy(true);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment from = arena.allocate(8L << 20);
            SplitCopy.Job plain = copier.job(from, arena.allocate(8L << 20), 1, false).add(0, 0, 8L << 20);
            copier.run(plain);
            assertThatThrownBy(plain::crc32c).isInstanceOf(IllegalStateException.class);
            SplitCopy.Job notRun = copier.checksumJob(from, arena.allocate(8L << 20), 1).add(0, 0, 8L << 20);
            assertThatThrownBy(notRun::crc32c).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void concurrentCopiesEachGetTheirOwnBytes() throws Exception {
        try (BlockRegion region = new BlockRegion(8 * BLOCK, BLOCK, new SplitCopy(true));
             ExecutorService pool = Executors.newFixedThreadPool(4)) {
            List<byte[]> values = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                values.add(random(10 + i, (int) (2 * BLOCK - i * 1000)));
                region.copyIn(new int[] {2 * i, 2 * i + 1}, MemorySegment.ofArray(values.get(i)), values.get(i).length);
            }
            List<Future<Boolean>> checks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int k = i;
                checks.add(pool.submit(() -> {
                    for (int round = 0; round < 20; round++) {
                        byte[] out = new byte[values.get(k).length];
                        region.copyOut(new int[] {2 * k, 2 * k + 1}, out.length, MemorySegment.ofArray(out), k % 2 == 0);
                        if (!java.util.Arrays.equals(out, values.get(k))) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (Future<Boolean> f : checks) {
                assertThat(f.get()).isTrue();
            }
        }
    }

    @Test
    void aCopyFromFreedMemoryFailsOnTheCaller() {
        SplitCopy copier = new SplitCopy(true);
        try (Arena target = Arena.ofShared()) {
            Arena source = Arena.ofShared();
            MemorySegment from = source.allocate(16L << 20);
            MemorySegment to = target.allocate(16L << 20);
            source.close();
            SplitCopy.Job job = copier.job(from, to, 1, true).add(0, 0, 16L << 20);
            assertThatThrownBy(() -> copier.run(job)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aConfinedTargetIsCopiedByTheCallerAlone() {
        SplitCopy copier = new SplitCopy(true);
        try (Arena source = Arena.ofShared(); Arena confined = Arena.ofConfined()) {
            byte[] value = random(7, 6 << 20);
            MemorySegment from = source.allocate(value.length);
            MemorySegment.copy(MemorySegment.ofArray(value), 0, from, 0, value.length);
            MemorySegment to = confined.allocate(value.length);
            copier.run(copier.job(from, to, 1, true).add(0, 0, value.length));
            assertThat(to.toArray(ValueLayout.JAVA_BYTE)).isEqualTo(value);
        }
    }

    private static byte[] random(long seed, int size) {
        byte[] b = new byte[size];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }
}
