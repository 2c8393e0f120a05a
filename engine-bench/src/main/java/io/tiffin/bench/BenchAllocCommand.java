package io.tiffin.bench;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.plugin.ExtensionPoint;
import io.tiffin.core.plugin.PluginRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code tiffin bench alloc}: Mooncake Store's {@code allocation_strategy_bench} in Java. It runs the
 * installed allocation strategies side by side on simulated segments (offset allocators only, no
 * memory), one thread, no locks, every strategy on the same seeded sequence, and prints the same table
 * and summary lines as the original; see docs/BENCHMARKS.md.
 *
 * <p>Workloads: {@code fillup} (allocate only), {@code scaleout} (prefill to 50%, inject empty
 * segments, allocate 30% of the new capacity) and {@code size_class_churn} (mixed sizes with
 * evict-on-failure). When {@code random} and {@code free-ratio-first} are both in a
 * {@code size_class_churn} run, the summary gives every other strategy's geometric mean of
 * {@code frag_avg / min(frag_avg of random, free-ratio-first)} over the cases with 10 or 100 segments.
 *
 * <p>Not thread-safe: one instance per command invocation.
 */
@Command(name = "alloc", mixinStandardHelpOptions = true,
        description = "Allocation strategy benchmark on simulated segments (Mooncake's allocation_strategy_bench).")
public final class BenchAllocCommand implements Callable<Integer> {
    static final List<Integer> DEFAULT_SEGMENTS = List.of(1, 10, 100, 512, 1024);
    static final List<Integer> CHURN_SEGMENTS = List.of(1, 10, 100);
    static final List<Integer> DEFAULT_REPLICAS = List.of(1, 2, 3);
    static final List<Long> SIZES = List.of(512L << 10, 8L << 20, 32L << 20);
    /** Wall time per strategy spent on unmeasured runs of the first case, so the JIT has compiled it. */
    static final long WARMUP_NANOS = 300_000_000L;
    /** Per case and strategy, unmeasured runs of the same case go on until this much time has passed. */
    static final long CASE_WARMUP_NANOS = 50_000_000L;

    @Spec
    CommandSpec spec;

    @Option(names = "--workload", defaultValue = "fillup", paramLabel = "fillup|scaleout|size_class_churn",
            description = "Workload (default: ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--segment-capacity", defaultValue = "1024", paramLabel = "MB",
            description = "MiB per segment; base capacity in skewed mode (default: ${DEFAULT-VALUE}).")
    long segmentCapacityMb;

    @Option(names = "--num-allocations", defaultValue = "10000",
            description = "Measured allocations for fillup and size_class_churn (default: ${DEFAULT-VALUE}).")
    int numAllocations;

    @Option(names = "--prefill-pct", defaultValue = "0",
            description = "Prefill to this average utilisation (%%) before measuring; > 0 disables fillup's early "
                    + "exit (default: ${DEFAULT-VALUE}).")
    double prefillPct;

    @Option(names = "--size-class-pattern", defaultValue = "kv_mixed", paramLabel = "kv_mixed|dsa_pair|all",
            description = "size_class_churn classes (default: ${DEFAULT-VALUE}).")
    String sizeClassPattern;

    @Option(names = "--size-class-evict-ratio", defaultValue = "0.02",
            description = "Fraction of live objects dropped per failed try, in (0, 1] (default: ${DEFAULT-VALUE}).")
    double evictRatio;

    @Option(names = "--segments", split = ",", paramLabel = "LIST",
            description = "Segment counts (default: 1,10,100 for size_class_churn, else 1,10,100,512,1024).")
    List<Integer> segmentCounts;

    @Option(names = "--replicas", split = ",", paramLabel = "LIST",
            description = "Replica counts; cases with more replicas than segments are skipped (default: 1,2,3).")
    List<Integer> replicaCounts;

    @Option(names = "--skewed", arity = "0..1", fallbackValue = "true", paramLabel = "BOOL",
            description = "Only skewed clusters (1.5x / 0.5x alternating capacities), or with =false only "
                    + "uniform ones (default: both).")
    Boolean skewed;

    @Option(names = "--strategies", split = ",", paramLabel = "LIST",
            description = "Strategies to compare (default: all installed).")
    List<String> strategyNames;

    @Option(names = "--csv", paramLabel = "FILE", description = "Write one CSV row per case and strategy.")
    Path csv;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Draw frag_avg per strategy and case.")
    Path plot;

