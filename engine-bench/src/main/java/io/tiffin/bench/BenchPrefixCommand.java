package io.tiffin.bench;

import com.google.inject.Injector;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.master.MasterSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench prefix}: Mooncake Store's prefix query bench, in process on a {@link MasterService}.
 * Writes {@code --num-keys} objects named {@code tenant_NNN/session_i} (key {@code i} in group {@code i %
 * num-prefix-groups}), then times {@code GetReplicaListByRegex("^tenant_042/session_")} through the full
 * regex scan ({@link MasterService#getReplicaListByRegexFullScan}) and through the fast path (ordered key
 * index, {@link MasterService#getReplicaListByRegex}) in the same run, checks that both return the same
 * keys, and prints matches per query, both average latencies and the speedup.
 *
 * <p>Not thread-safe: one instance runs one benchmark.
 */
@Command(name = "prefix", mixinStandardHelpOptions = true,
        description = "Prefix query: full regex scan versus the master's ordered key index, in process.")
public final class BenchPrefixCommand implements Callable<Integer> {
    /** Fast-path queries run untimed before the timed ones (the JIT compiles the path meanwhile). */
    static final int FAST_WARMUP = 300;

    /** Where picocli's usage errors go: the command line that runs this command (its err stream, its usage). */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;


    @Option(names = "--num-keys", defaultValue = "50000", description = "objects to write (default ${DEFAULT-VALUE})")
    int numKeys;

    @Option(names = "--num-prefix-groups", defaultValue = "100", description = "tenants (default ${DEFAULT-VALUE})")
    int numPrefixGroups;

    @Option(names = "--query-iterations", defaultValue = "100", description = "timed queries per mode (default ${DEFAULT-VALUE})")
    int queryIterations;

    @Option(names = "--target-prefix-id", defaultValue = "42", description = "tenant queried (default ${DEFAULT-VALUE})")
    int targetPrefixId;

    @Option(names = "--value-size", defaultValue = "1024", description = "object size, bytes (default ${DEFAULT-VALUE})")
    long valueSize;

    @Option(names = "--csv", description = "append rows to this CSV file: mode,num_keys,matches_per_query,avg_ms")
    Path csv;

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchPrefixCommand()).execute(args));
    }

    @Override
    public Integer call() {
        if (numKeys < 1 || numPrefixGroups < 1 || queryIterations < 1 || targetPrefixId < 0
                || targetPrefixId >= numPrefixGroups) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--num-keys, --num-prefix-groups and"
                    + " --query-iterations must be >= 1 and --target-prefix-id in [0, num-prefix-groups)");
        }
        Injector injector = Tiffin.injector(TiffinConfig.defaults());
        try (PluginRegistry plugins = injector.getInstance(PluginRegistry.class)) {
            MasterService master = new MasterService(MasterSettings.defaults(),
                    injector.getInstance(AllocationStrategy.class), Ticker.SYSTEM, null);
            long capacity = Math.max(1L << 30, 2 * numKeys * valueSize);
            for (int i = 0; i < 4; i++) {
                master.mountSegment("prefix-bench-seg" + i, "prefix-bench-node", "127.0.0.1:" + (40000 + i), capacity);
            }
            for (int i = 0; i < numKeys; i++) {
                String key = key(i % numPrefixGroups, i);
                if (!master.putStart("prefix-bench", key, valueSize, PutOptions.DEFAULT).isOk()
                        || master.putEnd("prefix-bench", key) != ErrorCode.OK) {
                    throw new IllegalStateException("cannot write " + key + " into the in-process master");
                }
            }
            String regex = String.format(Locale.ROOT, "^tenant_%03d/session_", targetPrefixId);
            System.out.printf("Keys: %d in %d prefix groups; query: GetReplicaListByRegex(\"%s\"), %d iterations%n",
                    numKeys, numPrefixGroups, regex, queryIterations);

            List<ObjectLocation> scanned = master.getReplicaListByRegexFullScan(regex);
            List<ObjectLocation> fast = master.getReplicaListByRegex(regex);
            if (!scanned.stream().map(ObjectLocation::key).toList().equals(fast.stream().map(ObjectLocation::key).toList())) {
                throw new IllegalStateException("the fast path and the regex scan returned different keys ("
                        + fast.size() + " vs " + scanned.size() + ")");
            }
            // Warm both paths up, then time them one after the other. The scan with a tenth of the iterations (at
            // least 3: each visits every key); the fast path with at least FAST_WARMUP queries, about 20-50 ms:
            // with ten, the JIT still compiled it during the timed queries in some runs (fast-path averages of
            // 0.19-0.25 ms against 0.10-0.12, docs/BENCHMARKS.md, "The key index's updates in batches").
            int warm = Math.max(3, queryIterations / 10);
            time(master::getReplicaListByRegexFullScan, regex, warm);
            time(master::getReplicaListByRegex, regex, Math.max(FAST_WARMUP, warm));
            double scanMs = time(master::getReplicaListByRegexFullScan, regex, queryIterations);
            double fastMs = time(master::getReplicaListByRegex, regex, queryIterations);
            int matches = fast.size();
            System.out.println("Matches/query: " + matches);
            System.out.printf(Locale.ROOT, "regex_scan: total %.1f ms, avg %.4f ms/query%n", scanMs * queryIterations, scanMs);
            System.out.printf(Locale.ROOT, "fast_path:  total %.1f ms, avg %.4f ms/query%n", fastMs * queryIterations, fastMs);
            System.out.printf(Locale.ROOT, "Speedup: %.1fx (latency reduction %.2f%%)%n", scanMs / fastMs,
                    100 * (1 - fastMs / scanMs));
            BenchSupport.writeCsv(csv, "mode,num_keys,matches_per_query,avg_ms", List.of(
                    "regex_scan," + numKeys + "," + matches + "," + BenchSupport.fmt(scanMs, 4),
                    "fast_path," + numKeys + "," + matches + "," + BenchSupport.fmt(fastMs, 4)));
            return 0;
        }
    }

    private static String key(int group, int i) {
        return String.format(Locale.ROOT, "tenant_%03d/session_%d", group, i);
    }

    /** Average milliseconds per query over {@code iterations} queries. */
    private static double time(Function<String, List<ObjectLocation>> query, String regex, int iterations) {
        long sink = 0;
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            sink += query.apply(regex).size();
        }
        long elapsed = System.nanoTime() - start;
        if (sink < 0) {
            System.out.println(sink); // keeps the results alive
        }
        return elapsed / 1e6 / iterations;
    }
}
