package io.tiffin.core.client;

import io.tiffin.core.client.hotcache.LocalHotCache;

/**
 * Counters of clients' caches (cumulative): what one client reports to the master ({@link
 * TiffinClient#reportCaches}), and the sums over all reporting clients the master answers in {@link
 * ClusterStats.CacheTotals}.
 *
 * <p>Thread-safe (immutable).
 *
 * @param hits hot-cache reads served from the cache
 * @param misses hot-cache reads that went to a node
 * @param fills objects copied into the hot cache
 * @param droppedFills fills dropped because the cache's copy ring was full
 * @param rejectedFills fills the cache's policy refused
 * @param evictions objects the hot cache evicted
 * @param staleRejected cached copies refused because the master named a newer version
 * @param invalidations hot-cache entries dropped by this client's writes and removes
 * @param bytesCached bytes in the hot cache now
 * @param capacityBytes the hot cache's capacity, bytes (0 = no hot cache)
 * @param locationCache whether the client has a location cache (always false in totals, which count such
 *     clients in {@link ClusterStats.CacheTotals#locationCacheClients})
 * @param locationHits reads and exists answered from the location cache
 * @param locationMisses lookups the location cache could not answer
 * @param locationRefused reads through a cached location that failed and were looked up again
 */
public record CacheCounters(long hits, long misses, long fills, long droppedFills, long rejectedFills,
                            long evictions, long staleRejected, long invalidations, long bytesCached,
                            long capacityBytes, boolean locationCache, long locationHits, long locationMisses,
                            long locationRefused) {
    /** No cache at all. */
    public static final CacheCounters NONE = new CacheCounters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 0, 0, 0);

    /** The counters of a client's caches; null for a cache the client does not have. */
    static CacheCounters of(LocalHotCache.Stats hot, LocationCache.Stats locations) {
        CacheCounters c = NONE;
        if (hot != null) {
            c = new CacheCounters(hot.hits(), hot.misses(), hot.fills(), hot.droppedFills(), hot.rejectedFills(),
                    hot.evictions(), hot.staleRejected(), hot.invalidations(), hot.bytesCached(), hot.capacityBytes(),
                    false, 0, 0, 0);
        }
        if (locations != null) {
            c = new CacheCounters(c.hits, c.misses, c.fills, c.droppedFills, c.rejectedFills, c.evictions,
                    c.staleRejected, c.invalidations, c.bytesCached, c.capacityBytes, true, locations.hits(),
                    locations.misses(), locations.refused());
        }
        return c;
    }
}