    /** Runs the command stand-alone: {@code java ... io.tiffin.bench.BenchAllocCommand --help}. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchAllocCommand()).execute(args));
    }

    @Override
    public Integer call() throws IOException {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        List<CaseResult> results = new ArrayList<>();
        try (PluginRegistry registry = BenchSupport.plugins()) {
            List<String> names = strategyNames == null || strategyNames.isEmpty()
                    ? registry.names(ExtensionPoint.ALLOCATION_STRATEGY) : strategyNames;
            Map<String, AllocationStrategy> strategies = new LinkedHashMap<>();
            for (String name : names) {
                strategies.put(name, registry.allocationStrategy(name).create(PluginContext.empty()));
            }
            List<Case> cases = cases();
            out.printf(Locale.ROOT, "Allocation strategy benchmark: workload=%s, segment_capacity=%dMB, "
                    + "num_allocations=%d, prefill_pct=%.1f, seed=%d, strategies=%s, cases=%d%n", workload,
                    segmentCapacityMb, numAllocations, prefillPct, AllocBenchRun.SEED, String.join(",", names),
                    cases.size());
            if (cases.isEmpty()) {
                out.println("No case: every replica count exceeds every segment count.");
                return 0;
            }
            warmUp(strategies, cases.getFirst());
            out.println(header());
            try (ProgressBar progress = progressBar(cases.size() * strategies.size())) {
                for (Case c : cases) {
                    for (Map.Entry<String, AllocationStrategy> e : strategies.entrySet()) {
                        long warm = System.nanoTime();
                        for (int i = 0; i < 2 && System.nanoTime() - warm < CASE_WARMUP_NANOS; i++) {
                            run(e.getKey(), e.getValue(), c);
                        }
                        CaseResult r = run(e.getKey(), e.getValue(), c);
                        results.add(r);
                        out.println(row(r));
                        r.summaryLines.forEach(out::println);
                        out.flush();
                        if (progress != null) {
                            progress.step();
                        }
                    }
                }
            }
        }
        summary(results).forEach(out::println);
        if (csv != null) {
            writeCsv(csv, results);
            out.println("CSV written to " + csv);
        }
        if (plot != null) {
            FragmentationPlot.write(plot, "Fragmentation per strategy and case (" + workload + ", "
                    + segmentCapacityMb + " MB segments)", results);
            out.println("Plot written to " + plot);
        }
        out.flush();
        return 0;
    }

    // ------------------------------------------------------------------------------ cases

    /** One benchmark case; {@code size} is 0 for size_class_churn. */
    record Case(int segments, int replicas, boolean skewed, String pattern, long size) {
    }

    List<Case> cases() {
        List<Integer> segs = segmentCounts != null ? segmentCounts
                : workload.equals("size_class_churn") ? CHURN_SEGMENTS : DEFAULT_SEGMENTS;
        List<Integer> reps = replicaCounts != null ? replicaCounts : DEFAULT_REPLICAS;
        List<Boolean> skews = skewed == null ? List.of(false, true) : List.of(skewed);
        List<Case> cases = new ArrayList<>();
        if (workload.equals("size_class_churn")) {
            List<String> patterns = sizeClassPattern.equals("all") ? List.of("kv_mixed", "dsa_pair")
                    : List.of(sizeClassPattern);
            for (String p : patterns) {
                addCases(cases, segs, reps, skews, p, 0);
            }
        } else {
            for (long size : SIZES) {
                addCases(cases, segs, reps, skews, AllocBenchRun.sizeLabel(size), size);
            }
        }
        return cases;
    }

    private static void addCases(List<Case> cases, List<Integer> segs, List<Integer> reps, List<Boolean> skews,
            String pattern, long size) {
        for (int s : segs) {
            for (int r : reps) {
                if (r > s) {
                    continue;
                }
                for (boolean k : skews) {
                    cases.add(new Case(s, r, k, pattern, size));
                }
            }
        }
    }

    private CaseResult run(String name, AllocationStrategy strategy, Case c) {
        AllocBenchRun run = new AllocBenchRun(strategy, name, c.segments(), c.replicas(),
                segmentCapacityMb * AllocBenchRun.MiB, c.skewed());
        return switch (workload) {
            case "size_class_churn" -> run.sizeClassChurn(c.pattern(), numAllocations, prefillPct, evictRatio);
            case "scaleout" -> run.scaleout(c.size());
            default -> run.fillup(c.size(), numAllocations, prefillPct);
        };
    }

    /** Runs the first case unmeasured per strategy until the JIT has had {@link #WARMUP_NANOS}. */
    private void warmUp(Map<String, AllocationStrategy> strategies, Case first) {
        for (Map.Entry<String, AllocationStrategy> s : strategies.entrySet()) {
            long start = System.nanoTime();
            for (int i = 0; i < 3 || System.nanoTime() - start < WARMUP_NANOS; i++) {
                run(s.getKey(), s.getValue(), first);
                if (i >= 50) {
                    break;
                }
            }
        }
    }

