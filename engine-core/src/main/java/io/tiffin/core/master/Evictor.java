package io.tiffin.core.master;

import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Comparator;
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

        // Census: evictable objects, split into normal and soft-pinned candidates.
        long[] base = new long[1];
        List<Candidate> normal = new ArrayList<>();
        List<Candidate> softPinned = new ArrayList<>();
        table.forEachShardIndexed((shard, s) -> {
            for (ObjectMetadata m : shard.objects.values()) {
                if (m.hardPinned || m.processing || m.offloadPending() || !m.hasReadableMemoryReplica()) {
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
                (pinned ? softPinned : normal).add(new Candidate(m.leaseTimeoutMillis, s, m.key));
            }
        });
        if (base[0] == 0) {
            return 0;
        }
        long ideal = (long) Math.ceil(base[0] * target);
        long minimum = (long) Math.ceil(base[0] * lowerBound);
        normal.sort(Candidate.ORDER);
        int evicted = evictInOrder(normal, ideal, now);
        if (evicted < minimum && settings.allowEvictSoftPinned()) {
            softPinned.sort(Candidate.ORDER);
            evicted += evictInOrder(softPinned, minimum - evicted, now);
        }
        counters.evictionRuns.increment();
        counters.evictedKeys.add(evicted);
        if (evicted > 0) {
            LOG.debug("Evicted {} of {} evictable objects (used {}%, target {})", evicted, base[0],
                    Math.round(used * 100), target);
        }
        return evicted;
    }

    private record Candidate(long leaseTimeout, int shard, String key) {
        static final Comparator<Candidate> ORDER = Comparator.comparingLong(Candidate::leaseTimeout);
    }

    private int evictInOrder(List<Candidate> candidates, long wanted, long now) {
        int evicted = 0;
        for (Candidate c : candidates) {
            if (evicted >= wanted) {
                break;
            }
            if (table.inShardAt(c.shard(), shard -> evictLocked(shard, c.key(), now))) {
                evicted++;
            }
        }
        return evicted;
    }

    /** Evicts (or offloads) one candidate; false if it is no longer evictable. Caller holds the shard lock. */
    private boolean evictLocked(MetadataShard shard, String key, long now) {
        ObjectMetadata m = shard.objects.get(key);
        // Re-validate: the object may have been read, removed or replaced since the census.
        if (m == null || m.hardPinned || m.processing || m.offloadPending() || m.isLeased(now)
                || !m.hasReadableMemoryReplica()) {
            return false;
        }
        if (tier.offloadInsteadOfEvicting(m)) {
            return true; // its memory is freed when the node reports the SSD copy
        }
        counters.evictedBytes.add(m.size);
        // Drops the memory replicas; the object stays if it has SSD copies.
        m.freeAll();
        if (m.diskReplicas().isEmpty()) {
            table.forget(shard, m.key);
        }
        return true;
    }
}
