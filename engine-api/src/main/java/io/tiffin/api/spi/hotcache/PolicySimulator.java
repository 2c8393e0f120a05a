package io.tiffin.api.spi.hotcache;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A cache without memory that drives a {@link HotCachePolicy} exactly as the protocol in its Javadoc
 * describes, counting hits and misses: the reference driver used by the policy contract tests and by
 * the trace simulator ({@code tiffin bench cache-sim}).
 *
 * <p>Each {@link #access} is one read of an object of a given weight. A resident entry of the same
 * weight is a hit; a resident entry of another weight is a stale copy (the object changed size), which
 * is dropped and counted as a miss, as the real cache does with version or size mismatches. On a miss
 * the simulator asks {@link HotCachePolicy#admit}, evicts {@link HotCachePolicy#victim()} until the entry
 * fits, and inserts it.
 *
 * <p>The simulator checks the policy as it goes and throws {@link IllegalStateException} naming the
 * policy and the key when the policy breaks the protocol: a victim that is not resident, -1 while
 * room is still needed, or a resident weight that disagrees with the simulator's.
 *
 * <p>Not thread-safe: one thread drives one simulator, like the cache's maintenance thread.
 */
public final class PolicySimulator {
    private final HotCachePolicy policy;
    private final long capacity;
    private final Map<Long, Integer> resident = new HashMap<>();
    private long residentBlocks;
    private long hits;
    private long misses;
    private long evictions;
    private long rejections;

    /** A simulator over an empty cache of {@code policy.capacityBlocks()} blocks. */
    public PolicySimulator(HotCachePolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy is null");
        this.capacity = policy.capacityBlocks();
        if (capacity < 1) {
            throw new IllegalArgumentException("policy " + policy.name() + " capacityBlocks = " + capacity
                    + " (expected: >= 1)");
        }
    }

    /**
     * Replays {@code keys} (each of weight {@code weights[i]}, or 1 if {@code weights} is null) through
     * {@code policy} and returns the counts.
     */
    public static Result replay(HotCachePolicy policy, long[] keys, int[] weights) {
        if (weights != null && weights.length != keys.length) {
            throw new IllegalArgumentException("weights.length = " + weights.length + " (expected: keys.length = "
                    + keys.length + ")");
        }
        PolicySimulator simulator = new PolicySimulator(policy);
        for (int i = 0; i < keys.length; i++) {
            simulator.access(keys[i], weights == null ? 1 : weights[i]);
        }
        return simulator.result();
    }

    /**
     * One read of {@code keyHash}, an object of {@code weight} blocks. Returns whether it was a hit.
     *
     * @throws IllegalArgumentException if {@code keyHash == -1} or {@code weight < 1}
     */
    public boolean access(long keyHash, int weight) {
        if (keyHash == -1) {
            throw new IllegalArgumentException("keyHash = -1 (expected: any other value; -1 means none)");
        }
        if (weight < 1) {
            throw new IllegalArgumentException("weight = " + weight + " (expected: >= 1 block)");
        }
        Integer cached = resident.get(keyHash);
        if (cached != null && cached == weight) {
            hits++;
            policy.onHit(keyHash);
            return true;
        }
        if (cached != null) {
            remove(keyHash);
        }
        misses++;
        policy.onMiss(keyHash);
        fill(keyHash, weight);
        return false;
    }

    /** The cache invalidates {@code keyHash} (a put or remove through this client); no-op if absent. */
    public void invalidate(long keyHash) {
        if (resident.containsKey(keyHash)) {
            remove(keyHash);
        }
    }

    private void fill(long keyHash, int weight) {
        if (!policy.admit(keyHash, weight)) {
            rejections++;
            return;
        }
        if (weight > capacity) {
            throw violation("admitted " + keyHash + " of weight " + weight + " > capacity " + capacity);
        }
        while (residentBlocks + weight > capacity) {
            long victim = policy.victim();
            if (victim == -1) {
                throw violation("victim() = -1 while " + residentBlocks + " blocks are resident and " + weight
                        + " more are needed for " + keyHash);
            }
            if (!resident.containsKey(victim)) {
                throw violation("victim() = " + victim + ", which is not resident");
            }
            remove(victim);
            evictions++;
        }
        resident.put(keyHash, weight);
        residentBlocks += weight;
        policy.onInsert(keyHash, weight);
        checkWeight(keyHash);
    }

    private void remove(long keyHash) {
        residentBlocks -= resident.remove(keyHash);
        policy.onRemove(keyHash);
    }

    private void checkWeight(long keyHash) {
        if (policy.residentBlocks() != residentBlocks) {
            throw violation("residentBlocks() = " + policy.residentBlocks() + " after inserting " + keyHash
                    + " (expected: " + residentBlocks + ")");
        }
    }

    private IllegalStateException violation(String what) {
        return new IllegalStateException("policy " + policy.name() + " broke the protocol: " + what);
    }

    /** Whether {@code keyHash} is resident. */
    public boolean isResident(long keyHash) {
        return resident.containsKey(keyHash);
    }

    /** The blocks held by resident entries; never more than the capacity. */
    public long residentBlocks() {
        return residentBlocks;
    }

    /** The counts so far. */
    public Result result() {
        return new Result(hits, misses, evictions, rejections);
    }

    /**
     * Counts of one simulation.
     *
     * @param hits reads served from the cache
     * @param misses reads not served
     * @param evictions entries removed to make room
     * @param rejections fills the policy refused
     */
    public record Result(long hits, long misses, long evictions, long rejections) {
        /** Hits over all reads; 0 when there were none. */
        public double hitRatio() {
            long reads = hits + misses;
            return reads == 0 ? 0 : (double) hits / reads;
        }
    }
}
