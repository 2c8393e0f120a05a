package io.tiffin.plugin.hotcache;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.hotcache.PolicySimulator;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** {@code reuse-interval} keeps what it predicts to be read soonest, and a stable part of a loop LRU cannot hold. */
class ReuseIntervalPolicyTest {
    private static final int CAPACITY = 100;

    /** {@code passes} passes over the keys {@code from} to {@code from + length - 1}, in order. */
    private static long[] loop(long from, int length, int passes) {
        long[] keys = new long[length * passes];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = from + i % length;
        }
        return keys;
    }

    private static long[] concat(long[] a, long[] b) {
        long[] keys = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, keys, a.length, b.length);
        return keys;
    }

    @Test
    void aLoopLargerThanTheCacheKeepsAStablePartWhereLruHitsNothing() {
        long[] keys = loop(0, 150, 40);
        double lru = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        PolicySimulator.Result result = PolicySimulator.replay(new ReuseIntervalPolicy("reuse-interval", CAPACITY),
                keys, null);
        assertThat(lru).isZero();
        // the first 100 keys stay; a newcomer is predicted (one loop ahead) later than every resident
        assertThat(result.hits()).isEqualTo(39L * CAPACITY);
    }

    @Test
    void aKeyReadOnceIsNotAdmittedIntoAFullCacheAndItsSecondReadIs() {
        ReuseIntervalPolicy policy = new ReuseIntervalPolicy("reuse-interval", 2);
        PolicySimulator cache = new PolicySimulator(policy);
        // 1 and 2 fill the free room, each read again 10 reads apart
        long[] warm = {1, 2, 11, 12, 13, 14, 15, 16, 17, 18, 1, 2};
        for (long key : warm) {
            cache.access(key, 1);
        }
        assertThat(cache.isResident(1)).isTrue();
        assertThat(cache.isResident(2)).isTrue();
        assertThat(cache.isResident(11)).as("read once, cache full").isFalse();
        // 3 read twice, 2 reads apart (at 12 and 14): predicted at 16, sooner than both residents, each predicted
        // 10 reads after its last read (1 at 20, 2 at 21)
        cache.access(3, 1);
        assertThat(cache.isResident(3)).isFalse();
        cache.access(4, 1);
        cache.access(3, 1);
        assertThat(cache.isResident(3)).isTrue();
        assertThat(cache.isResident(1)).isTrue();
        assertThat(cache.isResident(2)).as("predicted farthest").isFalse();
    }

    @Test
    void aLoopThatStopsDriftsOutForTheOneThatReplacesIt() {
        // 80 keys looped, then 80 others: the old loop's predicted reads fall overdue and the new one takes over
        long[] keys = concat(loop(0, 80, 20), loop(1_000, 80, 20));
        ReuseIntervalPolicy policy = new ReuseIntervalPolicy("reuse-interval", CAPACITY);
        PolicySimulator cache = new PolicySimulator(policy);
        long lateHits = 0;
        long lateReads = 0;
        for (int i = 0; i < keys.length; i++) {
            boolean hit = cache.access(keys[i], 1);
            if (i >= keys.length - 10 * 80) {
                lateReads++;
                lateHits += hit ? 1 : 0;
            }
        }
        assertThat((double) lateHits / lateReads).isEqualTo(1.0);
    }

    @Test
    void popularKeysReadBeyondLrusReachUnderOneTimeKeysStay() {
        // 200 popular keys, each read every 400 reads, between one-time keys: LRU (100 blocks) keeps none. The
        // 200 one-time keys between two reads of a popular key are within the history (800 keys).
        long[] keys = new long[200_000];
        long fresh = 1_000_000;
        for (int i = 0; i < keys.length; i++) {
            keys[i] = i % 2 == 0 ? (i / 2) % 200 : fresh++;
        }
        double lru = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        double reuse = PolicySimulator.replay(new ReuseIntervalPolicy("reuse-interval", CAPACITY), keys, null)
                .hitRatio();
        assertThat(lru).isZero();
        // half of the popular keys fit: close to 25% of the reads
        assertThat(reuse).isGreaterThan(0.24);
    }
}