    private static ProgressBar progressBar(int steps) {
        java.io.Console console = System.console();
        if (console == null || !console.isTerminal()) {
            return null;
        }
        return new ProgressBarBuilder().setTaskName("bench alloc").setInitialMax(steps).build();
    }

    private void validate() {
        CommandLine cl = spec.commandLine();
        if (!List.of("fillup", "scaleout", "size_class_churn").contains(workload)) {
            throw new ParameterException(cl, "--workload = " + workload
                    + " (expected: fillup, scaleout or size_class_churn)");
        }
        if (segmentCapacityMb <= 0) {
            throw new ParameterException(cl, "--segment-capacity = " + segmentCapacityMb + " (expected: > 0 MB)");
        }
        if (numAllocations <= 0) {
            throw new ParameterException(cl, "--num-allocations = " + numAllocations + " (expected: > 0)");
        }
        if (prefillPct < 0 || prefillPct > 100) {
            throw new ParameterException(cl, "--prefill-pct = " + prefillPct + " (expected: 0 to 100)");
        }
        if (!List.of("kv_mixed", "dsa_pair", "all").contains(sizeClassPattern)) {
            throw new ParameterException(cl, "--size-class-pattern = " + sizeClassPattern
                    + " (expected: kv_mixed, dsa_pair or all)");
        }
        if (!(evictRatio > 0 && evictRatio <= 1)) {
            throw new ParameterException(cl, "--size-class-evict-ratio = " + evictRatio + " (expected: in (0, 1])");
        }
        if (segmentCounts != null && segmentCounts.stream().anyMatch(n -> n == null || n <= 0)) {
            throw new ParameterException(cl, "--segments = " + segmentCounts + " (expected: positive counts)");
        }
        if (replicaCounts != null && replicaCounts.stream().anyMatch(n -> n == null || n <= 0)) {
            throw new ParameterException(cl, "--replicas = " + replicaCounts + " (expected: positive counts)");
        }
    }

    // ------------------------------------------------------------------------------ output

    private String header() {
        return switch (workload) {
            case "size_class_churn" -> String.format(Locale.ROOT,
                    "%-18s %7s %8s %-9s %11s %6s %12s %9s %9s %9s %9s %8s %8s %8s %8s %13s %8s %24s %9s",
                    "Strategy", "Replica", "Segments", "Pattern", "Cluster(GB)", "Skewed", "Throughput", "Avg(ns)",
                    "P50(ns)", "P90(ns)", "P99(ns)", "Frag_avg", "Frag_p50", "Frag_p90", "Frag_p99", "LargestFreeMB",
                    "AvgUtil%", "Full/Partial/Fail/Total", "Evictions");
            case "scaleout" -> String.format(Locale.ROOT,
                    "%-18s %7s %8s %-8s %11s %6s %12s %9s %9s %9s %9s %9s %10s %10s", "Strategy", "Replica",
                    "Segments", "Size", "Cluster(GB)", "Skewed", "Throughput", "Avg(ns)", "P50(ns)", "P90(ns)",
                    "P99(ns)", "ConvUtil%", "FinalUtil%", "Converge@");
            default -> String.format(Locale.ROOT,
                    "%-18s %7s %8s %-8s %11s %6s %12s %9s %9s %9s %9s %10s %8s %14s %9s", "Strategy", "Replica",
                    "Segments", "Size", "Cluster(GB)", "Skewed", "Throughput", "Avg(ns)", "P50(ns)", "P90(ns)",
                    "P99(ns)", "UtilStdDev", "AvgUtil%", "Succ/Total", "Evictions");
        };
    }

