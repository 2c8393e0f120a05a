package io.tiffin.bench;

import io.tiffin.api.spi.hotcache.PolicySimulator;
import io.tiffin.core.plugin.ExtensionPoint;
import io.tiffin.core.plugin.PluginRegistry;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin bench cache-sim}: replays the {@code hash_ids} of a Mooncake-format trace through every
 * installed hot-cache policy (one block per id) at cache sizes given as a share of the trace's distinct
 * blocks, plus Belady's optimal policy ({@code optimal}) as the upper bound; prints the hit ratios,
 * and optionally writes them as CSV ({@code policy,capacity_pct,capacity_blocks,hit_ratio}) and as a
 * PNG plot.
 *
 * <p>Not thread-safe: one run per instance.
 */
@Command(name = "cache-sim", mixinStandardHelpOptions = true,
        description = "Replays a Mooncake trace through every hot-cache policy and Belady's optimal.")
public final class BenchCacheSimCommand implements Callable<Integer> {
    /** Where picocli's usage errors go: the command line that runs this command (its err stream, its usage). */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** The name of Belady's optimal policy in the output. */
    public static final String OPTIMAL = "optimal";

    @Option(names = "--trace", required = true, description = "A Mooncake-format trace (JSON lines with hash_ids);"
            + " with --generate, the file the generated trace is written to first.")
    Path trace;

    @Option(names = "--generate", paramLabel = "conversation|tool-agent|frequency",
            description = "First write a synthetic trace of this kind to --trace (overwriting it): multi-turn"
                    + " conversations whose prompts extend earlier prompts, tool-using agent loops, or a Zipf-popular"
                    + " prefix set under one-time blocks.")
    String generate;

    @Option(names = "--requests", defaultValue = "12000",
            description = "Requests of a generated trace (default ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--seed", defaultValue = "1", description = "Seed of a generated trace (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--sizes", split = ",", defaultValue = "1,5,10,25",
            description = "Cache sizes in %% of the distinct blocks (default ${DEFAULT-VALUE}).")
    List<Double> sizes;

    @Option(names = "--policies", split = ",",
            description = "Policies to run (default: every installed one), each a name with optional settings:"
                    + " s3-fifo:small-share=0.2 runs s3-fifo with hotcache.policy.s3-fifo.small-share=0.2; a policy"
                    + " may be listed several times with different settings.")
    List<String> policies;

    @Option(names = "--csv", description = "Also write the results as CSV to this file.")
    Path csv;

    @Option(names = "--plot", description = "Also write a PNG plot of hit ratio against size to this file.")
    Path plot;

    private final PrintStream out;

    public BenchCacheSimCommand() {
        this(System.out);
    }

    BenchCacheSimCommand(PrintStream out) {
        this.out = out;
    }

    /**
     * One simulated point.
     *
     * @param policy the policy name ({@code optimal} for Belady's)
     * @param capacityPct the size as a share of the distinct blocks, in %
     * @param capacityBlocks the size in blocks
     * @param hitRatio hits over reads, 0 to 1
     */
    public record Row(String policy, double capacityPct, long capacityBlocks, double hitRatio) {
    }

    /**
     * Runs {@code runs} and the optimal policy over {@code trace} at each size in {@code sizesPct}.
     *
     * @throws IllegalArgumentException from a policy that refuses its settings
     */
    public static List<Row> simulate(MooncakeTrace trace, List<BenchSupport.PolicySpec> runs, List<Double> sizesPct) {
        long[] blocks = trace.blocks();
        List<Row> rows = new ArrayList<>();
        for (BenchSupport.PolicySpec run : runs) {
            for (double pct : sizesPct) {
                long capacity = capacity(trace, pct);
                PolicySimulator.Result result = PolicySimulator.replay(run.factory().create(capacity, run.context()),
                        blocks, null);
                rows.add(new Row(run.label(), pct, capacity, result.hitRatio()));
            }
        }
        for (double pct : sizesPct) {
            long capacity = capacity(trace, pct);
            double ratio = blocks.length == 0 ? 0 : (double) BeladyOptimal.hits(blocks, capacity) / blocks.length;
            rows.add(new Row(OPTIMAL, pct, capacity, ratio));
        }
        return rows;
    }

