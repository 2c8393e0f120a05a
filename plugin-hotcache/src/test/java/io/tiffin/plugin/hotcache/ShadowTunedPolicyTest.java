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

    /**
     * 800 popular keys, each visit a pair of reads four reads apart, between keys read once (six per visit): every
     * visit's second read says the key is worth keeping, long before a frequency sketch has counted it often.
     */
    private static long[] pairedVisitsBetweenOneTimeKeys(int reads) {
        SplittableRandom random = new SplittableRandom(3);
        long[] keys = new long[reads];
        long fresh = 1_000_000;
        int i = 0;
        while (i < reads) {
            long popular = random.nextInt(800);
            keys[i++] = popular;
            for (int j = 0; j < 3 && i < reads; j++) {
                keys[i++] = fresh++;
            }
            if (i < reads) {
                keys[i++] = popular;
            }
            for (int j = 0; j < 3 && i < reads; j++) {
                keys[i++] = fresh++;
            }
        }
        return keys;
    }

    /**
     * 3,000 popular keys read in turn, each every 6,000 reads (LRU forgets them between reads, and TinyLFU's
     * sketch, aged every ten capacities of reads, counts each once or twice), between keys read once.
     */
    private static long[] largeLoopBetweenOneTimeKeys(int reads) {
        long[] keys = new long[reads];
        long fresh = 1_000_000;
        for (int i = 0; i < reads; i++) {
            keys[i] = i % 2 == 0 ? (i / 2) % 3_000 : fresh++;
        }
        return keys;
    }

    @Test
    void whereALoopLargerThanTheCacheRecursTheReuseIntervalShadowLeadsAndKeepsAPartOfIt() {
        long[] keys = largeLoopBetweenOneTimeKeys(300_000);
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        double tunedRatio = PolicySimulator.replay(tuned, keys, null).hitRatio();
        double without = PolicySimulator.replay(new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY, true, false), keys,
                null).hitRatio();
        double lruRatio = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        assertThat(tuned.leaderShare()).as("leader").isEqualTo(ShadowTunedPolicy.REUSE_INTERVAL);
        assertThat(lruRatio).isZero();
        // a third of the loop fits: at most a sixth of the reads hit
        assertThat(tunedRatio).as("tuned %.4f against the tuned policy without reuse-interval %.4f", tunedRatio,
                without).isGreaterThan(0.15).isGreaterThan(without + 0.05);
    }

    @Test
    void whereKeysComeBackInPairsTheS3FifoShadowLeadsAndBeatsEveryWindow() {
        long[] keys = pairedVisitsBetweenOneTimeKeys(300_000);
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        double tunedRatio = PolicySimulator.replay(tuned, keys, null).hitRatio();
        double withoutS3Fifo = PolicySimulator.replay(new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY, false, false), keys,
                null).hitRatio();
        double s3Fifo = PolicySimulator.replay(new S3FifoPolicy(CAPACITY), keys, null).hitRatio();
        assertThat(tuned.leaderShare()).as("leader").isEqualTo(ShadowTunedPolicy.S3_FIFO);
        assertThat(tunedRatio).as("tuned %.4f against s3-fifo %.4f", tunedRatio, s3Fifo).isGreaterThan(s3Fifo - 0.005);
        assertThat(tunedRatio).as("tuned %.4f against W-TinyLFU shadows only %.4f", tunedRatio, withoutS3Fifo)
                .isGreaterThan(withoutS3Fifo + 0.01);
    }

    @Test
    void whereAPopularSetRecursBeyondLrusReachItAFrequencyMindedShadowLeadsAndBeatsLru() {
        long[] keys = popularUnderOneTimeKeys(200_000);
        ShadowTunedPolicy tuned = new ShadowTunedPolicy("w-tinylfu-tuned", CAPACITY);
        double tunedRatio = PolicySimulator.replay(tuned, keys, null).hitRatio();
        double lruRatio = PolicySimulator.replay(new LruPolicy(CAPACITY), keys, null).hitRatio();
        // a frequency-minded leader: a small window, S3-FIFO, whose small queue drops the one-time keys, or
        // reuse-interval, which takes no key read once
        assertThat(tuned.leaderShare()).as("leader's window").isIn(ShadowTunedPolicy.REUSE_INTERVAL,
                ShadowTunedPolicy.S3_FIFO, 0.01, 0.05, 0.2);
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
