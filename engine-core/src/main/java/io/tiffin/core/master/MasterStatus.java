package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.metrics.JsonText;
import io.tiffin.core.metrics.RecentErrors;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.proto.ClientReport;
import io.tiffin.core.transport.proto.HotCacheTotals;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The cluster at a glance, as the JSON of {@code /api/status} (and the status page that reads it): this
 * master's role and term, every node with its liveness and last heartbeat, every segment with its
 * capacity and use, keys, operation rates, the SSD tier, the caches clients reported and the latest
 * warnings and errors. Field names and meanings: docs/OPERATIONS.md.
 *
 * <p>Thread-safe: reads thread-safe parts.
 */
final class MasterStatus {
    /** Clients listed one by one (the busiest readers); the rest are in the totals. */
    static final int CLIENTS_LISTED = 50;

    private final MasterService master;
    private final ClientReports clients;
    private final Leadership leadership;
    private final OpRates rates;
    private final RecentErrors errors;
    private final Supplier<String> self;
    private final boolean failover;
    private final long startedMillis;

    MasterStatus(MasterService master, ClientReports clients, Leadership leadership, OpRates rates,
                 RecentErrors errors, Supplier<String> self, boolean failover) {
        this.master = master;
        this.clients = clients;
        this.leadership = leadership;
        this.rates = rates;
        this.errors = errors;
        this.self = self;
        this.failover = failover;
        this.startedMillis = master.nowMillis();
    }

    /** The status document. */
    String json() {
        long now = master.nowMillis();
        JsonText j = new JsonText().beginObject();
        j.field("generated_at_ms", now).field("version", TiffinVersion.VERSION);
        masterPart(j, now);
        List<? extends SegmentView> segments = master.segmentViews();
        long capacity = 0;
        long used = 0;
        for (SegmentView s : segments) {
            capacity += s.capacity();
            used += s.used();
        }
        List<SegmentRegistry.NodeBeat> beats = master.nodeBeats();
        j.name("summary").beginObject().field("nodes", beats.size()).field("segments", segments.size())
                .field("keys", master.keyCount()).field("capacity_bytes", capacity).field("used_bytes", used)
                .field("utilization", capacity == 0 ? 0.0 : (double) used / capacity)
                .field("utilization_text", percent(used, capacity)).endObject();
        ratesPart(j);
        nodesPart(j, beats, segments, now);
        segmentsPart(j, segments);
        ssdPart(j);
        cachesPart(j);
        errorsPart(j);
        return j.endObject().toString();
    }

    private void masterPart(JsonText j, long now) {
        j.name("master").beginObject().field("address", self.get())
                .field("role", leadership.role().name().toLowerCase(Locale.ROOT))
                .field("term", master.term()).field("failover", failover)
                .field("leader", leadership.leaderHint() == null ? "" : leadership.leaderHint())
                .field("uptime_ms", now - startedMillis)
                .field("node_ttl_ms", master.settings().nodeTtl().toMillis()).endObject();
    }

    private void ratesPart(JsonText j) {
        OpRates.Rates r = rates.rates();
        j.name("rates");
        if (r == null) {
            j.nullValue();
            return;
        }
        j.beginObject().field("window_s", r.windowSeconds()).field("puts_per_s", r.puts())
                .field("gets_per_s", r.gets()).field("removes_per_s", r.removes())
                .field("evictions_per_s", r.evictedKeys()).field("evicted_bytes_per_s", r.evictedBytes())
                .endObject();
    }

    /**
     * Nodes with their state: {@code live} (heard within half the node TTL), {@code late} (silent longer,
     * deadline not passed) or {@code expiring} (deadline passed; the next liveness check unmounts it).
     */
    private void nodesPart(JsonText j, List<SegmentRegistry.NodeBeat> beats, List<? extends SegmentView> segments,
                           long now) {
        Map<String, long[]> perNode = new HashMap<>();
        for (SegmentView s : segments) {
            long[] t = perNode.computeIfAbsent(s.nodeId(), k -> new long[3]);
            t[0]++;
            t[1] += s.capacity();
            t[2] += s.used();
        }
        long halfTtl = master.settings().nodeTtl().toMillis() / 2;
        j.name("nodes").beginArray();
        for (SegmentRegistry.NodeBeat b : beats) {
            long[] t = perNode.getOrDefault(b.nodeId(), new long[3]);
            boolean heard = b.lastHeardMillis() != Long.MIN_VALUE;
            String state = now > b.deadlineMillis() ? "expiring"
                    : heard && now - b.lastHeardMillis() <= halfTtl ? "live" : "late";
            j.beginObject().field("id", b.nodeId()).field("state", state);
            j.name("last_heartbeat_ms_ago");
            if (heard) {
                j.value(Math.max(0, now - b.lastHeardMillis()));
            } else {
                j.nullValue();
            }
            j.field("deadline_in_ms", b.deadlineMillis() - now).field("segments", t[0])
                    .field("capacity_bytes", t[1]).field("used_bytes", t[2]).endObject();
        }
        j.endArray();
    }

