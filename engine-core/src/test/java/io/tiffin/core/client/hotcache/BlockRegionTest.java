package io.tiffin.core.client.hotcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.tiffin.core.util.Crc32c;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link BlockRegion}: bytes into and out of scattered blocks. */
class BlockRegionTest {
    @Test
    void anObjectCopiedIntoScatteredBlocksComesBackWhole() {
        try (BlockRegion region = new BlockRegion(8 * 4096, 4096)) {
            assertThat(region.blockCount()).isEqualTo(8);
            byte[] value = LocalHotCacheTest.content("k", 1, 3 * 4096 - 100);
            int[] blocks = {6, 1, 4};
            assertThat(region.blocksFor(value.length)).isEqualTo(3);
            List<ByteBuf> parts = LocalHotCacheTest.parts(value, 1000);
            try {
                region.copyIn(blocks, parts, value.length);
            } finally {
                parts.forEach(ByteBuf::release);
            }
            byte[] out = new byte[value.length];
            region.copyOut(blocks, value.length, MemorySegment.ofArray(out), false);
            assertThat(out).isEqualTo(value);
            assertThat(region.slices(blocks, value.length)).extracting(MemorySegment::byteSize)
                    .containsExactly(4096L, 4096L, 4096L - 100);
        }
    }

    @Test
    void aRegionIsZeroBackedMemoryAndOneLargerThanTheAddressSpaceIsAClearError() {
        try (BlockRegion region = new BlockRegion(4 * (1L << 20), 1L << 20)) {
            MemorySegment all = region.slices(new int[] {0, 1, 2, 3}, 4L << 20).getFirst();
            for (long off = 0; off < all.byteSize(); off += 4096) {
                assertThat(all.get(java.lang.foreign.ValueLayout.JAVA_BYTE, off)).isZero();
            }
        }
        assertThatThrownBy(() -> new BlockRegion(1L << 50, 1L << 24))
                .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.INVALID_PARAMS))
                .hasMessageStartingWith("hotcache.size = " + (1L << 50) + ": cannot reserve that much memory")
                .hasMessageEndingWith("lower hotcache.size");
    }

    @Test
    void theChecksumOfAnObjectInScatteredBlocksIsTheValuesChecksumAndChangesNothing() {
        long block = 3L << 20;
        try (BlockRegion region = new BlockRegion(6 * block, block)) {
            for (int size : new int[] {1, 12345, (int) Crc32c.PARALLEL_MIN_BYTES + 1, (int) (2 * block + 12345)}) {
                byte[] value = new byte[size];
                new java.util.SplittableRandom(size).nextBytes(value);
                int[] blocks = {3, 0, 5};
                region.copyIn(blocks, MemorySegment.ofArray(value), size);
                assertThat(region.crc32c(blocks, size)).as("size %d", size)
                        .isEqualTo(Crc32c.of(MemorySegment.ofArray(value)));
                byte[] out = new byte[size];
                region.copyOut(blocks, size, MemorySegment.ofArray(out), true);
                assertThat(out).as("the blocks are unchanged").isEqualTo(value);
            }
            byte[] value = new byte[(int) (2 * block)];
            region.copyIn(new int[] {1, 4}, MemorySegment.ofArray(value), value.length);
            int whole = region.crc32c(new int[] {1, 4}, value.length);
            value[value.length - 3] ^= 1;
            region.copyIn(new int[] {1, 4}, MemorySegment.ofArray(value), value.length);
            assertThat(region.crc32c(new int[] {1, 4}, value.length)).as("one bit apart").isNotEqualTo(whole);
        }
    }

    @Test
    void aShortFillIsRefused() {
        try (BlockRegion region = new BlockRegion(2 * 4096, 4096)) {
            List<ByteBuf> parts = LocalHotCacheTest.parts(new byte[4096], 4096);
            try {
                assertThatThrownBy(() -> region.copyIn(new int[] {0, 1}, parts, 5000))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("4096 bytes");
            } finally {
                parts.forEach(ByteBuf::release);
            }
        }
    }

    @Test
    void sizesOutOfRangeAreRejected() {
        assertThatThrownBy(() -> new BlockRegion(100, 4096)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BlockRegion(4096, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
