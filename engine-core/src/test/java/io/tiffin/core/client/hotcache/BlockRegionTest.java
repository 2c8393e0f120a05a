package io.tiffin.core.client.hotcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
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
            region.copyOut(blocks, value.length, MemorySegment.ofArray(out));
            assertThat(out).isEqualTo(value);
            assertThat(region.slices(blocks, value.length)).extracting(MemorySegment::byteSize)
                    .containsExactly(4096L, 4096L, 4096L - 100);
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
