package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link CompactList}: the replica lists' list, against an ArrayList as the reference. */
class CompactListTest {
    @Test
    void growsFromNoneToOneToManyAndBack() {
        CompactList<String> list = CompactList.create();
        assertThat(list).isEmpty();
        list.add("a");
        assertThat(list).containsExactly("a");
        list.add("b");
        list.add(0, "z");
        list.add("c");
        assertThat(list).containsExactly("z", "a", "b", "c");
        assertThat(list.removeIf(s -> s.equals("a") || s.equals("b"))).isTrue();
        assertThat(list).containsExactly("z", "c").doesNotContain("a");
        assertThat(list.remove("z")).isTrue();
        assertThat(list).containsExactly("c");
        assertThat(list.set(0, "d")).isEqualTo("c");
        assertThat(list.get(0)).isEqualTo("d");
        list.clear();
        assertThat(list).isEmpty();
        assertThat(CompactList.create(List.of("x", "y"))).containsExactly("x", "y");
    }

    @Test
    void badIndexesAndElementsAreRefused() {
        CompactList<Object> list = CompactList.create();
        assertThatThrownBy(() -> list.get(0)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> list.add(1, "a")).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> list.add(null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> list.add(new Object[0])).isInstanceOf(IllegalArgumentException.class);
        list.add("a");
        assertThatThrownBy(() -> list.remove(1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> list.set(0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThat(list).containsExactly("a");
    }

    @Test
    void iteratingWhileAddingFailsLoudly() {
        CompactList<String> list = CompactList.create(List.of("a", "b"));
        assertThatThrownBy(() -> {
            for (String s : list) {
                list.add(s + "!");
            }
        }).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void randomOperationsAgreeWithAnArrayList() {
        CompactList<Integer> list = CompactList.create();
        List<Integer> reference = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(25);
        for (int op = 0; op < 20_000; op++) {
            int size = reference.size();
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    if (size < 6) { // replica lists stay short
                        int at = random.nextInt(size + 1);
                        list.add(at, op);
                        reference.add(at, op);
                    }
                }
                case 2 -> {
                    if (size > 0) {
                        int at = random.nextInt(size);
                        assertThat(list.remove(at)).isEqualTo(reference.remove(at));
                    }
                }
                default -> {
                    if (size > 0) {
                        int at = random.nextInt(size);
                        assertThat(list.set(at, -op)).isEqualTo(reference.set(at, -op));
                    }
                }
            }
            assertThat(list).containsExactlyElementsOf(reference);
        }
    }
}
