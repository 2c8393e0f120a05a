package io.tiffin.core.master;

import io.tiffin.core.transport.proto.ClientReport;
import io.tiffin.core.transport.proto.HotCacheTotals;
import io.tiffin.core.util.Ticker;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The latest cache counters (hot cache, location cache) each client reported, summed for metrics and
 * STATS. A client that has not reported for {@code expiryMillis} is dropped from the sums.
 *
 * <p>Thread-safe.
 */
final class ClientReports {
    private record Entry(ClientReport report, long receivedMillis) {
    }

    private final ConcurrentHashMap<String, Entry> reports = new ConcurrentHashMap<>();
    private final Ticker ticker;
    private final long expiryMillis;

    public ClientReports(Ticker ticker, long expiryMillis) {
        this.ticker = ticker;
        this.expiryMillis = expiryMillis;
    }

    public void accept(ClientReport report) {
        reports.put(report.getClientId(), new Entry(report, ticker.millis()));
    }

    /** One client's latest report and how long ago it came (ms). */
    record Latest(ClientReport report, long ageMillis) {
    }

    /** The latest report of each live client. */
    java.util.List<Latest> latest() {
        long now = ticker.millis();
        java.util.List<Latest> out = new java.util.ArrayList<>();
        for (Entry e : reports.values()) {
            if (e.receivedMillis() + expiryMillis >= now) {
                out.add(new Latest(e.report(), now - e.receivedMillis()));
            }
        }
        return out;
    }

    /** The sum over live clients. */
    public HotCacheTotals totals() {
        long now = ticker.millis();
        reports.values().removeIf(e -> e.receivedMillis() + expiryMillis < now);
        ClientReport.Builder sum = ClientReport.newBuilder();
        int n = 0;
        int withLocations = 0;
        for (Entry e : reports.values()) {
            ClientReport r = e.report();
            if (r.getCapacityBytes() > 0) {
                n++;
            }
            if (r.getLocationCache()) {
                withLocations++;
            }
            sum.setLocationHits(sum.getLocationHits() + r.getLocationHits())
                    .setLocationMisses(sum.getLocationMisses() + r.getLocationMisses())
                    .setLocationRefused(sum.getLocationRefused() + r.getLocationRefused());
            sum.setHits(sum.getHits() + r.getHits())
                    .setMisses(sum.getMisses() + r.getMisses())
                    .setFills(sum.getFills() + r.getFills())
                    .setDroppedFills(sum.getDroppedFills() + r.getDroppedFills())
                    .setRejectedFills(sum.getRejectedFills() + r.getRejectedFills())
                    .setEvictions(sum.getEvictions() + r.getEvictions())
                    .setStaleRejected(sum.getStaleRejected() + r.getStaleRejected())
                    .setInvalidations(sum.getInvalidations() + r.getInvalidations())
                    .setBytesCached(sum.getBytesCached() + r.getBytesCached())
                    .setCapacityBytes(sum.getCapacityBytes() + r.getCapacityBytes());
        }
        return HotCacheTotals.newBuilder().setReportingClients(n).setLocationCacheClients(withLocations)
                .setTotals(sum).build();
    }
}
