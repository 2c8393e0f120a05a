package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link MetadataShard}'s list of puts in progress: linked through the objects, oldest first, an ended put unlinked
 * from anywhere in it, due puts taken from its head only, and a complete object left holding no side fields.
 */
class MetadataShardPutListTest {
    private final MetadataShard shard = new MetadataShard();

    private static ObjectMetadata put(String key, long startMillis) {
        return new ObjectMetadata(key, "writer", 4096, startMillis, false, false, List.of());
    }

    @Test
    void endedPutsLeaveFromAnyPlaceAndDuePutsComeFromTheHeadInStartOrder() {
        ObjectMetadata a = put("a", 100);
        ObjectMetadata b = put("b", 200);
        ObjectMetadata c = put("c", 300);
        ObjectMetadata d = put("d", 400);
        for (ObjectMetadata m : List.of(a, b, c, d)) {
            shard.putStarted(m);
        }
        shard.putStarted(b); // listed once only
        assertThat(shard.putsListed()).isEqualTo(4);

        shard.putEnded(b); // the middle
        shard.putEnded(d); // the tail
        shard.putEnded(d); // twice: nothing
        assertThat(shard.putsListed()).isEqualTo(2);
        assertThat(b.inPutList()).isFalse();

        assertThat(shard.takePutsStartedBy(99)).as("none due yet").isEmpty();
        ObjectMetadata e = put("e", 500);
        shard.putStarted(e); // after the old tail was unlinked: appended behind c
        assertThat(shard.takePutsStartedBy(300)).containsExactly(a, c);
        assertThat(shard.putsListed()).isEqualTo(1);
        assertThat(a.inPutList()).isFalse();
        assertThat(shard.takePutsStartedBy(Long.MAX_VALUE)).containsExactly(e);
        assertThat(shard.takePutsStartedBy(Long.MAX_VALUE)).isEmpty();
        assertThat(shard.putsListed()).isZero();
    }

    @Test
    void aPutThatEndsAndCompletesHoldsNoSideFields() {
        ObjectMetadata m = put("k", 100);
        shard.putStarted(m);
        assertThat(m.holdsRareFields()).isTrue();
        shard.putEnded(m);
        m.complete();
        assertThat(m.holdsRareFields()).as("the list's links went with the put").isFalse();
    }
}
