package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One shard's key → {@link ObjectMetadata} map, keyed by {@link ObjectMetadata#key}: an open-addressing table
 * (linear probing, backward-shift removal) of the objects themselves. A {@link java.util.HashMap} spends a
 * 32-byte entry per key beside its table; this spends only the table's slots, 4–11 bytes per key (compressed
 * references, load between {@value #MIN_LOAD} and {@value #MAX_LOAD}), which at tens of millions of keys is
 * hundreds of megabytes of the master's heap.
 *
 * <p>Not thread-safe: guarded by the lock of its {@link MetadataShard}. Iterating {@link #values()} while the
 * map changes throws {@link ConcurrentModificationException}; take {@link #valuesCopy()} to change it meanwhile.
 */
final class ObjectMap {
    static final double MAX_LOAD = 0.75;
    static final double MIN_LOAD = 0.1875;
    private static final int MIN_CAPACITY = 8;

    private ObjectMetadata[] table = new ObjectMetadata[MIN_CAPACITY];
    private int size;
    /** Bumped by every change, so that an iteration can tell it went stale. */
    private int changes;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The object of {@code key}, or null. */
    ObjectMetadata get(String key) {
        int mask = table.length - 1;
        for (int i = slot(key, mask); ; i = (i + 1) & mask) {
            ObjectMetadata m = table[i];
            if (m == null) {
                return null;
            }
            if (m.key.equals(key)) {
                return m;
            }
        }
    }

    boolean containsKey(String key) {
        return get(key) != null;
    }

    /** Adds {@code m} under its key; returns the object it replaced, or null. */
    ObjectMetadata put(ObjectMetadata m) {
        int mask = table.length - 1;
        int i = slot(m.key, mask);
        for (; table[i] != null; i = (i + 1) & mask) {
            if (table[i].key.equals(m.key)) {
                ObjectMetadata old = table[i];
                table[i] = m;
                changes++;
                return old;
            }
        }
        table[i] = m;
        size++;
        changes++;
        if (size > table.length * MAX_LOAD) {
            resize(table.length * 2);
        }
        return null;
    }

    /** Removes {@code key}; returns its object, or null. */
    ObjectMetadata remove(String key) {
        int mask = table.length - 1;
        int i = slot(key, mask);
        while (true) {
            ObjectMetadata m = table[i];
            if (m == null) {
                return null;
            }
            if (m.key.equals(key)) {
                break;
            }
            i = (i + 1) & mask;
        }
        ObjectMetadata gone = table[i];
        // Backward shift: move later entries of the run into the hole when their home slot allows it, so a
        // lookup never stops early at a hole (no tombstones to pile up).
        int hole = i;
        for (int j = (hole + 1) & mask; table[j] != null; j = (j + 1) & mask) {
            int home = slot(table[j].key, mask);
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                table[hole] = table[j];
                hole = j;
            }
        }
        table[hole] = null;
        size--;
        changes++;
        if (table.length > MIN_CAPACITY && size < table.length * MIN_LOAD) {
            resize(table.length / 2);
        }
        return gone;
    }

    /** Every object, in no particular order; the map must not change during the iteration. */
    Iterable<ObjectMetadata> values() {
        return () -> new Iterator<>() {
            private final int expected = changes;
            private int next = advance(0);

            private int advance(int from) {
                int i = from;
                while (i < table.length && table[i] == null) {
                    i++;
                }
                return i;
            }

            @Override
            public boolean hasNext() {
                return next < table.length;
            }

            @Override
            public ObjectMetadata next() {
                if (changes != expected) {
                    throw new ConcurrentModificationException("the shard's objects changed during the iteration");
                }
                if (next >= table.length) {
                    throw new NoSuchElementException();
                }
                ObjectMetadata m = table[next];
                next = advance(next + 1);
                return m;
            }
        };
    }

    /** Every object, a copy: the map may change while the caller walks it. */
    List<ObjectMetadata> valuesCopy() {
        List<ObjectMetadata> out = new ArrayList<>(size);
        for (ObjectMetadata m : table) {
            if (m != null) {
                out.add(m);
            }
        }
        return out;
    }

    /** Every key, a copy. */
    List<String> keysCopy() {
        List<String> out = new ArrayList<>(size);
        for (ObjectMetadata m : table) {
            if (m != null) {
                out.add(m.key);
            }
        }
        return out;
    }

    /** Slots in the table now (a power of two). */
    int capacity() {
        return table.length;
    }

    private void resize(int capacity) {
        ObjectMetadata[] old = table;
        table = new ObjectMetadata[Math.max(MIN_CAPACITY, capacity)];
        int mask = table.length - 1;
        for (ObjectMetadata m : old) {
            if (m != null) {
                int i = slot(m.key, mask);
                while (table[i] != null) {
                    i = (i + 1) & mask;
                }
                table[i] = m;
            }
        }
    }

    /**
     * The home slot of {@code key}: murmur3's finaliser over the string's hash. The shard was chosen by the top
     * bits of a multiplicative hash of the same value ({@link MetadataShard#indexOf}), so every key here shares
     * them; the finaliser spreads the rest over the low bits the mask keeps.
     */
    private static int slot(String key, int mask) {
        int h = key.hashCode();
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        h ^= h >>> 16;
        return h & mask;
    }
}
