package io.tiffin.core.cli;

import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.proto.SegmentStat;
import io.tiffin.core.transport.proto.StatsReply;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;

/**
 * {@code tiffin stat}: a human-readable summary of the cluster: version, nodes, each segment, keys,
 * capacity, usage and evictions.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "stat", mixinStandardHelpOptions = true, description = "Shows a summary of the cluster.")
final class StatCommand extends ClientCommand {
    @Override
    int run(TiffinClient client) {
        out().print(format(masterAddress, client.stats()));
        return 0;
    }

    /** The summary text, one item per line, segments as an aligned table. */
    static String format(String master, StatsReply s) {
        StringBuilder sb = new StringBuilder();
        sb.append("Master:    ").append(master).append(" (Tiffin ").append(s.getVersion()).append(")\n");
        sb.append("Nodes:     ").append(s.getLiveNodes()).append(" live\n");
        sb.append("Segments:  ").append(s.getSegmentsCount()).append('\n');
        if (s.getSegmentsCount() > 0) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"NAME", "NODE", "ENDPOINT", "CAPACITY", "USED", "LARGEST FREE", "STATUS"});
            for (SegmentStat seg : s.getSegmentsList()) {
                rows.add(new String[] {seg.getName(), seg.getNodeId(), seg.getEndpoint().isEmpty() ? "-"
                        : seg.getEndpoint(), Human.bytes(seg.getCapacity()), Human.bytes(seg.getUsed()) + " ("
                        + Human.percent(seg.getUsed(), seg.getCapacity()) + ")", Human.bytes(seg.getLargestFree()),
                        seg.getStatus()});
            }
            int[] width = new int[rows.getFirst().length];
            for (String[] r : rows) {
                for (int i = 0; i < r.length; i++) {
                    width[i] = Math.max(width[i], r[i].length());
                }
            }
            for (String[] r : rows) {
                StringBuilder line = new StringBuilder("  ");
                for (int i = 0; i < r.length; i++) {
                    line.append(i == r.length - 1 ? r[i] : String.format("%-" + width[i] + "s  ", r[i]));
                }
                sb.append(line.toString().stripTrailing()).append('\n');
            }
        }
        sb.append("Keys:      ").append(s.getKeys()).append('\n');
        sb.append("Capacity:  ").append(Human.bytes(s.getCapacity())).append('\n');
        sb.append("Used:      ").append(Human.bytes(s.getUsed())).append(" (")
                .append(Human.percent(s.getUsed(), s.getCapacity())).append(")\n");
        sb.append("Evicted:   ").append(s.getEvictedKeys()).append(" keys since the master started\n");
        var hc = s.getHotCache();
        if (hc.getReportingClients() == 0) {
            sb.append("Hot cache: no client with a hot cache reported in the last minute\n");
        } else {
            var t = hc.getTotals();
            long reads = t.getHits() + t.getMisses();
            sb.append("Hot cache: ").append(hc.getReportingClients()).append(" clients, ")
                    .append(Human.bytes(t.getBytesCached())).append(" of ").append(Human.bytes(t.getCapacityBytes()))
                    .append(" cached; hits ").append(t.getHits()).append(", misses ").append(t.getMisses())
                    .append(" (").append(Human.percent(t.getHits(), reads)).append(" hit)")
                    .append(", fills ").append(t.getFills()).append(", dropped fills ").append(t.getDroppedFills())
                    .append(", evictions ").append(t.getEvictions()).append(", stale copies rejected ")
                    .append(t.getStaleRejected()).append("\n");
        }
        if (hc.getLocationCacheClients() > 0) {
            var t = hc.getTotals();
            long lookups = t.getLocationHits() + t.getLocationMisses();
            sb.append("Location cache: ").append(hc.getLocationCacheClients()).append(" clients; hits ")
                    .append(t.getLocationHits()).append(", misses ").append(t.getLocationMisses()).append(" (")
                    .append(Human.percent(t.getLocationHits(), lookups)).append(" hit), refused ")
                    .append(t.getLocationRefused()).append("\n");
        }
        return sb.toString();
    }
}
