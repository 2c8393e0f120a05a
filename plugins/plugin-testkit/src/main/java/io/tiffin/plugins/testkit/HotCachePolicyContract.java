package io.tiffin.plugins.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.api.spi.hotcache.PolicySimulator;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link HotCachePolicy} must pass. Extend it in a JUnit 5 test of the plugin and
 * implement {@link #create}; the suite drives the policy through {@link PolicySimulator}, the
 * reference cache of the SPI's protocol, which itself fails on any protocol violation (a victim that
 * is not resident, -1 while room is needed, a resident weight that disagrees).
 *
 * <p>Randomised cases use a seeded {@link SplittableRandom}; the seed is printed so a failure can be
 * replayed. Each test creates its own policies, so the suite is safe to run in parallel.
 *
 * <p>Not thread-safe: JUnit runs each test on one thread with a fresh policy.
 */
public abstract class HotCachePolicyContract {
    /** {@code -Dtiffin.seed=N} replays a run, as in the other suites ({@code tiffin.test.seed} still works). */
    private static final long SEED = Long.getLong("tiffin.seed", Long.getLong("tiffin.test.seed", System.nanoTime()));

    /** A new, empty policy for a cache of {@code capacityBlocks} blocks. */
    protected abstract HotCachePolicy create(long capacityBlocks);

    private static SplittableRandom random(String test) {
        System.out.println(test + " seed = " + SEED + " (replay with -Dtiffin.seed=" + SEED + ")");
        return new SplittableRandom(SEED);
    }

    @Test
    void neverHoldsMoreThanCapacityWithMultiBlockEntries() {
        SplittableRandom random = random("neverHoldsMoreThanCapacityWithMultiBlockEntries");
        for (long capacity : new long[] {1, 2, 7, 64, 500}) {
            HotCachePolicy policy = create(capacity);
            PolicySimulator cache = new PolicySimulator(policy);
            for (int i = 0; i < 20_000; i++) {
                long key = random.nextInt(10) < 7 ? random.nextInt(50) : random.nextInt(5_000);
                int weight = 1 + (int) (Math.floorMod(key * 31, 7));
                cache.access(key, weight);
                if (random.nextInt(100) == 0) {
                    cache.invalidate(random.nextInt(5_000));
                }
                assertThat(cache.residentBlocks()).as("capacity %s, step %s", capacity, i).isLessThanOrEqualTo(capacity);
                assertThat(policy.residentBlocks()).isEqualTo(cache.residentBlocks());
            }
        }
    }

    @Test
    void victimIsAResidentEntryOrMinusOneWhenEmpty() {
        SplittableRandom random = random("victimIsAResidentEntryOrMinusOneWhenEmpty");
        HotCachePolicy policy = create(32);
        assertThat(policy.victim()).isEqualTo(-1);
        Set<Long> resident = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            long key = random.nextInt(200);
            if (resident.contains(key)) {
                policy.onHit(key);
            } else {
                policy.onMiss(key);
                if (policy.admit(key, 1)) {
                    while (resident.size() + 1 > 32) {
                        long victim = policy.victim();
                        assertThat(resident).as("victim at step %s", i).contains(victim);
                        resident.remove(victim);
                        policy.onRemove(victim);
                    }
                    resident.add(key);
                    policy.onInsert(key, 1);
                }
            }
        }
        for (long key : Set.copyOf(resident)) {
            policy.onRemove(key);
        }
        assertThat(policy.residentBlocks()).isZero();
        assertThat(policy.victim()).isEqualTo(-1);
    }

    @Test
    void onRemoveForgetsTheEntry() {
        HotCachePolicy policy = create(4);
        for (long key = 1; key <= 4; key++) {
            assertThat(policy.admit(key, 1)).isTrue();
            policy.onInsert(key, 1);
        }
        policy.onRemove(2);
        assertThat(policy.residentBlocks()).isEqualTo(3);
        Set<Long> victims = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            long victim = policy.victim();
            assertThat(victim).isNotEqualTo(2L);
            victims.add(victim);
            policy.onRemove(victim);
        }
        assertThat(victims).containsExactlyInAnyOrder(1L, 3L, 4L);
        assertThat(policy.victim()).isEqualTo(-1);
    }

    @Test
    void unknownKeysAreIgnored() {
        HotCachePolicy policy = create(8);
        policy.onHit(42);
        policy.onRemove(42);
        policy.onMiss(42);
        assertThat(policy.residentBlocks()).isZero();
        assertThat(policy.victim()).isEqualTo(-1);
        policy.onInsert(7, 3);
        policy.onRemove(8);
        policy.onHit(9);
        assertThat(policy.residentBlocks()).isEqualTo(3);
        assertThat(policy.victim()).isEqualTo(7);
    }

    @Test
    void insertingAResidentKeyReplacesIt() {
        HotCachePolicy policy = create(8);
        policy.onInsert(7, 3);
        policy.onInsert(7, 5);
        assertThat(policy.residentBlocks()).isEqualTo(5);
        policy.onRemove(7);
        assertThat(policy.residentBlocks()).isZero();
    }

    @Test
    void rejectsEntriesHeavierThanTheCacheAndNonPositiveWeights() {
        HotCachePolicy policy = create(8);
        assertThat(policy.capacityBlocks()).isEqualTo(8);
        assertThat(policy.admit(1, 9)).isFalse();
        assertThatIllegalArgumentException().isThrownBy(() -> policy.admit(1, 0))
                .withMessageContaining("weight = 0");
        assertThatIllegalArgumentException().isThrownBy(() -> policy.onInsert(1, -1))
                .withMessageContaining("weight = -1");
    }

    @Test
    void aSmallHotSetReachesAHighHitRatio() {
        SplittableRandom random = random("aSmallHotSetReachesAHighHitRatio");
        PolicySimulator cache = new PolicySimulator(create(100));
        long hotHits = 0;
        long hotReads = 0;
        for (int i = 0; i < 50_000; i++) {
            boolean hot = random.nextBoolean();
            long key = hot ? random.nextInt(20) : 1_000 + random.nextInt(1_000_000);
            boolean hit = cache.access(key, 1 + (int) (key % 2));
            if (hot && i >= 10_000) {
                hotReads++;
                hotHits += hit ? 1 : 0;
            }
        }
        assertThat((double) hotHits / hotReads).as("hit ratio of 20 hot keys in a 100-block cache")
                .isGreaterThan(0.9);
    }

    @Test
    void decisionsAreDeterministicForTheSameInput() {
        long seed = new SplittableRandom(SEED).nextLong();
        assertThat(run(seed)).isEqualTo(run(seed));
    }

    private String run(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        PolicySimulator cache = new PolicySimulator(create(64));
        StringBuilder trace = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            long key = random.nextInt(3) == 0 ? random.nextInt(40) : random.nextInt(2_000);
            trace.append(cache.access(key, 1 + random.nextInt(3)) ? '1' : '0');
        }
        return cache.result() + " " + trace;
    }
}
