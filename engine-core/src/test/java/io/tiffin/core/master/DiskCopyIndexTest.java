package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DiskCopyIndexTest {
    @Test
    void followsAReferenceSetThroughGrowthAndShrinking() {
        DiskCopyIndex index = new DiskCopyIndex();
        Set<String> reference = new HashSet<>();
        SplittableRandom random = new SplittableRandom(11);
        for (int round = 0; round < 4; round++) {
            for (int i = 0; i < 20_000; i++) { // grows through many doublings, with removals among the adds
                String key = "k" + random.nextInt(30_000);
                if (random.nextInt(4) == 0) {
                    index.remove("n", key);
                    reference.remove(key);
                } else {
                    index.add("n", key);
                    reference.add(key);
                }
            }
            assertThat(index.count("n")).isEqualTo(reference.size());
            assertThat(index.keysOf(List.of("n"))).containsExactlyInAnyOrderElementsOf(reference);
            for (String key : List.copyOf(reference)) { // then shrinks down to a few
                if (random.nextInt(10) != 0) {
                    index.remove("n", key);
                    reference.remove(key);
                }
            }
            assertThat(index.keysOf(List.of("n"))).containsExactlyInAnyOrderElementsOf(reference);
        }
    }

    @Test
    void nodesAreApartAndUnknownOnesHoldNothing() {
        DiskCopyIndex index = new DiskCopyIndex();
        index.add("a", "k1");
        index.add("a", "k1"); // once
        index.add("b", "k1");
        index.add("b", "k2");
        index.remove("c", "k1");
        index.remove("a", "absent");
        assertThat(index.count("a")).isEqualTo(1);
        assertThat(index.keysOf(List.of("a", "b"))).containsExactlyInAnyOrder("k1", "k1", "k2");
        assertThat(index.keysOf(List.of("c"))).isEmpty();
        index.remove("b", "k1");
        assertThat(index.keysOf(List.of("b"))).containsExactly("k2");
    }
}
