package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The failed SSD changes a node keeps for its next task poll: order, the per-poll share, the cap, a put-back. */
class FailedDiskChangesTest {
    private final FailedDiskChanges kept = new FailedDiskChanges("n1", FailedDiskChanges.Kind.DEADLINES);

    @Test
    void aPollTakesTheOldestFirstAndAFailedPollPutsThemBack() {
        kept.add(new FailedDiskChanges.Batch(List.of("a", "b"), List.of(1L, 2L)));
        kept.add(new FailedDiskChanges.Batch(List.of("c"), List.of(3L)));

        FailedDiskChanges.Batch taken = kept.take();
        assertThat(taken.keys()).containsExactly("a", "b", "c");
        assertThat(taken.versions()).containsExactly(1L, 2L, 3L);
        assertThat(kept.take().isEmpty()).as("told once").isTrue();

        kept.putBack(taken); // the poll did not reach the master
        assertThat(kept.take().keys()).containsExactly("a", "b", "c");
    }

    @Test
    void aPollNamesAtMostItsShareAndTheNodeKeepsAtMostTheCap() {
        int over = FailedDiskChanges.MAX_KEPT + 10;
        List<String> keys = IntStream.range(0, over).mapToObj(i -> "k" + i).toList();
        kept.add(new FailedDiskChanges.Batch(keys, new ArrayList<>(Collections.nCopies(over, 7L))));

        int told = 0;
        for (FailedDiskChanges.Batch b = kept.take(); !b.isEmpty(); b = kept.take()) {
            assertThat(b.keys().size()).isLessThanOrEqualTo(FailedDiskChanges.MAX_PER_POLL);
            told += b.keys().size();
        }
        assertThat(told).as("the newest beyond the cap are dropped").isEqualTo(FailedDiskChanges.MAX_KEPT);
    }

    @Test
    void aBatchNeedsAVersionPerKey() {
        assertThatThrownBy(() -> new FailedDiskChanges.Batch(List.of("a", "b"), List.of(1L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 keys and 1 versions");
    }
}
