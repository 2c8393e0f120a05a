package io.tiffin.core.client;

import java.util.List;

/**
 * The cluster summary the master answers {@link TiffinClient#stats()} with ({@code tiffin stat}).
 *
 * <p>Thread-safe (immutable).
 *
 * @param version the Tiffin version the master runs
 * @param keys objects stored
 * @param capacity memory of all segments, bytes
 * @param used memory in use, bytes
 * @param liveNodes nodes whose heartbeats arrive
 * @param segments every mounted segment
 * @param evictedKeys objects evicted since the master started
 * @param caches the clients' cache counters, summed over the clients that reported in the last minute
 * @param expiringKeys objects with an expiry deadline (0 from a master that does not count them)
 */
public record ClusterStats(String version, long keys, long capacity, long used, int liveNodes,
                           List<SegmentStats> segments, long evictedKeys, CacheTotals caches, long expiringKeys) {
    public ClusterStats {
        segments = List.copyOf(segments);
    }

    /** Without the count of expiring objects (0). */
    public ClusterStats(String version, long keys, long capacity, long used, int liveNodes,
                        List<SegmentStats> segments, long evictedKeys, CacheTotals caches) {
        this(version, keys, capacity, used, liveNodes, segments, evictedKeys, caches, 0);
    }

    /**
     * One segment.
     *
     * <p>Thread-safe (immutable).
     *
     * @param name the segment's name (unique per node run)
     * @param nodeId the node that mounted it
     * @param endpoint {@code host:port} of the node's data plane; empty when unknown
     * @param capacity bytes
     * @param used bytes in use
     * @param largestFree the largest free region, bytes
     * @param status the segment's status as the master names it (OK, DRAINING, ...)
     */
    public record SegmentStats(String name, String nodeId, String endpoint, long capacity, long used,
                               long largestFree, String status) {
    }

    /**
     * Clients' caches.
     *
     * <p>Thread-safe (immutable).
     *
     * @param hotCacheClients clients with a hot cache
     * @param locationCacheClients clients with a location cache
     * @param totals their counters, summed
     */
    public record CacheTotals(int hotCacheClients, int locationCacheClients, CacheCounters totals) {
        /** No client reported. */
        public static final CacheTotals NONE = new CacheTotals(0, 0, CacheCounters.NONE);
    }
}
