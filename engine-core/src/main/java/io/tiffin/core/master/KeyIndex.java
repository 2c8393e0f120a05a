package io.tiffin.core.master;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The master's ordered index of every key, for prefix and exact queries and key listings in O(log n + matches):
 * a sorted set of strings in {@link String#compareTo} order that costs about 14 bytes per key beyond the key
 * itself (a 4-byte slot and the key's 8-byte abbreviation in chunks 85–100% full, measured by KeyIndexTest for
 * random, ascending and numbered keys, and ≈ 100 bytes per chunk of 256), where a {@link
 * java.util.concurrent.ConcurrentSkipListSet} costs 36 (a 24-byte node per key and 12 of index levels on average).
 * At tens of millions of keys that is hundreds of megabytes of the master's heap. After most keys are removed at
 * random chunks are emptier, never below a quarter full on average (48 bytes per key at worst).
 *
 * <p>The keys sit in sorted chunks ({@code String[]} of a fixed capacity, 256 by default) held in a
 * {@link TreeMap} by each chunk's first key. A key goes into the chunk whose first key is the greatest not above
 * it (the first chunk for a key below every chunk). A full chunk first hands keys to a neighbour with room and
 * splits in two halves only when neither has any, so chunks stay mostly full whatever the order keys arrive in
 * (random, ascending, or runs ascending in the middle of the key range, as numbered keys arrive). A chunk
 * left empty is dropped, and two neighbours that together hold no more than half a chunk are merged, so any two
 * neighbours hold more than half a chunk between them and removals cannot leave the slots mostly empty. Add and
 * remove cost O(log n + chunk capacity). The key strings are the callers' (the index keeps references, no
 * copies). Within a chunk a search compares abbreviations of the keys before the strings ({@link Chunk}).
 *
 * <p>Thread-safe: one {@link ReentrantReadWriteLock} guards everything; adds and removes take its write lock,
 * iteration its read lock for one batch at a time. Iteration ({@link #from}) is weakly consistent, as the skip
 * list's was: it never throws {@link java.util.ConcurrentModificationException} and holds no lock between calls;
 * it returns keys in strictly ascending order, none twice, every key present for the whole iteration, and may or
 * may not return a key added or removed meanwhile.
 */
final class KeyIndex {
    static final int DEFAULT_CHUNK_CAPACITY = 256;

    private final int capacity;
    /** Every chunk by its first key ({@code chunks.get(c.first()) == c} always); no chunk is empty. */
    private final TreeMap<String, Chunk> chunks = new TreeMap<>();
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

    KeyIndex() {
        this(DEFAULT_CHUNK_CAPACITY);
    }

    /** @param chunkCapacity keys per chunk (small ones let tests cross many splits and merges) */
    KeyIndex(int chunkCapacity) {
        if (chunkCapacity < 4) {
            throw new IllegalArgumentException("chunkCapacity = " + chunkCapacity + " (expected: >= 4, e.g. "
                    + DEFAULT_CHUNK_CAPACITY + ")");
        }
        this.capacity = chunkCapacity;
    }

    /** Adds {@code key}; false if it was there already. */
    boolean add(String key) {
        Objects.requireNonNull(key, "key");
        lock.writeLock().lock();
        try {
            return addLocked(key);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * Applies {@code n} changes in order under one hold of the write lock: {@code keys[i]} is added where
     * {@code adds[i]}, else removed (a key already there, or not there, is left as it is).
     */
    void applyAll(String[] keys, boolean[] adds, int n) {
        lock.writeLock().lock();
        try {
            for (int i = 0; i < n; i++) {
                if (adds[i]) {
                    addLocked(keys[i]);
                } else {
                    removeLocked(keys[i]);
                }
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    private boolean addLocked(String key) {
        Map.Entry<String, Chunk> e = chunks.floorEntry(key);
        if (e == null) {
            e = chunks.firstEntry(); // below every key: the first chunk takes it
        }
        if (e == null) {
            Chunk c = new Chunk(capacity);
            c.insertAt(0, key);
            chunks.put(key, c);
            return true;
        }
        Chunk c = e.getValue();
        int pos = c.search(key);
        if (pos >= 0) {
            return false;
        }
        pos = -pos - 1;
        if (c.count == capacity) {
            c = makeRoom(c, pos, key);
            pos = -c.search(key) - 1;
        }
        String oldFirst = c.first();
        c.insertAt(pos, key);
        if (pos == 0) {
            rekey(oldFirst, c);
        }
        return true;
    }

    /**
     * Makes room for {@code key} (absent, at {@code pos} of the full chunk {@code c}) and returns the chunk it now
     * belongs in, which has room. Moves keys to a neighbour with room when that leaves {@code key} in {@code c};
     * otherwise splits {@code c} in halves.
     */
    private Chunk makeRoom(Chunk c, int pos, String key) {
        // Keys moved to the previous chunk are c's first ones; keeping at least c[pos - 1] keeps key above c's new
        // first key, so key still belongs in c.
        Chunk prev = neighbour(chunks.lowerEntry(c.first()));
        if (prev != null && prev.count < capacity && pos >= 2) {
            int n = Math.min((capacity - prev.count + 1) / 2, pos - 1);
            String oldFirst = c.first();
            c.moveFirstTo(prev, n);
            rekey(oldFirst, c);
            return c;
        }
        // Keys moved to the next chunk are c's last ones; keeping c[pos] in c keeps key below next's new first key.
        Chunk next = neighbour(chunks.higherEntry(c.first()));
        if (next != null && next.count < capacity && pos < capacity) {
            int n = Math.min((capacity - next.count + 1) / 2, capacity - pos);
            String oldFirst = next.first();
            c.moveLastTo(next, n);
            rekey(oldFirst, next);
            return c;
        }
        Chunk right = new Chunk(capacity);
        c.moveLastTo(right, capacity - capacity / 2);
        chunks.put(right.first(), right);
        return key.compareTo(right.first()) < 0 ? c : right;
    }

    /** Removes {@code key}; false if it was not there. */
    boolean remove(String key) {
        Objects.requireNonNull(key, "key");
        lock.writeLock().lock();
        try {
            return removeLocked(key);
        } finally {
            lock.writeLock().unlock();
        }
    }

    private boolean removeLocked(String key) {
        Map.Entry<String, Chunk> e = chunks.floorEntry(key);
        if (e == null) {
            return false;
        }
        Chunk c = e.getValue();
        int pos = c.search(key);
        if (pos < 0) {
            return false;
        }
        String oldFirst = c.first();
        c.removeAt(pos);
        if (c.count == 0) {
            // Its neighbours already held more than half a chunk with it (one key), so they still do together.
            chunks.remove(oldFirst);
            return true;
        }
        if (pos == 0) {
            rekey(oldFirst, c);
        }
        mergeIfSparse(c);
        return true;
    }

    /**
     * After a removal from {@code c}: merges it with a neighbour if the two hold no more than half a chunk. Every
     * pair of neighbours held more before the removal, so one merge restores that for every pair.
     */
    private void mergeIfSparse(Chunk c) {
        if (c.count > capacity / 2) {
            return; // no neighbour can join it within half a chunk: no need to look them up
        }
        Chunk next = neighbour(chunks.higherEntry(c.first()));
        if (next != null && c.count + next.count <= capacity / 2) {
            String nextFirst = next.first();
            next.moveFirstTo(c, next.count);
            chunks.remove(nextFirst);
            return;
        }
        Chunk prev = neighbour(chunks.lowerEntry(c.first()));
        if (prev != null && prev.count + c.count <= capacity / 2) {
            String first = c.first();
            c.moveFirstTo(prev, c.count);
            chunks.remove(first);
        }
    }

    /**
     * How many keys are held, counted over the chunks under the read lock: O(chunks), for tests (the master's key
     * count is {@link ObjectTable}'s counter, so the writers keep no count here).
     */
    long size() {
        lock.readLock().lock();
        try {
            long n = 0;
            for (Chunk c : chunks.values()) {
                n += c.count;
            }
            return n;
        } finally {
            lock.readLock().unlock();
        }
    }

    /** How many chunks hold them (for tests of the memory bound: each costs the chunk capacity in slots). */
    int chunkCount() {
        lock.readLock().lock();
        try {
            return chunks.size();
        } finally {
            lock.readLock().unlock();
        }
    }

    int chunkCapacity() {
        return capacity;
    }

    /**
     * The keys at or above {@code fromInclusive}, ascending (what {@code tailSet} gave on the skip list). The
     * iterator copies at most one chunk's worth of keys at a time under the read lock, then continues strictly
     * above the last key it returned; see the class comment for what it guarantees.
     */
    Iterable<String> from(String fromInclusive) {
        Objects.requireNonNull(fromInclusive, "fromInclusive");
        return () -> new BatchIterator(fromInclusive);
    }

    private static Chunk neighbour(Map.Entry<String, Chunk> e) {
        return e == null ? null : e.getValue();
    }

    /** Length of the longest common prefix of {@code a} and {@code b}. */
    static int commonPrefix(String a, String b) {
        int n = Math.min(a.length(), b.length());
        int i = 0;
        while (i < n && a.charAt(i) == b.charAt(i)) {
            i++;
        }
        return i;
    }

    /**
     * The eight characters of {@code key} from {@code from} in a long, the first in the top byte; missing ones
     * (past the key's end) are 0. A character at or above 0xFF ends the abbreviation as 0xFF, the rest 0. For
     * two keys that share their first {@code from} characters, {@code a < b} gives {@code abbreviate(a) <=
     * abbreviate(b)} (unsigned), so unequal abbreviations order the keys, and equal ones say nothing.
     */
    static long abbreviate(String key, int from) {
        long a = 0;
        int end = Math.min(key.length(), from + Long.BYTES);
        int i = from;
        while (i < end) {
            char ch = key.charAt(i++);
            if (ch >= 0xFF) {
                a = (a << 8) | 0xFF;
                break;
            }
            a = (a << 8) | ch;
        }
        int taken = i - from;
        return taken == 0 ? 0 : a << (8 * (Long.BYTES - taken));
    }

    /** Files {@code c} under its first key after that changed from {@code oldFirst}. */
    private void rekey(String oldFirst, Chunk c) {
        chunks.remove(oldFirst);
        chunks.put(c.first(), c);
    }

    /**
     * Up to one chunk's keys at a time, each batch copied under the read lock.
     *
     * <p>Not thread-safe: one iterating thread.
     */
    private final class BatchIterator implements Iterator<String> {
        private final String from;
        /** The last key returned; null before the first. */
        private String last;
        private String[] batch;
        private int next;
        private int end;
        private boolean exhausted;

        BatchIterator(String from) {
            this.from = from;
        }

        @Override
        public boolean hasNext() {
            if (next < end) {
                return true;
            }
            if (!exhausted) {
                fill();
            }
            return next < end;
        }

        @Override
        public String next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            last = batch[next++];
            return last;
        }

        /** Copies the keys of the first chunk with any above {@link #last} (at or above {@link #from} at first). */
        private void fill() {
            String bound = last == null ? from : last;
            boolean inclusive = last == null;
            next = 0;
            end = 0;
            lock.readLock().lock();
            try {
                Map.Entry<String, Chunk> e = chunks.floorEntry(bound);
                if (e == null) {
                    e = chunks.firstEntry();
                }
                // At most two rounds: every key of the chunk after the floor chunk is above bound.
                for (; e != null; e = chunks.higherEntry(e.getKey())) {
                    Chunk c = e.getValue();
                    int pos = c.search(bound);
                    int start = pos < 0 ? -pos - 1 : inclusive ? pos : pos + 1;
                    if (start < c.count) {
                        if (batch == null) {
                            batch = new String[capacity];
                        }
                        end = c.count - start;
                        System.arraycopy(c.keys, start, batch, 0, end);
                        return;
                    }
                }
                exhausted = true;
            } finally {
                lock.readLock().unlock();
            }
        }
    }

    /**
     * A sorted run of keys: the first {@link #count} slots of {@link #keys}, each with its abbreviation in {@link
     * #abbrevs}.
     *
     * <p><b>Abbreviated keys.</b> Every key of a chunk begins with the same {@link #shared} characters (those of
     * its first key), and {@code abbrevs[i]} packs the next eight characters of {@code keys[i]} into a long
     * ({@link #abbreviate}) whose unsigned order never contradicts {@link String#compareTo}. A search compares
     * these longs, in one array, and reads a key string only where two abbreviations are equal. With keys as
     * LMCache names them ({@code model@world_size@worker_id@chunk_hash@dtype}, chunk hashes at random) each probe
     * of a binary search over the strings missed the cache twice (the {@code String} and its bytes): a new key cost
     * the master 5.9–6.1 µs against 3.0 for numbered keys, and 4.1–4.5 µs with abbreviations (docs/BENCHMARKS.md,
     * "JMH", {@code NewKeyBench}). A key that does not begin with the shared characters lies below or above every
     * key of the chunk, which one comparison with the first key tells.
     *
     * <p>Not thread-safe: guarded by the index's lock.
     */
    private static final class Chunk {
        /** How much longer than {@link #shared} the chunk's common prefix must grow before it is taken up. */
        private static final int REFIT_GAIN = 4;

        final String[] keys;
        /** {@code abbrevs[i] == abbreviate(keys[i], shared)} for every {@code i < count}. */
        final long[] abbrevs;
        int count;
        /** Every key of the chunk begins with the first {@code shared} characters of {@code keys[0]}. */
        int shared;

        Chunk(int capacity) {
            keys = new String[capacity];
            abbrevs = new long[capacity];
        }

        String first() {
            return keys[0];
        }

        /** As {@link Arrays#binarySearch}: the index of {@code key}, or -(insertion point) - 1. */
        int search(String key) {
            if (count == 0) {
                return -1;
            }
            String first = keys[0];
            if (!key.regionMatches(0, first, 0, shared)) {
                // the keys that begin with first's shared characters are a contiguous run of the order
                return key.compareTo(first) < 0 ? -1 : -count - 1;
            }
            long a = abbreviate(key, shared);
            int lo = 0;
            int hi = count - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                int c = Long.compareUnsigned(abbrevs[mid], a);
                if (c == 0) {
                    c = keys[mid].compareTo(key);
                }
                if (c < 0) {
                    lo = mid + 1;
                } else if (c > 0) {
                    hi = mid - 1;
                } else {
                    return mid;
                }
            }
            return -(lo + 1);
        }

        void insertAt(int pos, String key) {
            boolean fits = count > 0 && key.regionMatches(0, keys[0], 0, shared);
            System.arraycopy(keys, pos, keys, pos + 1, count - pos);
            System.arraycopy(abbrevs, pos, abbrevs, pos + 1, count - pos);
            keys[pos] = key;
            count++;
            if (fits) {
                abbrevs[pos] = abbreviate(key, shared);
            } else {
                // the first key, or one below or above the others that shares less with them
                reabbreviate(count == 1 ? key.length() : commonPrefix(keys[0], keys[count - 1]));
            }
        }

        void removeAt(int pos) {
            System.arraycopy(keys, pos + 1, keys, pos, count - pos - 1);
            System.arraycopy(abbrevs, pos + 1, abbrevs, pos, count - pos - 1);
            keys[--count] = null;
        }

        /** Moves this chunk's first {@code n} keys to the end of {@code prev} (which precedes it and has room). */
        void moveFirstTo(Chunk prev, int n) {
            System.arraycopy(keys, 0, prev.keys, prev.count, n);
            System.arraycopy(abbrevs, 0, prev.abbrevs, prev.count, n);
            prev.count += n;
            prev.refit(shared);
            System.arraycopy(keys, n, keys, 0, count - n);
            System.arraycopy(abbrevs, n, abbrevs, 0, count - n);
            Arrays.fill(keys, count - n, count, null);
            count -= n;
            refit(shared);
        }

        /** Moves this chunk's last {@code n} keys to the start of {@code next} (which follows it and has room). */
        void moveLastTo(Chunk next, int n) {
            if (next.count == 0) {
                next.shared = shared; // a new chunk: the moved keys' abbreviations hold as they are
            }
            System.arraycopy(next.keys, 0, next.keys, n, next.count);
            System.arraycopy(next.abbrevs, 0, next.abbrevs, n, next.count);
            System.arraycopy(keys, count - n, next.keys, 0, n);
            System.arraycopy(abbrevs, count - n, next.abbrevs, 0, n);
            next.count += n;
            next.refit(shared);
            Arrays.fill(keys, count - n, count, null);
            count -= n;
            refit(shared);
        }

        /**
         * After keys abbreviated after {@code movedShared} characters came in or keys went out: abbreviates anew
         * when the keys no longer all share {@link #shared} characters, when the moved ones were abbreviated
         * differently, or when the common prefix grew by {@value #REFIT_GAIN} characters (so that a chunk narrowed
         * by splits compares characters that tell its keys apart).
         */
        private void refit(int movedShared) {
            if (count == 0) {
                return;
            }
            int common = commonPrefix(keys[0], keys[count - 1]);
            if (common < shared || movedShared != shared || common >= shared + REFIT_GAIN) {
                reabbreviate(common);
            }
        }

        private void reabbreviate(int newShared) {
            shared = newShared;
            for (int i = 0; i < count; i++) {
                abbrevs[i] = abbreviate(keys[i], newShared);
            }
        }
    }
}
