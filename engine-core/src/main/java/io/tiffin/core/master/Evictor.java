package io.tiffin.core.master;

import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Memory eviction, Mooncake's BatchEvict ({@link #runEvictionOnce}): when used/capacity exceeds the high
 * watermark or an allocation failed, a census of the evictable objects, then up to two passes that drop
 * the memory replicas of the least recently leased ones (with on-evict offload, a candidate is offloaded
 * to SSD instead).
 *
 * <p>Thread-safe: the census locks one shard at a time and each candidate is re-validated under its
 * shard lock before it goes. Passes are meant to run from one thread (the master's background thread);
 * concurrent passes are safe but may evict more than one pass would. Lock order: shard → tier / segment.
 */
final class Evictor {
    private static final Logger LOG = LogManager.getLogger(Evictor.class);

    private final MasterSettings settings;
    private final ObjectTable table;
    private final SegmentRegistry segments;
    private final ReplicaPlacement placement;
    private final Quarantine quarantine;
    private final TierCoordinator tier;
    private final IntSupplier releaseStuckPuts;
    private final MasterCounters counters;
    private final Ticker ticker;
    /** See {@link #pressed}. */
    private volatile boolean pressed;

    /**
     * @param releaseStuckPuts run before a pass evicts: frees what stuck puts and expired objects hold first
     *     ({@link PutCoordinator#releaseStuckPuts}, {@link Expiry#sweep}: expired objects count as expired,
     *     not evicted)
     */
    Evictor(MasterSettings settings, ObjectTable table, SegmentRegistry segments, ReplicaPlacement placement,
            Quarantine quarantine, TierCoordinator tier, IntSupplier releaseStuckPuts, MasterCounters counters,
            Ticker ticker) {
        this.settings = settings;
        this.table = table;
        this.segments = segments;
        this.placement = placement;
        this.quarantine = quarantine;
        this.tier = tier;
        this.releaseStuckPuts = releaseStuckPuts;
        this.counters = counters;
        this.ticker = ticker;
    }

    /** How far below the high watermark the pool counts as near it (a fraction of the capacity). */
    static final double NEAR = 0.10;

    /**
     * Whether the last pass found the pool within {@link #NEAR} of its high watermark or an allocation failed:
     * the next should come soon ({@link EvictionPacer}).
     */
    boolean pressed() {
        return pressed;
    }

    /**
     * One eviction pass: runs when used/capacity exceeds the high watermark or an allocation failed since
     * the last run. Frees {@code target} of the evictable objects, oldest lease first: leased and
     * hard-pinned objects never, soft-pinned ones only in a second pass when the first freed less than the
     * lower bound. Frees due quarantined buffers first, whether or not it evicts. Returns the number of
     * objects evicted.
     */
    int runEvictionOnce() {
        quarantine.releaseDue();
        long capacity = segments.capacityBytes();
        if (capacity == 0) {
            placement.takeAllocationFailed();
            pressed = false;
            return 0;
        }
        double used = (double) segments.usedBytes() / capacity;
        boolean failed = placement.takeAllocationFailed();
        double hw = settings.evictionHighWatermark();
        double ratio = settings.evictionRatio();
        pressed = ratio > 0 && (failed || used > hw - NEAR);
        if (!(used > hw || failed) || ratio <= 0) {
            return 0;
        }
        releaseStuckPuts.getAsInt();
        double target = Math.max(ratio, used - hw + ratio);
        double lowerBound = Math.max(target * 0.5, used - hw);
        long now = ticker.millis();

        // Census: how old the evictable objects' leases are, normal and soft-pinned apart (counts, no list).
        long[] base = new long[1];
        LeaseAges normal = new LeaseAges();
        LeaseAges softPinned = new LeaseAges();
        table.forEachShard(shard -> {
            for (ObjectMetadata m : shard.objects.values()) {
                if (!evictable(m)) {
                    continue;
                }
                base[0]++;
                if (m.isLeased(now)) {
                    continue;
                }
                boolean pinned = m.isSoftPinned(now);
                if (!pinned && m.softPinDeadlineMillis() != 0) {
                    m.softPinUntil(0); // the pin is over: the object may drop its side object
                }
                (pinned ? softPinned : normal).add(now - m.leaseTimeoutMillis);
            }
        });
        if (base[0] == 0) {
            return 0;
        }
        long ideal = (long) Math.ceil(base[0] * target);
        long minimum = (long) Math.ceil(base[0] * lowerBound);
        int evicted = evictOldest(normal, false, ideal, now);
        if (evicted < minimum && settings.allowEvictSoftPinned()) {
            evicted += evictOldest(softPinned, true, minimum - evicted, now);
        }
        counters.evictionRuns.increment();
        counters.evictedKeys.add(evicted);
        if (evicted > 0) {
            LOG.debug("Evicted {} of {} evictable objects (used {}%, target {})", evicted, base[0],
                    Math.round(used * 100), target);
        }
        return evicted;
    }

    /** Whether eviction may ever take {@code m}'s memory: not pinned hard, complete, not offloading, readable. */
    private static boolean evictable(ObjectMetadata m) {
        return !m.hardPinned() && !m.processing() && !m.offloadPending() && m.hasReadableMemoryReplica();
    }

    /**
     * Evicts the {@code wanted} unleased objects (soft-pinned ones if {@code pinned}, else the others) whose leases
     * ended longest ago, oldest first, as {@code ages} counted them. A second scan of every shard evicts, under each
     * shard's lock, every such object of an age bucket above the one where the {@code wanted} oldest end (all of them
     * older than any in that bucket) and notes the objects of that boundary bucket; those are then evicted in lease
     * order until {@code wanted} have gone. Each object is judged as it is when the scan meets it (one leased,
     * replaced or removed since the census is passed over, and the next of the boundary bucket takes its place).
     * O(keys) with nothing allocated per object, plus a sort of the boundary bucket (leases within about 3% of one
     * another's age; all the objects at most, when every lease ended within that span).
     */
    private int evictOldest(LeaseAges ages, boolean pinned, long wanted, long now) {
        if (wanted <= 0 || ages.total() == 0) {
            return 0;
        }
        int boundary = ages.boundary(wanted);
        int[] evicted = new int[1];
        Boundary atBoundary = new Boundary();
        List<ObjectMetadata> victims = new ArrayList<>();
        table.forEachShard(shard -> {
            victims.clear();
            for (ObjectMetadata m : shard.objects.values()) {
                if (!candidate(m, pinned, now)) {
                    continue;
                }
                int bucket = LeaseAges.bucket(now - m.leaseTimeoutMillis);
                if (bucket > boundary) {
                    victims.add(m);
                } else if (bucket == boundary) {
                    atBoundary.add(m);
                }
            }
            for (ObjectMetadata m : victims) { // not while iterating: an eviction changes the shard's map
                if (evicted[0] < wanted && evictLocked(shard, m, now)) {
                    evicted[0]++;
                }
            }
        });
        victims.clear();
        for (int i : atBoundary.oldestFirst()) {
            if (evicted[0] >= wanted) {
                break;
            }
            ObjectMetadata m = atBoundary.objects[i];
            if (table.inShard(m.key, shard -> shard.objects.get(m.key) == m
                    && candidate(m, pinned, now) && evictLocked(shard, m, now))) {
                evicted[0]++;
            }
        }
        return evicted[0];
    }

    /** Whether a pass looking for {@code pinned} (soft-pinned) or other objects may evict {@code m} now. */
    private static boolean candidate(ObjectMetadata m, boolean pinned, long now) {
        return evictable(m) && !m.isLeased(now) && m.isSoftPinned(now) == pinned;
    }

    /**
     * The objects of a pass's boundary bucket, in an array that grows (no object per entry).
     *
     * <p>Not thread-safe: one pass's.
     */
    private static final class Boundary {
        ObjectMetadata[] objects = new ObjectMetadata[16];
        int size;

        void add(ObjectMetadata m) {
            if (size == objects.length) {
                objects = java.util.Arrays.copyOf(objects, size * 2);
            }
            objects[size++] = m;
        }

        /** The entries' indices, oldest lease first (their leases as the scan read them). */
        int[] oldestFirst() {
            long[] order = new long[size];
            for (int i = 0; i < size; i++) {
                order[i] = objects[i].leaseTimeoutMillis;
            }
            Integer[] idx = new Integer[size];
            for (int i = 0; i < size; i++) {
                idx[i] = i;
            }
            java.util.Arrays.sort(idx, java.util.Comparator.comparingLong(i -> order[i]));
            int[] out = new int[size];
            for (int i = 0; i < size; i++) {
                out[i] = idx[i];
            }
            return out;
        }
    }

    /** Evicts (or offloads) {@code m}, found evictable under the shard lock, which the caller holds. */
    private boolean evictLocked(MetadataShard shard, ObjectMetadata m, long now) {
        if (tier.offloadInsteadOfEvicting(m)) {
            return true; // its memory is freed when the node reports the SSD copy
        }
        counters.evictedBytes.add(m.size());
        // Drops the memory replicas; the object stays if it has SSD copies.
        m.freeAll();
        if (m.diskReplicas().isEmpty()) {
            table.forget(shard, m.key);
        }
        return true;
    }
}
