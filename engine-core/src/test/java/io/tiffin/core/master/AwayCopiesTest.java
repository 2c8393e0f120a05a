package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The notes the master keeps of away nodes' SSD-only objects, and the floors that replace them. */
class AwayCopiesTest {
    /**
     * A node away past the TTL gets a floor unless it is back (its scan not complete yet); a floor covers the node's
     * copies at or under it and takes no new notes; a complete scan ends both.
     */
    @Test
    void theTtlGivesAFloorToNodesNotBackAndAScanEndsIt() {
        AwayCopies away = new AwayCopies();
        away.note("gone", "a", 5, 1_000);
        away.note("back", "b", 6, 1_000);

        Map<String, Integer> expired = away.expire(10_000, 5_000, 50, Set.of("back")::contains);

        assertThat(expired).containsExactly(Map.entry("gone", 1));
        assertThat(away.noted()).as("the node that is back keeps its note").isEqualTo(1);
        assertThat(away.deleteOnReturn("gone", "a", 5)).isTrue();
        assertThat(away.deleteOnReturn("gone", "z", 50)).as("any copy under the floor").isTrue();
        assertThat(away.deleteOnReturn("gone", "z", 51)).as("a later copy").isFalse();
        away.note("gone", "c", 7, 20_000);
        assertThat(away.noted()).as("a floor takes no notes").isEqualTo(1);

        away.scanned("gone");
        assertThat(away.deleteOnReturn("gone", "a", 5)).isFalse();
        assertThat(away.deleteOnReturn("back", "b", 6)).as("adopted: its note ends").isFalse();
        assertThat(away.noted()).isZero();
        assertThat(away.noneNoted()).isTrue();
    }

    /** A removal matching some of a node's notes takes them; one matching all of them gives the node a floor. */
    @Test
    void aRemovalOfAllOfANodesKeysGivesItAFloor() {
        AwayCopies away = new AwayCopies();
        away.note("n1", "a-1", 3, 0);
        away.note("n1", "b-1", 4, 0);
        away.note("n2", "a-2", 5, 0);

        var taken = away.takeMatching(k -> k.startsWith("a-"), 99);

        assertThat(taken).containsOnlyKeys("a-1");
        assertThat(taken.get("a-1")).containsExactly(new AwayCopies.Copy("n1", 3));
        assertThat(away.noted()).isEqualTo(1);
        assertThat(away.deleteOnReturn("n2", "a-2", 5)).as("n2's only note matched: a floor").isTrue();
        assertThat(away.take("b-1")).containsExactly(new AwayCopies.Copy("n1", 4));
        assertThat(away.noneNoted()).isTrue();
    }
}
