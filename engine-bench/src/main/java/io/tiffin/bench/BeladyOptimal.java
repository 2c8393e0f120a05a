package io.tiffin.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Belady's optimal policy, the upper bound in {@code cache-sim}: with the whole future known, on a
 * miss it keeps the block (if it will be read again) and evicts the resident block whose next read is
 * farthest away, or bypasses the new block if its own next read is farthest. Blocks of weight 1, as a
 * trace's {@code hash_ids} are.
 *
 * <p>Stateless and thread-safe. O(n log capacity) time, O(n) memory.
 */
public final class BeladyOptimal {
    private BeladyOptimal() {
    }

    /** The number of hits of the optimal cache of {@code capacityBlocks} blocks on {@code blocks}. */
    public static long hits(long[] blocks, long capacityBlocks) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException("capacityBlocks = " + capacityBlocks + " (expected: >= 1)");
        }
        int n = blocks.length;
        int[] nextUse = new int[n];
        Map<Long, Integer> seenAt = new HashMap<>();
        for (int i = n - 1; i >= 0; i--) {
            Integer next = seenAt.put(blocks[i], i);
            nextUse[i] = next == null ? Integer.MAX_VALUE : next;
        }
        // A resident block is represented by the position of its next read; positions are unique, and a
        // read at i hits exactly when i is in the set. Blocks never read again are never kept.
        TreeSet<Integer> resident = new TreeSet<>();
        long hits = 0;
        for (int i = 0; i < n; i++) {
            if (resident.remove(i)) {
                hits++;
            }
            int next = nextUse[i];
            if (next == Integer.MAX_VALUE) {
                continue;
            }
            if (resident.size() < capacityBlocks) {
                resident.add(next);
            } else if (resident.last() > next) {
                resident.pollLast();
                resident.add(next);
            }
        }
        return hits;
    }
}