    private void segmentsPart(JsonText j, List<? extends SegmentView> segments) {
        j.name("segments").beginArray();
        for (SegmentView s : segments) {
            String endpoint = master.endpointOf(s.name());
            j.beginObject().field("name", s.name()).field("node", s.nodeId())
                    .field("endpoint", endpoint == null ? "" : endpoint).field("capacity_bytes", s.capacity())
                    .field("used_bytes", s.used()).field("utilization_text", percent(s.used(), s.capacity()))
                    .field("largest_free_bytes", s.largestFreeRegion())
                    .field("status", s.status().name()).endObject();
        }
        j.endArray();
    }

    private void ssdPart(JsonText j) {
        TierSettings tier = master.ssdTier().tierSettings();
        long[] tally = master.ssdTally();
        MasterCounters c = master.counters();
        j.name("ssd").beginObject().field("offload_mode", tier.offloadMode().name().toLowerCase(Locale.ROOT)
                        .replace('_', '-'))
                .field("capacity_bytes", master.ssdTier().ssdCapacityBytes()).field("objects", tally[0])
                .field("bytes", tally[1])
                .field("offloads_in_flight", master.ssdTier().offloadsInFlight())
                .field("promotions_queued", master.ssdTier().promotionsQueued())
                .field("offloads_total", c.offloads()).field("offload_failures_total", c.offloadFailures())
                .field("promotions_total", c.promotions()).field("promotion_failures_total", c.promotionFailures())
                .field("disk_evictions_total", c.diskEvictions())
                .field("delete_failures_total", c.failedDiskDeletes())
                .field("deadline_write_failures_total", c.failedDiskStamps())
                .field("away_copies", master.ssdTier().awayCopies()).endObject();
    }

    private void cachesPart(JsonText j) {
        HotCacheTotals totals = clients.totals();
        ClientReport t = totals.getTotals();
        j.name("hot_cache").beginObject().field("reporting_clients", totals.getReportingClients())
                .field("hits", t.getHits()).field("misses", t.getMisses());
        ratio(j, "hit_ratio", t.getHits(), t.getMisses());
        j.field("bytes_cached", t.getBytesCached()).field("capacity_bytes", t.getCapacityBytes())
                .field("fills", t.getFills()).field("evictions", t.getEvictions());
        j.name("clients").beginArray();
        List<ClientReports.Latest> latest = clients.latest().stream()
                .filter(l -> l.report().getCapacityBytes() > 0)
                .sorted(Comparator.comparingLong((ClientReports.Latest l) ->
                        l.report().getHits() + l.report().getMisses()).reversed())
                .limit(CLIENTS_LISTED).toList();
        for (ClientReports.Latest l : latest) {
            ClientReport r = l.report();
            j.beginObject().field("id", r.getClientId()).field("hits", r.getHits()).field("misses", r.getMisses());
            ratio(j, "hit_ratio", r.getHits(), r.getMisses());
            j.field("bytes_cached", r.getBytesCached()).field("capacity_bytes", r.getCapacityBytes())
                    .field("reported_ms_ago", l.ageMillis()).endObject();
        }
        j.endArray().endObject();
        j.name("location_cache").beginObject().field("reporting_clients", totals.getLocationCacheClients())
                .field("hits", t.getLocationHits()).field("misses", t.getLocationMisses());
        ratio(j, "hit_ratio", t.getLocationHits(), t.getLocationMisses());
        j.endObject();
    }

    /** {@code part / whole} as {@code tiffin stat} prints it ({@code 12.5%}), so the page and the CLI agree. */
    static String percent(long part, long whole) {
        return String.format(Locale.ROOT, "%.1f%%", whole == 0 ? 0.0 : 100.0 * part / whole);
    }

    private static void ratio(JsonText j, String name, long hits, long misses) {
        j.name(name);
        if (hits + misses == 0) {
            j.nullValue();
        } else {
            j.value((double) hits / (hits + misses));
        }
    }

    private void errorsPart(JsonText j) {
        j.name("errors").beginObject().field("captured", errors.capturing()).name("latest").beginArray();
        for (RecentErrors.Event e : errors.latest()) {
            j.beginObject().field("time_ms", e.timeMillis()).field("level", e.level()).field("logger", e.logger())
                    .field("message", e.message()).endObject();
        }
        j.endArray().endObject();
    }
}
