package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadHintsTest {
    private static ReplicaDescriptor memory(long id, String endpoint, String segment, long offset, long size, long epoch) {
        return new ReplicaDescriptor(id, ReplicaType.MEMORY, ReplicaStatus.COMPLETE, segment, "n", endpoint, offset, size,
                epoch);
    }

    private static ObjectLocation at(long size, ReplicaDescriptor... replicas) {
        return new ObjectLocation("k", size, 7, 10_000, List.of(replicas));
    }

    @Test
    void onlyTheVeryReplicaConfirmsAHint() {
        ReadHints hints = new ReadHints(10);
        ReplicaDescriptor hint = memory(5, "h:1", "s", 4096, 100, 3);
        assertThat(hints.confirms(at(100, hint), hint)).isTrue();
        // a second replica first, the hinted one after it: still that replica
        assertThat(hints.confirms(at(100, memory(9, "h:2", "t", 0, 100, 1), hint), hint)).isTrue();
        // same place, another replica (removed and put again), another mount, another node, segment, offset
        assertThat(hints.confirms(at(100, memory(6, "h:1", "s", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "s", 4096, 100, 4)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:9", "s", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "u", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "s", 0, 100, 3)), hint)).isFalse();
        // another size of the object or of the replica
        assertThat(hints.confirms(at(200, memory(5, "h:1", "s", 4096, 200, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(200, hint), hint)).isFalse();
        // only an SSD copy left
        ReplicaDescriptor disk = new ReplicaDescriptor(5, ReplicaType.LOCAL_DISK, ReplicaStatus.COMPLETE, "n", "n", "h:1",
                4096, 100, 3);
        assertThat(hints.confirms(at(100, disk), hint)).isFalse();
        assertThat(hints.confirms(at(100), hint)).isFalse();
        assertThat(hints.stats()).isEqualTo(new ReadHints.Stats(2, 9, 0));
    }

    @Test
    void remembersTheFirstMemoryReplicaThatANodeChecks() {
        ReadHints hints = new ReadHints(10);
        ReplicaDescriptor disk = new ReplicaDescriptor(1, ReplicaType.LOCAL_DISK, ReplicaStatus.COMPLETE, "n", "n", "h:1",
                0, 100, 0);
        ReplicaDescriptor first = memory(2, "h:1", "s", 0, 100, 1);
        ReplicaDescriptor second = memory(3, "h:2", "t", 0, 100, 1);
        hints.remember("k", List.of(disk, first, second), d -> false);
        assertThat(hints.get("k")).isEqualTo(first);
        // read through a mapping: no speculation, and the old hint goes
        hints.remember("k", List.of(first, second), d -> d == first);
        assertThat(hints.get("k")).isNull();
        hints.remember("k", List.of(second), d -> false);
        assertThat(hints.get("k")).isEqualTo(second);
        // a descriptor without a mount epoch is never read speculatively
        hints.remember("k", List.of(memory(4, "h:1", "s", 0, 100, 0)), d -> false);
        assertThat(hints.get("k")).isNull();
        hints.remember("k", List.of(second), d -> false);
        hints.remember("k", List.of(disk), d -> false);
        assertThat(hints.get("k")).as("SSD only").isNull();
        hints.remember("a/1", List.of(second), d -> false);
        hints.remember("b/1", List.of(second), d -> false);
        hints.invalidateMatching(k -> k.startsWith("a/"));
        assertThat(hints.get("a/1")).isNull();
        assertThat(hints.get("b/1")).isEqualTo(second);
        hints.invalidate("b/1");
        assertThat(hints.get("b/1")).isNull();
    }

    @Test
    void keepsAtMostItsSize() {
        ReadHints hints = new ReadHints(3);
        for (int i = 0; i < 50; i++) {
            hints.remember("k" + i, List.of(memory(i, "h:1", "s", 0, 100, 1)), d -> false);
        }
        assertThat(hints.stats().size()).isLessThanOrEqualTo(3);
        assertThatThrownBy(() -> new ReadHints(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("client.read-hint-cache-size");
    }
}
