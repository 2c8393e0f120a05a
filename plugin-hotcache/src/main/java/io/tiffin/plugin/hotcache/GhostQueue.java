package io.tiffin.plugin.hotcache;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The keys of recently evicted entries with their weights, oldest first, bounded by total weight in
 * blocks: a history that lets a policy notice that it evicted something too early.
 *
 * <p>Not thread-safe; owned by one policy.
 */
final class GhostQueue {
    private final long maxWeight;
    private final LinkedHashMap<Long, Integer> entries = new LinkedHashMap<>();
    private long weight;

    GhostQueue(long maxWeight) {
        this.maxWeight = maxWeight;
    }

    /** Remembers {@code key}, forgetting the oldest keys beyond the weight bound. */
    void add(long key, int keyWeight) {
        Integer previous = entries.put(key, keyWeight);
        weight += keyWeight - (previous == null ? 0 : previous);
        Iterator<Map.Entry<Long, Integer>> oldest = entries.entrySet().iterator();
        while (weight > maxWeight && oldest.hasNext()) {
            weight -= oldest.next().getValue();
            oldest.remove();
        }
    }

    /** Forgets {@code key}; returns whether it was remembered. */
    boolean remove(long key) {
        Integer removed = entries.remove(key);
        if (removed == null) {
            return false;
        }
        weight -= removed;
        return true;
    }

    long weight() {
        return weight;
    }
}
