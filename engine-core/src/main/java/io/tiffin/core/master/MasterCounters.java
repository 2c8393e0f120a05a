package io.tiffin.core.master;

import java.util.concurrent.atomic.LongAdder;

/**
 * Event counters of the master service, exported as metrics.
 *
 * <p>Thread-safe.
 */
public final class MasterCounters {
    final LongAdder allocationFailures = new LongAdder();
    final LongAdder partialAllocations = new LongAdder();
    final LongAdder evictionRuns = new LongAdder();
    final LongAdder evictedKeys = new LongAdder();
    final LongAdder evictedBytes = new LongAdder();
    final LongAdder putStartDiscards = new LongAdder();
    final LongAdder putStartReleases = new LongAdder();

    public long allocationFailures() {
        return allocationFailures.sum();
    }

    public long partialAllocations() {
        return partialAllocations.sum();
    }

    public long evictionRuns() {
        return evictionRuns.sum();
    }

    public long evictedKeys() {
        return evictedKeys.sum();
    }

    public long evictedBytes() {
        return evictedBytes.sum();
    }

    public long putStartDiscards() {
        return putStartDiscards.sum();
    }

    public long putStartReleases() {
        return putStartReleases.sum();
    }
}
