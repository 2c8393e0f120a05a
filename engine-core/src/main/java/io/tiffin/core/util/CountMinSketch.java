package io.tiffin.core.util;

/**
 * A count-min sketch of key frequencies with periodic halving ("aging"), so old popularity fades: 4 rows
 * of 4-bit-saturating counters kept in ints. Estimates never undercount (until halved).
 *
 * <p>Not thread-safe: callers serialise access.
 */
public final class CountMinSketch {
    private static final long[] SEEDS = {0x9E3779B97F4A7C15L, 0xC2B2AE3D27D4EB4FL, 0x165667B19E3779F9L,
            0xD6E8FEB86659FD93L};
    private final int[][] rows;
    private final int mask;
    private final long resetAfter;
    private long additions;

    /** @param width counters per row, rounded up to a power of two; halves all counts every 10×width additions */
    public CountMinSketch(int width) {
        int w = Integer.highestOneBit(Math.max(16, width - 1) << 1);
        rows = new int[SEEDS.length][w];
        mask = w - 1;
        resetAfter = 10L * w;
    }

    private int index(long hash, int row) {
        long h = (hash ^ SEEDS[row]) * 0xff51afd7ed558ccdL;
        h ^= h >>> 32;
        return (int) h & mask;
    }

    /** Adds one occurrence and returns the new estimate. */
    public int increment(long hash) {
        int min = Integer.MAX_VALUE;
        for (int r = 0; r < rows.length; r++) {
            int[] row = rows[r];
            int i = index(hash, r);
            if (row[i] < Integer.MAX_VALUE) {
                row[i]++;
            }
            min = Math.min(min, row[i]);
        }
        if (++additions >= resetAfter) {
            halve();
        }
        return min;
    }

    public int estimate(long hash) {
        int min = Integer.MAX_VALUE;
        for (int r = 0; r < rows.length; r++) {
            min = Math.min(min, rows[r][index(hash, r)]);
        }
        return min;
    }

    private void halve() {
        for (int[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                row[i] >>>= 1;
            }
        }
        additions /= 2;
    }
}
