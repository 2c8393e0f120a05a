package io.tiffin.core.master;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One shard's key → {@link ObjectMetadata} map, keyed by {@link ObjectMetadata#key}: an open-addressing table
 * (linear probing, backward-shift removal) of the objects themselves, beside an array of their keys' mixed hashes.
 * A {@link java.util.HashMap} spends a 32-byte entry per key beside its table; this spends only the slots, a
 * reference and a hash: 11–21 bytes per key (compressed references, load between {@value #MAX_LOAD} and half of
 * it; a shrinking table goes down to {@value #MIN_LOAD}), which at tens of millions of keys is hundreds of
 * megabytes of the master's heap. A probe compares hashes and reads an object (and its key's bytes) only when
 * they match: a lookup of an absent key — every new key's PutStart — walks a run of ~8 slots at load 0.75, which
 * through the objects themselves cost three cache misses a slot (object, key, key bytes) and was the top of a
 * BatchPut's profile.
 *
 * <p>Not thread-safe: guarded by the lock of its {@link MetadataShard}. Iterating {@link #values()} while the
 * map changes throws {@link ConcurrentModificationException}; take {@link #keysCopy()} to change it meanwhile.
 */
final class ObjectMap {
    static final double MAX_LOAD = 0.75;
    static final double MIN_LOAD = 0.1875;
    private static final int MIN_CAPACITY = 8;

    private ObjectMetadata[] table = new ObjectMetadata[MIN_CAPACITY];
    /** Each slot's key's {@link #hash}, 0 for an empty slot (a hash is never 0). */
    private int[] hashes = new int[MIN_CAPACITY];
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
        int h = hash(key);
        int[] hs = hashes;
        int mask = hs.length - 1;
        for (int i = h & mask; ; i = (i + 1) & mask) {
            int s = hs[i];
            if (s == 0) {
                return null;
            }
            if (s == h) {
                ObjectMetadata m = table[i];
                if (m.key.equals(key)) {
                    return m;
                }
            }
        }
    }

    boolean containsKey(String key) {
        return get(key) != null;
    }

    /** Adds {@code m} under its key; returns the object it replaced, or null. */
    ObjectMetadata put(ObjectMetadata m) {
        int h = hash(m.key);
        int mask = hashes.length - 1;
        int i = h & mask;
        for (; hashes[i] != 0; i = (i + 1) & mask) {
            if (hashes[i] == h && table[i].key.equals(m.key)) {
                ObjectMetadata old = table[i];
                table[i] = m;
                changes++;
                return old;
            }
        }
        table[i] = m;
        hashes[i] = h;
        size++;
        changes++;
        if (size > table.length * MAX_LOAD) {
            resize(table.length * 2);
        }
        return null;
    }

    /** Removes {@code key}; returns its object, or null. */
    ObjectMetadata remove(String key) {
        int h = hash(key);
        int mask = hashes.length - 1;
        int i = h & mask;
        while (true) {
            int s = hashes[i];
            if (s == 0) {
                return null;
            }
            if (s == h && table[i].key.equals(key)) {
                break;
            }
            i = (i + 1) & mask;
        }
        ObjectMetadata gone = table[i];
        // Backward shift: move later entries of the run into the hole when their home slot allows it, so a
        // lookup never stops early at a hole (no tombstones to pile up).
        int hole = i;
        for (int j = (hole + 1) & mask; hashes[j] != 0; j = (j + 1) & mask) {
            int home = hashes[j] & mask;
            if (((j - home) & mask) >= ((j - hole) & mask)) {
                table[hole] = table[j];
                hashes[hole] = hashes[j];
                hole = j;
            }
        }
        table[hole] = null;
        hashes[hole] = 0;
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
        ObjectMetadata[] oldTable = table;
        int[] oldHashes = hashes;
        int n = Math.max(MIN_CAPACITY, capacity);
        table = new ObjectMetadata[n];
        hashes = new int[n];
        int mask = n - 1;
        for (int j = 0; j < oldHashes.length; j++) {
            int h = oldHashes[j];
            if (h != 0) {
                int i = h & mask;
                while (hashes[i] != 0) {
                    i = (i + 1) & mask;
                }
                table[i] = oldTable[j];
                hashes[i] = h;
            }
        }
    }

    /**
     * {@code key}'s mixed hash, never 0 (which marks an empty slot); its low bits are the home slot: murmur3's
     * finaliser over the string's hash. The shard was chosen by the top bits of a multiplicative hash of the same
     * value ({@link MetadataShard#indexOf}), so every key here shares them; the finaliser spreads the rest over the
     * low bits the mask keeps.
     */
    private static int hash(String key) {
        int h = key.hashCode();
        h ^= h >>> 16;
        h *= 0x85EBCA6B;
        h ^= h >>> 13;
        h *= 0xC2B2AE35;
        h ^= h >>> 16;
        return h == 0 ? 1 : h;
    }
}
