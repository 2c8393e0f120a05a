package io.tiffin.core.client.hotcache;

import java.util.concurrent.atomic.LongAdder;

/**
 * The hot cache's event counters, read together by {@link LocalHotCache#stats()}.
 *
 * <p>Thread-safe: every counter is a {@link LongAdder}, bumped by readers and by the maintenance thread.
 */
final class HotCacheCounters {
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder fills = new LongAdder();
    final LongAdder droppedFills = new LongAdder();
    final LongAdder rejectedFills = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder staleRejected = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder droppedAccessRecords = new LongAdder();

    /** The counters now, with the index's figures and the capacity. */
    LocalHotCache.Stats snapshot(long bytesCached, long entries, long capacityBytes) {
        return new LocalHotCache.Stats(hits.sum(), misses.sum(), fills.sum(), droppedFills.sum(),
                rejectedFills.sum(), evictions.sum(), staleRejected.sum(), invalidations.sum(), bytesCached, entries,
                capacityBytes);
    }
}
