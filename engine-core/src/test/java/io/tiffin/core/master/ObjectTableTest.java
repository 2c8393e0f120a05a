package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.core.keys.KeyQuery;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ObjectTable}: shard locking of batches, the key index, forgetting under cached locations, ids. */
class ObjectTableTest {
    private final ManualTicker ticker = new ManualTicker();
    private final ObjectTable table = new ObjectTable(ticker, 4);

    private ObjectMetadata add(String key, boolean complete) {
        ObjectMetadata m = new ObjectMetadata(key, "w", key.length(), 0, false, false, List.of());
        if (complete) {
            m.complete();
        }
        table.inShard(key, shard -> {
            table.insert(shard, m);
            return null;
        });
        return m;
    }

    @Test
    void keysAreValidatedByLengthInCharsAndInBytes() {
        assertThat(table.validateKey("abcd")).isEqualTo(ErrorCode.OK);
        assertThat(table.validateKey("abcde")).isEqualTo(ErrorCode.INVALID_KEY);
        assertThat(table.validateKey("ééé")).as("6 bytes of UTF-8").isEqualTo(ErrorCode.INVALID_KEY);
        // the limit is 4 bytes: one char of any kind fits without being measured, more are measured
        assertThat(table.validateKey("\u20ac")).as("3 bytes of UTF-8").isEqualTo(ErrorCode.OK);
        assertThat(table.validateKey("\u20ac\u20ac")).as("6 bytes of UTF-8").isEqualTo(ErrorCode.INVALID_KEY);
        assertThat(table.validateKey("\ud83d\ude00")).as("a surrogate pair: 4 bytes").isEqualTo(ErrorCode.OK);
        assertThat(table.validateKey("a\ud83d\ude00")).as("5 bytes").isEqualTo(ErrorCode.INVALID_KEY);
        assertThat(table.validateKey("")).isEqualTo(ErrorCode.INVALID_KEY);
        assertThat(table.validateKey(null)).isEqualTo(ErrorCode.INVALID_KEY);
    }

    @Test
    void aBatchVisitsEveryIndexOnceUnderItsKeysShardLock() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            keys.add("k" + i);
        }
        keys.add(null); // left to the action to reject
        int[] visits = new int[keys.size()];
        String ofShardZero = java.util.stream.IntStream.iterate(0, j -> j + 1).mapToObj(j -> "z" + j)
                .filter(k -> MetadataShard.indexOf(k) == 0).findFirst().orElseThrow();
        table.forEachByShard(keys, (shard, i) -> {
            visits[i]++;
            assertThat(shard.lock.isHeldByCurrentThread()).isTrue();
            String key = keys.get(i);
            MetadataShard own = table.inShard(key == null ? ofShardZero : key, s -> s);
            assertThat((Object) shard).as("the shard of %s", key).isSameAs(own);
        });
        assertThat(visits).containsOnly(1);
    }

    /** The key count is a counter kept with the shards, the key index listing the same keys. */
    @Test
    void theKeyCountFollowsInsertsReplacementsAndForgets() {
        add("a", true);
        add("b", true);
        assertThat(table.keyCount()).isEqualTo(2);
        add("a", true); // put over the key's object: no new key
        assertThat(table.keyCount()).isEqualTo(2);
        table.inShard("b", shard -> { // a replacing put: forgotten and inserted under one lock hold
            table.forget(shard, "b", true);
            ObjectMetadata next = new ObjectMetadata("b", "w", 1, 0, false, false, List.of());
            next.complete();
            table.insert(shard, next, true);
            return null;
        });
        assertThat(table.keyCount()).isEqualTo(2);
        table.inShard("c", shard -> {
            table.forget(shard, "c"); // not there
            return null;
        });
        table.inShard("a", shard -> {
            table.forget(shard, "a");
            return null;
        });
        assertThat(table.keyCount()).isEqualTo(1);
        assertThat(table.listKeys("", 10).keys().keySet()).containsExactly("b");
    }

    @Test
    void forgettingAnObjectStillReadableThroughCachedLocationsHoldsItsKey() {
        ObjectMetadata cached = add("a", true);
        add("b", true);
        cached.cachedUntilMillis = ticker.millis() + 100;
        long now = ticker.millis();

        table.inShard("a", shard -> {
            table.forget(shard, "a");
            return null;
        });
        table.inShard("b", shard -> {
            table.forget(shard, "b");
            return null;
        });

        assertThat(table.keyCount()).isZero();
        long heldA = table.inShard("a", shard -> shard.heldUntil("a", now));
        long heldB = table.inShard("b", shard -> shard.heldUntil("b", now));
        assertThat(heldA).isEqualTo(now + 100);
        assertThat(heldB).as("no client cached it").isZero();
        assertThat(table.listKeys("", 10).keys()).isEmpty();
    }

    @Test
    void listingWalksTheIndexInKeyOrderSkippingUnfinishedObjects() {
        add("p2", true);
        add("p1", true);
        add("p3", false);
        add("p4", true);
        add("q1", true);

        ListedKeys all = table.listKeys("p", 10);
        assertThat(all.keys()).containsExactly(java.util.Map.entry("p1", 2L), java.util.Map.entry("p2", 2L),
                java.util.Map.entry("p4", 2L));
        assertThat(all.truncated()).isFalse();
        ListedKeys two = table.listKeys("p", 2);
        assertThat(two.keys().keySet()).containsExactly("p1", "p2");
        assertThat(two.truncated()).isTrue();
    }

    @Test
    void prefixQueriesComeFromTheIndexInKeyOrderOthersFromAScan() {
        for (String k : Arrays.asList("b2", "a1", "b1", "b3", "c1")) {
            add(k, true);
        }
        List<String> seen = new ArrayList<>();
        assertThat(table.forEachMatch(KeyQuery.compile("^b"), true, (shard, key) -> seen.add(key))).isTrue();
        assertThat(seen).containsExactly("b1", "b2", "b3");

        seen.clear();
        assertThat(table.forEachMatch(KeyQuery.compile("^b"), false, (shard, key) -> seen.add(key))).isFalse();
        assertThat(seen).containsExactlyInAnyOrder("b1", "b2", "b3");
    }

    @Test
    void versionsAndReplicaIdsStartAboveWhatAnEarlierRunHandedOut() {
        long floor = ticker.millis() << 12;
        assertThat(table.nextVersion()).isGreaterThan(floor);
        assertThat(table.nextReplicaId()).isGreaterThan(floor);
        assertThat(table.nextVersion()).isEqualTo(floor + 2);
    }
}