    static long capacity(MooncakeTrace trace, double pct) {
        return Math.max(1, Math.round(trace.distinctBlocks() * pct / 100));
    }

    @Override
    public Integer call() {
        for (double pct : sizes) {
            if (!(pct > 0 && pct <= 100)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--sizes contains " + pct + " (expected: a share of the distinct blocks in %, > 0 and <= 100)");
            }
        }
        if (generate != null) {
            if (!SyntheticTraces.KINDS.contains(generate)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--generate " + generate
                        + " (expected one of " + String.join(", ", SyntheticTraces.KINDS) + ")");
            }
            if (requests < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--requests = " + requests + " (expected: >= 1)");
            }
            try (java.io.Writer writer = Files.newBufferedWriter(trace, StandardCharsets.UTF_8)) {
                SyntheticTraces.generate(generate, requests, seed, writer);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + trace + ": " + e.getMessage(), e);
            }
            out.println(SyntheticTraces.describe(generate, requests, seed) + " -> " + trace);
        }
        MooncakeTrace loaded = MooncakeTrace.read(trace);
        List<BenchSupport.PolicySpec> runs = new ArrayList<>();
        try (PluginRegistry registry = BenchSupport.plugins()) {
            List<String> specs = policies == null ? registry.names(ExtensionPoint.HOT_CACHE_POLICY) : policies;
            java.util.Set<String> labels = new java.util.HashSet<>();
            for (String text : specs) {
                BenchSupport.PolicySpec run;
                try {
                    run = BenchSupport.policySpec(registry, text);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--policies " + e.getMessage());
                }
                if (!labels.add(run.label())) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--policies lists " + run.label()
                            + " twice (expected: each policy, or each policy with given settings, once)");
                }
                runs.add(run);
            }
            out.printf(Locale.ROOT, "trace %s: %d requests, %d block reads, %d distinct blocks%n", trace,
                    loaded.requests(), loaded.length(), loaded.distinctBlocks());
            List<Row> rows;
            try {
                rows = simulate(loaded, runs, sizes);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--policies: " + e.getMessage());
            }
            out.print(table(rows, sizes));
            if (csv != null) {
                writeCsv(rows, csv);
                out.println("wrote " + csv);
            }
            if (plot != null) {
                HitRatioPlot.write(rows, "Hit ratio on " + trace.getFileName(), plot);
                out.println("wrote " + plot);
            }
        }
        return 0;
    }

    /** The results as a text table: one row per policy, one column per size, hit ratios in %. */
    static String table(List<Row> rows, List<Double> sizesPct) {
        int width = Math.max(18, rows.stream().mapToInt(r -> r.policy().length() + 2).max().orElse(0));
        String label = "%-" + width + "s";
        StringBuilder text = new StringBuilder(String.format(Locale.ROOT, label, "policy"));
        for (double pct : sizesPct) {
            text.append(String.format(Locale.ROOT, "%10s", trimmed(pct) + "%"));
        }
        text.append('\n');
        String current = null;
        for (Row row : rows) {
            if (!row.policy().equals(current)) {
                if (current != null) {
                    text.append('\n');
                }
                current = row.policy();
                text.append(String.format(Locale.ROOT, label, current));
            }
            text.append(String.format(Locale.ROOT, "%9.2f%%", 100 * row.hitRatio()));
        }
        return text.append('\n').toString();
    }

    /** Writes {@code rows} as CSV with the header {@code policy,capacity_pct,capacity_blocks,hit_ratio}. */
    static void writeCsv(List<Row> rows, Path file) {
        StringBuilder text = new StringBuilder("policy,capacity_pct,capacity_blocks,hit_ratio\n");
        for (Row row : rows) {
            text.append(row.policy()).append(',').append(trimmed(row.capacityPct())).append(',')
                    .append(row.capacityBlocks()).append(',')
                    .append(String.format(Locale.ROOT, "%.6f", row.hitRatio())).append('\n');
        }
        try {
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    static String trimmed(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new BenchCacheSimCommand()).execute(args));
    }
}
