package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which keys have an SSD copy on each node, so that a node leaving visits the objects with copies there instead of
 * every object ({@link SegmentMembership}). The {@link TierCoordinator} adds a key when it lists a copy on an object
 * and removes it when it drops one; a key whose object went without its copies being dropped first may stay listed
 * until the node leaves, which costs that sweep one lookup. Per copy a key reference and its hash (8 bytes) in an
 * open-addressing table kept between an eighth and two-thirds full: 12–24 bytes while copies are added (a third to
 * two-thirds full), up to 64 just before it halves after removals (the keys are the objects').
 *
 * <p>Thread-safe: the map of nodes is concurrent and each node's set is guarded by its own monitor (taken inside shard
 * locks, never the other way round).
 */
final class DiskCopyIndex {
    private final ConcurrentHashMap<String, KeySet> byNode = new ConcurrentHashMap<>();

    void add(String nodeId, String key) {
        byNode.computeIfAbsent(nodeId, n -> new KeySet()).add(key);
    }

    void remove(String nodeId, String key) {
        KeySet s = byNode.get(nodeId);
        if (s != null) {
            s.remove(key);
        }
    }

    /** The keys listed with a copy on any of {@code nodes} (a key once per node that lists it). */
    List<String> keysOf(Collection<String> nodes) {
        List<String> keys = new ArrayList<>();
        for (String node : nodes) {
            KeySet s = byNode.get(node);
            if (s != null) {
                s.copyTo(keys);
            }
        }
        return keys;
    }

    /** How many keys are listed for {@code nodeId}. */
    int count(String nodeId) {
        KeySet s = byNode.get(nodeId);
        return s == null ? 0 : s.size();
    }

    /**
     * A set of keys: open addressing with linear probing over the keys and, beside them, their hashes (never 0).
     *
     * <p>Thread-safe: every method is synchronized.
     */
    private static final class KeySet {
        private static final int MIN_CAPACITY = 16;
        private String[] keys = new String[MIN_CAPACITY];
        private int[] hashes = new int[MIN_CAPACITY];
        private int size;

        private static int hash(String key) {
            int h = key.hashCode() * 0x9E3779B1;
            h ^= h >>> 16;
            return h == 0 ? 1 : h;
        }

        synchronized int size() {
            return size;
        }

        synchronized void add(String key) {
            int h = hash(key);
            int mask = keys.length - 1;
            int i = h & mask;
            for (; hashes[i] != 0; i = (i + 1) & mask) {
                if (hashes[i] == h && keys[i].equals(key)) {
                    return;
                }
            }
            keys[i] = key;
            hashes[i] = h;
            if (++size * 3 > keys.length * 2) {
                resize(keys.length * 2);
            }
        }

        synchronized void remove(String key) {
            int h = hash(key);
            int mask = keys.length - 1;
            int i = h & mask;
            while (true) {
                if (hashes[i] == 0) {
                    return;
                }
                if (hashes[i] == h && keys[i].equals(key)) {
                    break;
                }
                i = (i + 1) & mask;
            }
            // Backward-shift deletion: move later entries of the run into the hole where their probe allows.
            int hole = i;
            for (int j = (hole + 1) & mask; hashes[j] != 0; j = (j + 1) & mask) {
                int home = hashes[j] & mask;
                if (((j - home) & mask) >= ((j - hole) & mask)) {
                    keys[hole] = keys[j];
                    hashes[hole] = hashes[j];
                    hole = j;
                }
            }
            keys[hole] = null;
            hashes[hole] = 0;
            size--;
            if (keys.length > MIN_CAPACITY && size * 8 < keys.length) {
                resize(keys.length / 2);
            }
        }

        synchronized void copyTo(List<String> out) {
            for (String k : keys) {
                if (k != null) {
                    out.add(k);
                }
            }
        }

        private void resize(int capacity) {
            String[] oldKeys = keys;
            int[] oldHashes = hashes;
            keys = new String[capacity];
            hashes = new int[capacity];
            int mask = capacity - 1;
            for (int j = 0; j < oldKeys.length; j++) {
                if (oldKeys[j] != null) {
                    int i = oldHashes[j] & mask;
                    while (hashes[i] != 0) {
                        i = (i + 1) & mask;
                    }
                    keys[i] = oldKeys[j];
                    hashes[i] = oldHashes[j];
                }
            }
        }
    }
}
