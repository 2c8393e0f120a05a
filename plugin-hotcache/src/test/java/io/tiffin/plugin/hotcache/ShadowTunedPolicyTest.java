package io.tiffin.plugin.hotcache;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.hotcache.PolicySimulator;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@code w-tinylfu-tuned} follows the shadow that hits best: TinyLFU where frequency pays, LRU where recency does. */
class ShadowTunedPolicyTest {
    private static final int CAPACITY = 1000;

    /**
     * 500 popular keys, each read about every 4,000 reads (4 capacities apart: LRU forgets them between reads),
     * under a stream of keys read once.
     */
    private static long[] popularUnderOneTimeKeys(int reads) {
        SplittableRandom random = new SplittableRandom(7);
        long[] keys = new long[reads];
        long fresh = 1_000_000;
        for (int i = 0; i < reads; i++) {
            keys[i] = random.nextInt(8) == 0 ? random.nextInt(500) : fresh++;
        }
        return keys;
    }

    /** Keys re-read once, 600 reads later (within the capacity: LRU keeps them; a frequency filter may not). */
    private static long[] rereadSoon(int reads) {
        long[] keys = new long[reads];
        for (int i = 0; i < reads; i++) {
            keys[i] = (i / 600) % 2 == 0 ? i : i - 600;
        }
        return keys;
    }

    @Test
    void whereAPopularSetRecursBeyondLrusReachItLeadsWithASmallWindowAndBeatsLru() {
        long[] keys = popularUnderOneTimeKeys(200_000);
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        double tunedRatio = PolicySimulator.replay(tuned, keys, null).hitRatio();
        double lruRatio = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        assertThat(tuned.leaderShare()).as("leader's window").isLessThanOrEqualTo(0.2);
        assertThat(tunedRatio).as("tuned %.4f against lru %.4f", tunedRatio, lruRatio).isGreaterThan(1.5 * lruRatio);
    }

    @Test
    void whereRecencyWinsItStaysWithLru() {
        long[] keys = rereadSoon(100_000);
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        double tunedRatio = PolicySimulator.replay(tuned, keys, null).hitRatio();
        double lruRatio = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        assertThat(lruRatio).isGreaterThan(0.45);
        assertThat(tunedRatio).as("tuned %.4f against lru %.4f", tunedRatio, lruRatio).isGreaterThan(lruRatio - 0.005);
    }

    @Test
    void aLeaderChangeEvictsWhatTheNewLeaderDoesNotHoldFirst() {
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        PolicySimulator cache = new PolicySimulator(tuned);
        for (long key : popularUnderOneTimeKeys(200_000)) {
            cache.access(key, 1);
        }
        // the cache's residents are (nearly) the leader's: most popular keys are resident
        int popularResident = 0;
        for (long key = 0; key < 500; key++) {
            popularResident += cache.isResident(key) ? 1 : 0;
        }
        assertThat(popularResident).isGreaterThan(400);
        assertThat(tuned.residentBlocks()).isEqualTo(cache.residentBlocks()).isLessThanOrEqualTo(CAPACITY);
    }
}
