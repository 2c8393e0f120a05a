package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.coordination.FileStateStore;
import io.tiffin.core.transport.proto.DiskFloor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster facts' records of SSD deletions that counted as done without their node, and away floors ({@link
 * DiskFloors}).
 */
class ClusterFactsTest {
    @TempDir
    Path dir;

    private final List<FileStateStore> stores = new ArrayList<>();

    @AfterEach
    void close() {
        stores.forEach(FileStateStore::close);
    }

    private ClusterFacts claimed() {
        stores.forEach(FileStateStore::close);
        stores.clear();
        FileStateStore store = new FileStateStore(dir.resolve("state"));
        stores.add(store);
        ClusterFacts facts = new ClusterFacts(store, () -> { });
        facts.claim("m:1", 100, 100);
        return facts;
    }

    @Test
    void lostDeletionsAreListedDurablyWithTheirLatestVersionsAndClearedOnlyAsSeen() {
        ClusterFacts facts = claimed();
        facts.recordLostDeletions("n1", List.of("a", "b"), List.of(5L, 7L));
        facts.recordLostDeletions("n1", List.of("a", "c"), List.of(9L, 0L)); // a again, later; c of any version

        DiskFloor seen = claimed().diskFloor("n1"); // as the next leader reads them
        assertThat(seen.getVersion()).isZero();
        assertThat(seen.getKeysList()).containsExactly("a", "b", "c");
        assertThat(seen.getKeyVersionsList()).containsExactly(9L, 7L, 0L);
        DiskFloors.Lost lost = new DiskFloors.Lost(seen.getVersion(), java.util.Map.of("a", 9L, "b", 7L, "c", 0L));
        assertThat(lost.covers("a", 9)).isTrue();
        assertThat(lost.covers("a", 10)).as("a later put's copy").isFalse();
        assertThat(lost.covers("c", 123)).isTrue();
        assertThat(lost.covers("d", 1)).as("a key never removed").isFalse();

        ClusterFacts facts2 = claimed();
        facts2.recordLostDeletions("n1", List.of("d"), List.of(3L)); // added after `seen` was read
        facts2.clearDiskFloor("n1", seen);
        assertThat(facts2.diskFloor("n1").getKeysList()).contains("d");
        facts2.clearDiskFloor("n1", facts2.diskFloor("n1"));
        assertThat(claimed().diskFloor("n1")).isNull();
    }

    @Test
    void keysPastTheBudgetBecomeAFloorAboveEveryVersionHandedOut() {
        ClusterFacts facts = claimed();
        facts.recordLostDeletions("n2", List.of("small"), List.of(1L));
        List<String> keys = new ArrayList<>();
        List<Long> versions = new ArrayList<>();
        for (int i = 0; keys.size() * 1000L <= ClusterFacts.MAX_LISTED_KEY_BYTES; i++) {
            keys.add(("k" + i + "-").repeat(1000).substring(0, 1000));
            versions.add(2L);
        }

        facts.recordLostDeletions("n1", keys, versions);

        DiskFloor n1 = claimed().diskFloor("n1");
        assertThat(n1.getKeysCount()).isZero();
        assertThat(n1.getVersion()).isGreaterThanOrEqualTo(100 + ClusterFacts.ID_BLOCK);
        assertThat(claimed().diskFloor("n2").getKeysList()).as("another node's list stays").containsExactly("small");
        ClusterFacts again = claimed();
        again.recordLostDeletions("n1", List.of("x"), List.of(5L));
        assertThat(again.diskFloor("n1")).as("covered by the floor: unchanged").isEqualTo(n1);
    }

    /**
     * An away floor is kept with the node's listed deletions, applies to masters of other terms only, and one of an
     * earlier term is not replaced by a later term's (that master has no keys from before its term either).
     */
    @Test
    void anAwayFloorAppliesToOtherTermsAndSurvivesListedDeletions() {
        ClusterFacts facts = claimed();
        facts.recordAwayFloor("n1", 3);
        long floor = facts.diskFloor("n1").getAwayFloor();
        assertThat(floor).isPositive();
        facts.recordLostDeletions("n1", List.of("a"), List.of(5L));

        DiskFloor seen = claimed().diskFloor("n1");
        assertThat(seen.getAwayFloor()).isEqualTo(floor);
        assertThat(seen.getAwayTerm()).isEqualTo(3);
        assertThat(seen.getKeysList()).containsExactly("a");

        DiskFloors floors = new DiskFloors();
        ClusterFacts read = claimed();
        long[] term = {3};
        floors.enable(read, null, () -> term[0]);
        assertThat(floors.lostOn("n1").covers("b", floor)).as("its own term's floor").isFalse();
        assertThat(floors.lostOn("n1").covers("a", 5)).isTrue();
        term[0] = 4;
        assertThat(floors.lostOn("n1").covers("b", floor)).as("a later term's master").isTrue();
        assertThat(floors.lostOn("n1").covers("b", floor + 1)).isFalse();

        read.recordAwayFloor("n1", 4);
        assertThat(read.diskFloor("n1").getAwayTerm()).as("the earlier term's floor stays").isEqualTo(3);
    }
}
