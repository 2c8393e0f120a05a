package io.tiffin.core.master;

/**
 * How long ago the leases of an eviction pass's candidates ended, as counts per age bucket, so that a pass finds
 * the age above which the oldest N objects lie without listing or sorting the objects ({@link Evictor}). Ages are
 * milliseconds (0 and up); buckets are exact below {@value #SUB_BUCKETS} ms and above it split each power of two
 * into {@value #SUB_BUCKETS} equal parts, so two ages in one bucket differ by less than 1/{@value #SUB_BUCKETS}
 * (about 3%). A higher bucket holds older leases. {@value #BUCKETS} counters cover every {@code long} age. (The
 * buckets are HdrHistogram's layout with five bits of sub-bucket; a pass needs the bucket of each object it meets and
 * the bucket where a count from the top ends, which is what these few lines give, rather than values at percentiles.)
 *
 * <p>Not thread-safe: one eviction pass fills and reads it on one thread.
 */
final class LeaseAges {
    private static final int SUB_BITS = 5;
    static final int SUB_BUCKETS = 1 << SUB_BITS;
    static final int BUCKETS = (63 - SUB_BITS + 1) << SUB_BITS;

    private final long[] counts = new long[BUCKETS];
    private long total;

    /** The bucket of {@code ageMillis} (a negative age, a lease that ends later, counts as 0). */
    static int bucket(long ageMillis) {
        long age = Math.max(0, ageMillis);
        if (age < SUB_BUCKETS) {
            return (int) age;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(age); // >= SUB_BITS
        int shift = exponent - SUB_BITS;
        return ((shift + 1) << SUB_BITS) + (int) ((age >>> shift) & (SUB_BUCKETS - 1));
    }

    void add(long ageMillis) {
        counts[bucket(ageMillis)]++;
        total++;
    }

    long total() {
        return total;
    }

    /**
     * The bucket in which the {@code wanted} oldest ages end: the highest bucket {@code b} such that buckets
     * {@code b} and above hold at least {@code wanted} (bucket 0 if all of them hold fewer).
     */
    int boundary(long wanted) {
        long seen = 0;
        for (int b = BUCKETS - 1; b > 0; b--) {
            seen += counts[b];
            if (seen >= wanted) {
                return b;
            }
        }
        return 0;
    }

    /** How many ages lie in buckets above {@code bucket}. */
    long countAbove(int bucket) {
        long n = 0;
        for (int b = bucket + 1; b < BUCKETS; b++) {
            n += counts[b];
        }
        return n;
    }
}
