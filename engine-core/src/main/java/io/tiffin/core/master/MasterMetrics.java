package io.tiffin.core.master;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.tiffin.core.metrics.PrometheusText;
import io.tiffin.core.transport.Opcode;

/**
 * The master's Prometheus metrics: request counts, failures and latencies per RPC, bytes received and
 * sent, and gauges read from the {@link MasterService} at scrape time (segments, capacity, used bytes,
 * keys, live nodes, evictions).
 *
 * <p>Thread-safe: recording is lock-free; {@link #scrape()} may run concurrently with recording.
 */
public final class MasterMetrics {
    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter requests;
    private final Counter failures;
    private final Histogram latency;
    private final Counter bytesIn;
    private final Counter bytesOut;
    // Per-opcode data points, looked up on first use: labelValues() costs a map lookup per request.
    private final CounterDataPoint[] requestPoints = new CounterDataPoint[Opcode.values().length];
    private final DistributionDataPoint[] latencyPoints = new DistributionDataPoint[Opcode.values().length];

    public MasterMetrics(MasterService master, ClientReports clients) {
        requests = Counter.builder().name("tiffin_master_requests_total")
                .help("RPC requests handled, by operation").labelNames("op").register(registry);
        failures = Counter.builder().name("tiffin_master_request_failures_total")
                .help("RPC requests answered with an error, by operation").labelNames("op").register(registry);
        latency = Histogram.builder().name("tiffin_master_request_duration_seconds")
                .help("RPC handling time on the master, by operation").labelNames("op")
                .classicUpperBounds(0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 1)
                .register(registry);
        bytesIn = Counter.builder().name("tiffin_master_received_bytes_total")
                .help("Bytes of RPC frames received").register(registry);
        bytesOut = Counter.builder().name("tiffin_master_sent_bytes_total")
                .help("Bytes of RPC frames sent").register(registry);
        GaugeWithCallback.builder().name("tiffin_master_segments").help("Mounted memory segments")
                .callback(cb -> cb.call(master.segmentViews().size())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_capacity_bytes").help("Total capacity of mounted segments")
                .callback(cb -> cb.call(master.capacityBytes())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_used_bytes").help("Bytes allocated in mounted segments")
                .callback(cb -> cb.call(master.usedBytes())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_keys").help("Objects known to the master")
                .callback(cb -> cb.call(master.keyCount())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_live_nodes").help("Nodes that pinged within the node TTL")
                .callback(cb -> cb.call(master.liveNodes().size())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_node_heartbeat_age_seconds")
                .help("Seconds since each mounted node was last heard from (ping or mount); -1 before its first")
                .labelNames("node").callback(cb -> {
                    long now = master.nowMillis();
                    for (SegmentRegistry.NodeBeat b : master.nodeBeats()) {
                        cb.call(b.lastHeardMillis() == Long.MIN_VALUE ? -1 : (now - b.lastHeardMillis()) / 1e3,
                                b.nodeId());
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_segment_capacity_bytes").help("Capacity of each mounted segment")
                .labelNames("segment", "node").callback(cb -> {
                    for (var v : master.segmentViews()) {
                        cb.call(v.capacity(), v.name(), v.nodeId());
                    }
                }).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_segment_used_bytes").help("Bytes allocated in each mounted segment")
                .labelNames("segment", "node").callback(cb -> {
                    for (var v : master.segmentViews()) {
                        cb.call(v.used(), v.name(), v.nodeId());
                    }
                }).register(registry);
        CounterWithCallback.builder().name("tiffin_master_evicted_keys_total").help("Objects evicted")
                .callback(cb -> cb.call(master.counters().evictedKeys())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_expired_objects_total")
                .help("Objects removed because their expiry deadline passed (counted apart from evictions)")
                .callback(cb -> cb.call(master.counters().expiredObjects())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_evicted_bytes_total").help("Bytes evicted")
                .callback(cb -> cb.call(master.counters().evictedBytes())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_eviction_runs_total").help("Eviction passes that ran")
                .callback(cb -> cb.call(master.counters().evictionRuns())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_allocation_failures_total")
                .help("PutStarts that found no room on any segment")
                .callback(cb -> cb.call(master.counters().allocationFailures())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_partial_allocations_total")
                .help("PutStarts that got fewer replicas than asked")
                .callback(cb -> cb.call(master.counters().partialAllocations())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_put_start_discards_total")
                .help("Stuck puts pre-empted by a new put of the same key")
                .callback(cb -> cb.call(master.counters().putStartDiscards())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_put_start_releases_total")
                .help("Buffers of stuck puts freed after the release timeout")
                .callback(cb -> cb.call(master.counters().putStartReleases())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_ssd_capacity_bytes").help("SSD capacity registered by nodes")
                .callback(cb -> cb.call(master.ssdTier().ssdCapacityBytes())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_offloads_in_flight").help("Offload tasks queued or running")
                .callback(cb -> cb.call(master.ssdTier().offloadsInFlight())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_promotions_queued").help("Promotion tasks waiting for a node")
                .callback(cb -> cb.call(master.ssdTier().promotionsQueued())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_offloads_total").help("Objects copied to an SSD tier")
                .callback(cb -> cb.call(master.counters().offloads())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_offload_failures_total")
                .help("Offloads that failed (the memory copy stayed)")
                .callback(cb -> cb.call(master.counters().offloadFailures())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_promotions_total").help("SSD-only objects promoted to memory")
                .callback(cb -> cb.call(master.counters().promotions())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_promotion_failures_total")
                .help("Promotions that failed (the SSD copy stayed readable)")
                .callback(cb -> cb.call(master.counters().promotionFailures())).register(registry);
        GaugeWithCallback.builder().name("tiffin_master_ssd_away_copies")
                .help("SSD-only objects on nodes that are away: missing until their node returns")
                .callback(cb -> cb.call(master.ssdTier().awayCopies())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_ssd_delete_failures_total")
                .help("Deletions of SSD copies of removed objects that a node's disk failed (recorded, asked again)")
                .callback(cb -> cb.call(master.counters().failedDiskDeletes())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_ssd_deadline_write_failures_total")
                .help("New expiry deadlines that a node's disk failed to write into SSD copies' stamps (sent again)")
                .callback(cb -> cb.call(master.counters().failedDiskStamps())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_disk_evictions_total")
                .help("SSD copies dropped because a node's backend evicted them")
                .callback(cb -> cb.call(master.counters().diskEvictions())).register(registry);
        hotCacheCounter("hits", "Reads served from client hot caches", clients, r -> r.getHits());
        hotCacheCounter("misses", "Reads that missed client hot caches", clients, r -> r.getMisses());
        hotCacheCounter("fills", "Objects admitted into client hot caches", clients, r -> r.getFills());
        hotCacheCounter("dropped_fills", "Fills dropped (full ring, or blocks pinned by readers)", clients,
                r -> r.getDroppedFills());
        hotCacheCounter("rejected_fills", "Fills refused by the admission policy or for size", clients,
                r -> r.getRejectedFills());
        hotCacheCounter("evictions", "Objects evicted from client hot caches", clients, r -> r.getEvictions());
        hotCacheCounter("stale_rejected", "Cached copies rejected because the master had a newer version", clients,
                r -> r.getStaleRejected());
        GaugeWithCallback.builder().name("tiffin_client_hotcache_bytes").help("Bytes cached in client hot caches")
                .callback(cb -> cb.call(clients.totals().getTotals().getBytesCached())).register(registry);
        GaugeWithCallback.builder().name("tiffin_client_hotcache_reporting_clients")
                .help("Clients with a hot cache that reported in the last minute")
                .callback(cb -> cb.call(clients.totals().getReportingClients())).register(registry);
        locationCacheCounter("hits", "Reads and exists answered from client location caches", clients,
                r -> r.getLocationHits());
        locationCacheCounter("misses", "Lookups client location caches could not answer", clients,
                r -> r.getLocationMisses());
        locationCacheCounter("refused", "Reads through a cached location that failed (re-mounted segment, dead"
                + " node) and were looked up again", clients, r -> r.getLocationRefused());
        GaugeWithCallback.builder().name("tiffin_client_location_cache_reporting_clients")
                .help("Clients with a location cache that reported in the last minute")
                .callback(cb -> cb.call(clients.totals().getLocationCacheClients())).register(registry);
    }

    /**
     * Exports the TLS certificate of the master's RPC server: when it expires, and its reloads
     * ({@code transport.tls.reload-interval}), so that an alert can fire before a certificate runs out.
     */
    void registerTls(io.tiffin.core.transport.TlsContexts tls) {
        GaugeWithCallback.builder().name("tiffin_master_tls_certificate_not_after_seconds")
                .help("When the certificate the master presents expires (Unix time, seconds)")
                .callback(cb -> {
                    java.security.cert.X509Certificate c = tls.certificate();
                    if (c != null) {
                        cb.call(c.getNotAfter().getTime() / 1e3);
                    }
                }).register(registry);
        CounterWithCallback.builder().name("tiffin_master_tls_reloads_total")
                .help("Times changed TLS files were loaded without a restart")
                .callback(cb -> cb.call(tls.reloads())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_tls_reload_failures_total")
                .help("Times changed TLS files did not load (the ones loaded before stayed in use)")
                .callback(cb -> cb.call(tls.failedReloads())).register(registry);
    }

    /**
     * Exports the reloads of the master's {@code transport.tokens-file}: a changed file it refused keeps the old
     * tokens, and a rotation that goes on from there refuses the clients moved to the new token.
     */
    void registerTokens(io.tiffin.core.transport.TokensFile tokens) {
        CounterWithCallback.builder().name("tiffin_master_tokens_reloads_total")
                .help("Times a changed transport.tokens-file was read without a restart")
                .callback(cb -> cb.call(tokens.reloads())).register(registry);
        CounterWithCallback.builder().name("tiffin_master_tokens_reload_failures_total")
                .help("Times a changed transport.tokens-file was refused (the tokens read before stayed in use)")
                .callback(cb -> cb.call(tokens.failedReloads())).register(registry);
    }

    private void locationCacheCounter(String name, String help, ClientReports clients,
                                      java.util.function.ToLongFunction<io.tiffin.core.transport.proto.ClientReport> f) {
        CounterWithCallback.builder().name("tiffin_client_location_cache_" + name + "_total")
                .help(help + " (sum of the latest reports of live clients)")
                .callback(cb -> cb.call(f.applyAsLong(clients.totals().getTotals()))).register(registry);
    }

    private void hotCacheCounter(String name, String help, ClientReports clients,
                                 java.util.function.ToLongFunction<io.tiffin.core.transport.proto.ClientReport> f) {
        CounterWithCallback.builder().name("tiffin_client_hotcache_" + name + "_total")
                .help(help + " (sum of the latest reports of live clients)")
                .callback(cb -> cb.call(f.applyAsLong(clients.totals().getTotals()))).register(registry);
    }

    /** Records one handled request. */
    public void recordRequest(Opcode op, long nanos, boolean ok) {
        int i = op.ordinal();
        CounterDataPoint count = requestPoints[i];
        DistributionDataPoint time = latencyPoints[i];
        if (count == null || time == null) {
            // A benign race: labelValues returns the same data point to every thread.
            count = requests.labelValues(op.metricName());
            time = latency.labelValues(op.metricName());
            requestPoints[i] = count;
            latencyPoints[i] = time;
        }
        count.inc();
        if (!ok) {
            failures.labelValues(op.metricName()).inc();
        }
        time.observe(nanos / 1e9);
    }

    /** Requests handled so far of the operations {@code ops}, summed. */
    public long requestCount(Opcode... ops) {
        long n = 0;
        for (Opcode op : ops) {
            CounterDataPoint p = requestPoints[op.ordinal()];
            if (p != null) {
                n += p.getLongValue();
            }
        }
        return n;
    }

    public void addBytesIn(long n) {
        bytesIn.inc(n);
    }

    public void addBytesOut(long n) {
        bytesOut.inc(n);
    }

    /** The Prometheus text exposition of every metric. */
    public String scrape() {
        return PrometheusText.of(registry);
    }
}
