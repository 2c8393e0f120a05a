package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Which replicas a read tries first while nodes are suspected, and how long a note lasts. */
class SuspectNodesTest {
    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final SuspectNodes suspects = new SuspectNodes(now::get);

    private static ReplicaDescriptor on(String endpoint) {
        return new ReplicaDescriptor(endpoint.hashCode(), ReplicaType.MEMORY, ReplicaStatus.COMPLETE, "s-" + endpoint,
                "n-" + endpoint, endpoint, 0, 10);
    }

    @Test
    void suspectedNodesGoLastNeverAwayAndTheirNotesEnd() {
        List<ReplicaDescriptor> abc = List.of(on("a"), on("b"), on("c"));
        assertThat(suspects.order(abc)).isSameAs(abc);

        suspects.note("a");
        assertThat(suspects.order(abc)).extracting(ReplicaDescriptor::endpoint).containsExactly("b", "c", "a");
        suspects.note("c");
        assertThat(suspects.order(abc)).extracting(ReplicaDescriptor::endpoint).containsExactly("b", "a", "c");
        suspects.note("b");
        assertThat(suspects.order(abc)).as("all suspected: the master's order").isSameAs(abc);

        suspects.answered("b");
        assertThat(suspects.order(abc)).extracting(ReplicaDescriptor::endpoint).containsExactly("b", "a", "c");
        now.addAndGet(SuspectNodes.TTL_NANOS + 1);
        assertThat(suspects.order(abc)).as("the notes ended").isSameAs(abc);
        assertThat(suspects.suspected("a")).isFalse();
    }

    @Test
    void theMemoryIsBounded() {
        for (int i = 0; i < SuspectNodes.MAX_NODES + 10; i++) {
            suspects.note("n" + i);
        }
        assertThat(suspects.suspected("n" + (SuspectNodes.MAX_NODES + 9))).as("the latest note").isTrue();
        long noted = java.util.stream.IntStream.range(0, SuspectNodes.MAX_NODES + 10)
                .filter(i -> suspects.suspected("n" + i)).count();
        assertThat(noted).isLessThanOrEqualTo(SuspectNodes.MAX_NODES);
    }
}
