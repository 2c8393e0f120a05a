package io.tiffin.plugin.hotcache;

/**
 * A count-min sketch of 4-bit counters estimating how often each key was read recently (TinyLFU,
 * Einziger et al., and Caffeine's {@code FrequencySketch}). Each key maps to one counter in each of
 * four rows; its estimate is the smallest of the four, so collisions only over-estimate. Counters
 * saturate at 15. Aging: after {@code 10 × width} increments every counter is halved, so the sketch
 * forgets old popularity and follows a changing workload.
 *
 * <p>Not thread-safe: owned by one policy.
 */
final class FrequencySketch {
    private static final long[] SEEDS = {
        0xc3a5c85c97cb3127L, 0xb492b66fbe98f273L, 0x9ae16a3b2f90404fL, 0xcbf29ce484222325L
    };
    private static final long RESET_MASK = 0x7777_7777_7777_7777L;

    private final long[] table;
    private final int mask;
    private final int sampleSize;
    private int additions;

    /** A sketch sized for about {@code expectedKeys} distinct keys (16 counters per key). */
    FrequencySketch(long expectedKeys) {
        this(expectedKeys, 1);
    }

    /**
     * A sketch aging every {@code 10 × expectedKeys} increments (rounded up to a power of two), as above, with
     * {@code 16 × widthFactor} counters per expected key: a wider table keeps the many one-time keys of a
     * KV-cache trace from inflating the estimates of the keys that matter.
     */
    FrequencySketch(long expectedKeys, int widthFactor) {
        int keys = Integer.highestOneBit((int) Math.clamp(expectedKeys, 16, 1 << 26) - 1) << 1;
        int width = (int) Math.min(1 << 27, (long) keys * Math.max(1, widthFactor));
        this.table = new long[width];
        this.mask = width - 1;
        this.sampleSize = 10 * keys;
    }

    /** The estimated number of recent reads of {@code key}, 0 to 15. */
    int frequency(long key) {
        int min = 15;
        for (int row = 0; row < 4; row++) {
            long hash = hash(key, row);
            min = Math.min(min, counter(hash));
        }
        return min;
    }

    /** Counts one read of {@code key}; halves every counter once per sample. */
    void increment(long key) {
        boolean added = false;
        for (int row = 0; row < 4; row++) {
            long hash = hash(key, row);
            if (counter(hash) < 15) {
                table[slot(hash)] += 1L << shift(hash);
                added = true;
            }
        }
        if (added && ++additions >= sampleSize) {
            reset();
        }
    }

    private void reset() {
        for (int i = 0; i < table.length; i++) {
            table[i] = (table[i] >>> 1) & RESET_MASK;
        }
        additions /= 2;
    }

    private int counter(long hash) {
        return (int) ((table[slot(hash)] >>> shift(hash)) & 0xF);
    }

    private int slot(long hash) {
        return (int) (hash >>> 32) & mask;
    }

    private static int shift(long hash) {
        return ((int) hash & 15) << 2;
    }

    private static long hash(long key, int row) {
        long h = (key + SEEDS[row]) * 0x9e3779b97f4a7c15L;
        h = (h ^ (h >>> 33)) * 0xff51afd7ed558ccdL;
        h = (h ^ (h >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return h ^ (h >>> 33);
    }
}
