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
    final LongAdder expiredObjects = new LongAdder();
    final LongAdder putStartDiscards = new LongAdder();
    final LongAdder putStartReleases = new LongAdder();
    final LongAdder offloads = new LongAdder();
    final LongAdder offloadFailures = new LongAdder();
    final LongAdder promotionsQueued = new LongAdder();
    final LongAdder promotions = new LongAdder();
    final LongAdder promotionFailures = new LongAdder();
    final LongAdder diskEvictions = new LongAdder();
    final LongAdder staleDiskCopies = new LongAdder();
    /** Deletions of SSD copies a node's backend failed (FORGET answers and task polls naming them). */
    final LongAdder failedDiskDeletes = new LongAdder();
    /** New deadlines a node's backend failed to write into SSD copies' stamps (named by FORGET answers, task polls). */
    final LongAdder failedDiskStamps = new LongAdder();
    final LongAdder abandonedTasks = new LongAdder();
    /** Puts abandoned (their space freed) after master.put-timeout. */
    final LongAdder putTimeouts = new LongAdder();

    /** Offloads and promotions given up because their node never reported. */
    public long putTimeouts() {
        return putTimeouts.sum();
    }

    public long abandonedTasks() {
        return abandonedTasks.sum();
    }

    /** SSD copies a node reported that the master did not ask for (deleted instead of served). */
    public long staleDiskCopies() {
        return staleDiskCopies.sum();
    }

    /** Deletions of SSD copies a node's backend failed (a full or broken disk); each is recorded and asked again. */
    public long failedDiskDeletes() {
        return failedDiskDeletes.sum();
    }

    /** New deadlines a node's backend failed to write into SSD copies' stamps (a full or broken disk); sent again. */
    public long failedDiskStamps() {
        return failedDiskStamps.sum();
    }

    public long offloads() {
        return offloads.sum();
    }

    public long offloadFailures() {
        return offloadFailures.sum();
    }

    public long promotionsQueued() {
        return promotionsQueued.sum();
    }

    public long promotions() {
        return promotions.sum();
    }

    public long promotionFailures() {
        return promotionFailures.sum();
    }

    public long diskEvictions() {
        return diskEvictions.sum();
    }

    public long allocationFailures() {
        return allocationFailures.sum();
    }

    public long partialAllocations() {
        return partialAllocations.sum();
    }

    public long evictionRuns() {
        return evictionRuns.sum();
    }

    /** Objects removed because their expiry deadline passed (not evictions). */
    public long expiredObjects() {
        return expiredObjects.sum();
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
