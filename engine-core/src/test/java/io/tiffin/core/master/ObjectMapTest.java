package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link ObjectMap}: the open-addressing table of a shard's objects, against a HashMap as the reference. */
class ObjectMapTest {
    private static ObjectMetadata object(String key) {
        return new ObjectMetadata(key, "w", 1, 0, false, false, List.of());
    }

    @Test
    void getPutRemoveAndReplace() {
        ObjectMap map = new ObjectMap();
        ObjectMetadata a = object("a");
        assertThat(map.put(a)).isNull();
        assertThat(map.get("a")).isSameAs(a);
        assertThat(map.containsKey("b")).isFalse();
        ObjectMetadata a2 = object("a");
        assertThat(map.put(a2)).as("the replaced object").isSameAs(a);
        assertThat(map.size()).isEqualTo(1);
        assertThat(map.get("a")).isSameAs(a2);
        assertThat(map.remove("b")).isNull();
        assertThat(map.remove("a")).isSameAs(a2);
        assertThat(map.isEmpty()).isTrue();
        assertThat(map.get("a")).isNull();
    }

    @Test
    void growsAndShrinksWithItsKeys() {
        ObjectMap map = new ObjectMap();
        int initial = map.capacity();
        for (int i = 0; i < 10_000; i++) {
            map.put(object("k" + i));
        }
        assertThat(map.capacity()).isGreaterThanOrEqualTo((int) (10_000 / ObjectMap.MAX_LOAD))
                .isLessThanOrEqualTo((int) (2 * 10_000 / ObjectMap.MAX_LOAD));
        for (int i = 0; i < 10_000; i++) {
            assertThat(map.get("k" + i)).as("k%d", i).isNotNull();
        }
        for (int i = 0; i < 9_990; i++) {
            assertThat(map.remove("k" + i)).isNotNull();
        }
        assertThat(map.size()).isEqualTo(10);
        assertThat(map.capacity()).as("shrunk back").isLessThanOrEqualTo(64);
        for (int i = 9_990; i < 10_000; i++) {
            assertThat(map.get("k" + i)).isNotNull();
        }
        for (int i = 9_990; i < 10_000; i++) {
            map.remove("k" + i);
        }
        assertThat(map.capacity()).isEqualTo(initial);
    }

    @Test
    void randomOperationsAgreeWithAHashMap() {
        // Keys with colliding home slots exercise the backward shift of removal: a lookup must still find every key
        // of a probe run after a hole opened before it.
        ObjectMap map = new ObjectMap();
        Map<String, ObjectMetadata> reference = new HashMap<>();
        SplittableRandom random = new SplittableRandom(25);
        for (int op = 0; op < 50_000; op++) {
            String key = "key-" + random.nextInt(3_000);
            switch (random.nextInt(3)) {
                case 0 -> {
                    ObjectMetadata m = object(key);
                    assertThat(map.put(m)).isSameAs(reference.put(key, m));
                }
                case 1 -> assertThat(map.remove(key)).isSameAs(reference.remove(key));
                default -> assertThat(map.get(key)).isSameAs(reference.get(key));
            }
            assertThat(map.size()).isEqualTo(reference.size());
        }
        for (Map.Entry<String, ObjectMetadata> e : reference.entrySet()) {
            assertThat(map.get(e.getKey())).isSameAs(e.getValue());
        }
        List<ObjectMetadata> walked = new ArrayList<>();
        map.values().forEach(walked::add);
        assertThat(walked).containsExactlyInAnyOrderElementsOf(reference.values());
        assertThat(map.keysCopy()).containsExactlyInAnyOrderElementsOf(reference.keySet());
    }

    @Test
    void iteratingWhileTheMapChangesFailsLoudly() {
        ObjectMap map = new ObjectMap();
        for (int i = 0; i < 10; i++) {
            map.put(object("k" + i));
        }
        assertThatThrownBy(() -> {
            for (ObjectMetadata m : map.values()) {
                map.remove(m.key);
            }
        }).isInstanceOf(ConcurrentModificationException.class);
        int left = map.size();
        for (String key : map.keysCopy()) {
            map.remove(key); // a copy may be walked while the map changes
        }
        assertThat(left).isEqualTo(9);
        assertThat(map.isEmpty()).isTrue();
    }

    /** 2^bits distinct keys with one String.hashCode ("Aa" and "BB" hash alike): one mixed hash, one run of slots. */
    private static List<String> keysOfOneHash(int bits) {
        List<String> keys = new ArrayList<>();
        for (int n = 0; n < 1 << bits; n++) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < bits; i++) {
                b.append((n >> i & 1) == 0 ? "Aa" : "BB");
            }
            keys.add(b.toString());
        }
        return keys;
    }

    @Test
    void keysOfEqualHashAndTheHashZeroAreKeptApart() {
        List<String> same = keysOfOneHash(7); // 128 keys, one hash
        assertThat(same.stream().mapToInt(String::hashCode).distinct().count()).isEqualTo(1);
        assertThat("".hashCode()).isZero();
        ObjectMap map = new ObjectMap();
        Map<String, ObjectMetadata> reference = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        List<String> keys = new ArrayList<>(same);
        keys.add(""); // hash 0: the empty-slot mark, so it must be mapped to another hash
        for (int i = 0; i < 200; i++) {
            keys.add("k" + i); // other keys interleaved into the same table
        }
        for (int step = 0; step < 20_000; step++) {
            String key = keys.get(random.nextInt(keys.size()));
            if (random.nextInt(3) == 0) {
                assertThat(map.remove(key)).as("remove %s", key).isSameAs(reference.remove(key));
            } else {
                ObjectMetadata m = object(key);
                assertThat(map.put(m)).as("put %s", key).isSameAs(reference.put(key, m));
            }
            if (step % 500 == 0) {
                for (String k : keys) {
                    assertThat(map.get(k)).as("get %s at step %d", k, step).isSameAs(reference.get(k));
                }
            }
        }
        assertThat(map.size()).isEqualTo(reference.size());
        for (String k : keys) {
            assertThat(map.get(k)).isSameAs(reference.get(k));
        }
    }
}
