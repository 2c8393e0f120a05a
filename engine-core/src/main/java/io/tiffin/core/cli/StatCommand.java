package io.tiffin.core.cli;

import io.tiffin.core.client.CacheCounters;
import io.tiffin.core.client.ClusterStats;
import io.tiffin.core.client.TiffinClient;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin stat}: a human-readable summary of the cluster: version, nodes, each segment, keys,
 * capacity, usage and evictions. With {@code --watch} it redraws the summary in place (ANSI: cursor home,
 * clear to the end) every interval until interrupted (Ctrl-C), over one connection.
 *
 * <p>Not thread-safe: one instance runs once.
 */
@Command(name = "stat", mixinStandardHelpOptions = true, description = "Shows a summary of the cluster.")
final class StatCommand extends ClientCommand {
    /** Moves the cursor to the top left and clears the screen below it. */
    static final String REDRAW = "\u001b[H\u001b[J";

    @Option(names = "--watch", arity = "0..1", fallbackValue = "2", paramLabel = "SECONDS",
            description = "Redraw the summary in place every SECONDS (default 2) until Ctrl-C.")
    Double watchSeconds;

    @Override
    void check() {
        if (watchSeconds != null && !(watchSeconds >= 0.1 && watchSeconds <= 3600)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--watch = " + watchSeconds + " (expected: 0.1 to 3600 seconds)");
        }
    }

    @Override
    int run(TiffinClient client) {
        if (watchSeconds == null) {
            out().print(format(masterAddress, client.stats()));
            return 0;
        }
        long pause = Math.round(watchSeconds * 1000);
        while (!Thread.currentThread().isInterrupted()) {
            String text = format(masterAddress, client.stats());
            out().print(REDRAW + text + "\nEvery " + watchSeconds + " s; Ctrl-C to stop. " + java.time.LocalTime.now()
                    .withNano(0) + "\n");
            out().flush();
            try {
                Thread.sleep(pause); // paces the refreshes
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return 0;
    }

    /** The summary text, one item per line, segments as an aligned table. */
    static String format(String master, ClusterStats s) {
        StringBuilder sb = new StringBuilder();
        sb.append("Master:    ").append(master).append(" (Tiffin ").append(s.version()).append(")\n");
        sb.append("Nodes:     ").append(s.liveNodes()).append(" live\n");
        sb.append("Segments:  ").append(s.segments().size()).append('\n');
        if (!s.segments().isEmpty()) {
            List<String[]> rows = new ArrayList<>();
            rows.add(new String[] {"NAME", "NODE", "ENDPOINT", "CAPACITY", "USED", "LARGEST FREE", "STATUS"});
            for (ClusterStats.SegmentStats seg : s.segments()) {
                rows.add(new String[] {seg.name(), seg.nodeId(), seg.endpoint().isEmpty() ? "-"
                        : seg.endpoint(), Human.bytes(seg.capacity()), Human.bytes(seg.used()) + " ("
                        + Human.percent(seg.used(), seg.capacity()) + ")", Human.bytes(seg.largestFree()),
                        seg.status()});
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
        sb.append("Keys:      ").append(s.keys()).append('\n');
        sb.append("Capacity:  ").append(Human.bytes(s.capacity())).append('\n');
        sb.append("Used:      ").append(Human.bytes(s.used())).append(" (")
                .append(Human.percent(s.used(), s.capacity())).append(")\n");
        sb.append("Evicted:   ").append(s.evictedKeys()).append(" keys since the master started\n");
        ClusterStats.CacheTotals hc = s.caches();
        if (hc.hotCacheClients() == 0) {
            sb.append("Hot cache: no client with a hot cache reported in the last minute\n");
        } else {
            CacheCounters t = hc.totals();
            long reads = t.hits() + t.misses();
            sb.append("Hot cache: ").append(hc.hotCacheClients()).append(" clients, ")
                    .append(Human.bytes(t.bytesCached())).append(" of ").append(Human.bytes(t.capacityBytes()))
                    .append(" cached; hits ").append(t.hits()).append(", misses ").append(t.misses())
                    .append(" (").append(Human.percent(t.hits(), reads)).append(" hit)")
                    .append(", fills ").append(t.fills()).append(", dropped fills ").append(t.droppedFills())
                    .append(", evictions ").append(t.evictions()).append(", stale copies rejected ")
                    .append(t.staleRejected()).append("\n");
        }
        if (hc.locationCacheClients() > 0) {
            CacheCounters t = hc.totals();
            long lookups = t.locationHits() + t.locationMisses();
            sb.append("Location cache: ").append(hc.locationCacheClients()).append(" clients; hits ")
                    .append(t.locationHits()).append(", misses ").append(t.locationMisses()).append(" (")
                    .append(Human.percent(t.locationHits(), lookups)).append(" hit), refused ")
                    .append(t.locationRefused()).append("\n");
        }
        return sb.toString();
    }
}
