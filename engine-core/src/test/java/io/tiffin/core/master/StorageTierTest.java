package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-node queues of {@link StorageTier}: deletes kept while a node is away, and what happens past their cap. */
class StorageTierTest {
    private final AtomicLong versions = new AtomicLong(100);

    /**
     * Past the cap of pending deletes, the oldest go; a floor of every version handed out by then takes their place,
     * so a copy whose delete was dropped is deleted rather than adopted when the node reports it; a later put's copy
     * is not covered, and the floor ends with the node's next complete scan.
     */
    @Test
    void deletesDroppedPastTheCapLeaveAFloorThatCoversTheirCopies() {
        StorageTier tier = new StorageTier(TierSettings.defaults(), versions::get, 3);
        for (int i = 1; i <= 3; i++) {
            tier.queueDelete("n1", "k" + i, i);
        }
        assertThat(tier.overflowCovers("n1", 1)).as("within the cap").isFalse();

        versions.set(200);
        tier.queueDelete("n1", "k4", 4);

        assertThat(tier.hasPendingDelete("n1", "k1")).as("the oldest dropped").isFalse();
        assertThat(tier.overflowCovers("n1", 1)).as("its copy").isTrue();
        assertThat(tier.overflowCovers("n1", 200)).isTrue();
        assertThat(tier.overflowCovers("n1", 201)).as("a later put's copy").isFalse();
        assertThat(tier.overflowCovers("n2", 1)).as("another node").isFalse();
        assertThat(tier.poll("n1", 0, 0, List.of(), List.of()).deletes()).containsExactly("k2", "k3", "k4");

        tier.scanComplete("n1");
        assertThat(tier.overflowCovers("n1", 1)).isFalse();
    }
}