    private String row(CaseResult r) {
        double gb = r.clusterBytes / (double) (1L << 30);
        return switch (workload) {
            case "size_class_churn" -> String.format(Locale.ROOT,
                    "%-18s %7d %8d %-9s %11.2f %6s %12.0f %9.0f %9d %9d %9d %8.4f %8.4f %8.4f %8.4f %13.2f %8.2f %24s %9d",
                    r.strategy, r.replicas, r.segments, r.pattern, gb, r.skewed ? "yes" : "no", r.throughput, r.avgNs,
                    r.p50Ns, r.p90Ns, r.p99Ns, r.fragAvg, r.fragP50, r.fragP90, r.fragP99, r.largestFreeMb,
                    r.avgUtilPct, r.full + "/" + r.partial + "/" + r.failed + "/" + r.total, r.evictions);
            case "scaleout" -> String.format(Locale.ROOT,
                    "%-18s %7d %8d %-8s %11.2f %6s %12.0f %9.0f %9d %9d %9d %9.2f %10.2f %10s", r.strategy,
                    r.replicas, r.segments, r.pattern, gb, r.skewed ? "yes" : "no", r.throughput, r.avgNs, r.p50Ns,
                    r.p90Ns, r.p99Ns, r.convUtilPct, r.finalUtilPct, r.convergeAt < 0 ? "never" : r.convergeAt);
            default -> String.format(Locale.ROOT,
                    "%-18s %7d %8d %-8s %11.2f %6s %12.0f %9.0f %9d %9d %9d %10.4f %8.2f %14s %9d", r.strategy,
                    r.replicas, r.segments, r.pattern, gb, r.skewed ? "yes" : "no", r.throughput, r.avgNs, r.p50Ns,
                    r.p90Ns, r.p99Ns, r.utilStdDev, r.avgUtilPct, r.successes() + "/" + r.total, r.evictions);
        };
    }

    /**
     * The closing lines: for size_class_churn with both baselines present, each other strategy's geometric
     * mean of {@code frag_avg / min(random, free-ratio-first)} over the cases with 10 or 100 segments, and
     * every strategy's partial and failed totals over those cases.
     */
    static List<String> summary(List<CaseResult> results) {
        Map<String, CaseResult> random = new LinkedHashMap<>();
        Map<String, CaseResult> frf = new LinkedHashMap<>();
        Map<String, List<CaseResult>> byStrategy = new LinkedHashMap<>();
        for (CaseResult r : results) {
            if (r.segments != 10 && r.segments != 100) {
                continue;
            }
            byStrategy.computeIfAbsent(r.strategy, k -> new ArrayList<>()).add(r);
            if (r.strategy.equals("random")) {
                random.put(r.caseKey(), r);
            } else if (r.strategy.equals("free-ratio-first")) {
                frf.put(r.caseKey(), r);
            }
        }
        List<String> lines = new ArrayList<>();
        if (random.isEmpty() || frf.isEmpty()) {
            return lines;
        }
        lines.add("Summary over the cases with 10 or 100 segments (ratio = frag_avg / min(frag_avg of random, "
                + "free-ratio-first); geometric mean over cases):");
        for (Map.Entry<String, List<CaseResult>> e : byStrategy.entrySet()) {
            double logSum = 0;
            int n = 0;
            long partial = 0;
            long failed = 0;
            for (CaseResult r : e.getValue()) {
                partial += r.partial;
                failed += r.failed;
                CaseResult a = random.get(r.caseKey());
                CaseResult b = frf.get(r.caseKey());
                if (a == null || b == null) {
                    continue;
                }
                double baseline = Math.min(a.fragAvg, b.fragAvg);
                // A case where a baseline has no fragmentation at all cannot be improved on: ratio 1.
                double ratio = baseline <= 0 ? (r.fragAvg <= 0 ? 1.0 : Double.POSITIVE_INFINITY) : r.fragAvg / baseline;
                logSum += Math.log(ratio);
                n++;
            }
            lines.add(String.format(Locale.ROOT, "  %-18s geomean_frag_ratio=%.4f over %d cases, partial=%d, "
                    + "failed=%d, partial+failed=%d", e.getKey(), n == 0 ? Double.NaN : Math.exp(logSum / n), n,
                    partial, failed, partial + failed));
        }
        return lines;
    }

    static final String CSV_HEADER = "strategy,replicas,segments,pattern,skewed,throughput,avg_ns,p50_ns,p90_ns,"
            + "p99_ns,frag_avg,frag_p50,frag_p90,frag_p99,largest_free_mb,avg_util_pct,full,partial,failed,total,"
            + "evictions";

    static void writeCsv(Path file, List<CaseResult> results) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(CSV_HEADER);
            w.write('\n');
            for (CaseResult r : results) {
                w.write(String.format(Locale.ROOT, "%s,%d,%d,%s,%s,%.0f,%.1f,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.3f,%.3f,"
                        + "%d,%d,%d,%d,%d%n", r.strategy, r.replicas, r.segments, r.pattern, r.skewed, r.throughput,
                        r.avgNs, r.p50Ns, r.p90Ns, r.p99Ns, r.fragAvg, r.fragP50, r.fragP90, r.fragP99,
                        r.largestFreeMb, r.avgUtilPct, r.full, r.partial, r.failed, r.total, r.evictions));
            }
        }
    }
}
