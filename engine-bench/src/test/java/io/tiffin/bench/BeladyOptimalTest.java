package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.api.spi.hotcache.PolicySimulator;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BeladyOptimalTest {

    @Test
    void knownSmallSequences() {
        // Textbook example: 1 2 3 4 1 2 5 1 2 3 4 5 with 3 frames has 7 faults under OPT (5 hits).
        assertThat(BeladyOptimal.hits(new long[] {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5}, 3)).isEqualTo(5);
        // Bypassing the one-time 9 keeps 1 and 2 resident.
        assertThat(BeladyOptimal.hits(new long[] {1, 2, 9, 1, 2}, 2)).isEqualTo(2);
        assertThat(BeladyOptimal.hits(new long[] {1, 1, 1}, 1)).isEqualTo(2);
        // Keeps 1 (read again sooner) and bypasses 2.
        assertThat(BeladyOptimal.hits(new long[] {1, 2, 1, 2}, 1)).isEqualTo(1);
        assertThat(BeladyOptimal.hits(new long[0], 5)).isZero();
    }

    @Test
    void withEnoughRoomEveryRepeatHits() {
        assertThat(BeladyOptimal.hits(new long[] {5, 6, 5, 7, 6, 5}, 3)).isEqualTo(3);
    }

    @Test
    void neverWorseThanAnyInstalledPolicy() {
        long seed = System.nanoTime();
        System.out.println("neverWorseThanAnyInstalledPolicy seed = " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        long[] keys = new long[20_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = random.nextInt(3) == 0 ? random.nextInt(50) : random.nextInt(3_000);
        }
        try (PluginRegistry registry = PluginRegistry.classPathOnly()) {
            for (String name : registry.names(io.tiffin.core.plugin.ExtensionPoint.HOT_CACHE_POLICY)) {
                for (long capacity : new long[] {1, 10, 100, 1_000}) {
                    HotCachePolicy policy = registry.hotCachePolicy(name).create(capacity);
                    long hits = PolicySimulator.replay(policy, keys, null).hits();
                    assertThat(BeladyOptimal.hits(keys, capacity)).as(name + " at " + capacity).isGreaterThanOrEqualTo(hits);
                }
            }
        }
    }

    @Test
    void rejectsAnEmptyCache() {
        assertThatIllegalArgumentException().isThrownBy(() -> BeladyOptimal.hits(new long[] {1}, 0))
                .withMessageContaining("capacityBlocks = 0");
    }
}
