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

    /** The hint {@code hints} keeps for {@code d} (remembered under a scratch key). */
    private static ReadHints.Hint hintOf(ReadHints hints, ReplicaDescriptor d) {
        hints.remember("scratch", List.of(d), x -> false);
        return hints.get("scratch");
    }

    private static void assertNames(ReadHints.Hint h, ReplicaDescriptor d) {
        assertThat(h).isNotNull();
        assertThat(List.of(h.replicaId(), h.offset(), h.size(), h.mountEpoch()))
                .containsExactly(d.replicaId(), d.offset(), d.size(), d.mountEpoch());
        assertThat(List.of(h.segment(), h.endpoint())).containsExactly(d.segment(), d.endpoint());
    }

    @Test
    void onlyTheVeryReplicaConfirmsAHint() {
        ReadHints hints = new ReadHints(10);
        ReplicaDescriptor named = memory(5, "h:1", "s", 4096, 100, 3);
        ReadHints.Hint hint = hintOf(hints, named);
        assertNames(hint, named);
        assertThat(hints.confirms(at(100, named), hint)).isTrue();
        // a second replica first, the hinted one after it: still that replica
        assertThat(hints.confirms(at(100, memory(9, "h:2", "t", 0, 100, 1), named), hint)).isTrue();
        // same place, another replica (removed and put again), another mount, another node, segment, offset
        assertThat(hints.confirms(at(100, memory(6, "h:1", "s", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "s", 4096, 100, 4)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:9", "s", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "u", 4096, 100, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(100, memory(5, "h:1", "s", 0, 100, 3)), hint)).isFalse();
        // another size of the object or of the replica
        assertThat(hints.confirms(at(200, memory(5, "h:1", "s", 4096, 200, 3)), hint)).isFalse();
        assertThat(hints.confirms(at(200, named), hint)).isFalse();
        // only an SSD copy left
        ReplicaDescriptor disk = new ReplicaDescriptor(5, ReplicaType.LOCAL_DISK, ReplicaStatus.COMPLETE, "n", "n", "h:1",
                4096, 100, 3);
        assertThat(hints.confirms(at(100, disk), hint)).isFalse();
        assertThat(hints.confirms(at(100), hint)).isFalse();
        assertThat(hints.stats()).isEqualTo(new ReadHints.Stats(2, 9, 1));
    }

    @Test
    void remembersTheFirstMemoryReplicaThatANodeChecks() {
        ReadHints hints = new ReadHints(10);
        ReplicaDescriptor disk = new ReplicaDescriptor(1, ReplicaType.LOCAL_DISK, ReplicaStatus.COMPLETE, "n", "n", "h:1",
                0, 100, 0);
        ReplicaDescriptor first = memory(2, "h:1", "s", 0, 100, 1);
        ReplicaDescriptor second = memory(3, "h:2", "t", 0, 100, 1);
        hints.remember("k", List.of(disk, first, second), d -> false);
        assertNames(hints.get("k"), first);
        // any replica read through a mapping: the usual read copies it, no speculation; the old hint goes
        hints.remember("k", List.of(first, second), d -> d == second);
        assertThat(hints.get("k")).isNull();
        hints.remember("k", List.of(second), d -> false);
        assertNames(hints.get("k"), second);
        // a descriptor without a mount epoch is never read speculatively
        hints.remember("k", List.of(memory(4, "h:1", "s", 0, 100, 0)), d -> false);
        assertThat(hints.get("k")).isNull();
        hints.remember("k", List.of(second), d -> false);
        hints.remember("k", List.of(disk), d -> false);
        assertThat(hints.get("k")).as("SSD only").isNull();
        hints.remember("a/1", List.of(second), d -> false);
        hints.remember("b/1", List.of(memory(7, "h:2", "t", 4096, 100, 1)), d -> false);
        assertThat(hints.get("a/1").place()).as("one place per segment, shared").isSameAs(hints.get("b/1").place());
        // a segment name now served elsewhere gets a place of its own
        hints.remember("c/1", List.of(memory(8, "h:3", "t", 0, 100, 1)), d -> false);
        assertThat(hints.get("c/1").endpoint()).isEqualTo("h:3");
        hints.invalidateMatching(k -> k.startsWith("a/"));
        assertThat(hints.get("a/1")).isNull();
        assertThat(hints.get("b/1")).isNotNull();
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
