package io.tiffin.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Writes synthetic Mooncake-format traces where frequency matters, shaped like Mooncake's conversation
 * trace: a popular set (shared system prompts and documents, Zipf-distributed) under many one-time
 * blocks, and multi-turn conversations whose later turns re-read the earlier context after a while
 * (recency). Ids are chained prefix hashes as in real traces: a request's ids are its popular prefix's,
 * then its conversation's earlier context, then new ids, numbered densely from 0 in first-seen order.
 *
 * <p>The same seed and parameters give the same file, byte for byte. Usage:
 * {@code TraceGenerator --out FILE [--requests N] [--seed S]}.
 *
 * <p>Not thread-safe: one generation per instance.
 */
@Command(name = "trace-gen", mixinStandardHelpOptions = true,
        description = "Writes a synthetic Mooncake-format trace where block frequency matters.")
public final class TraceGenerator implements Callable<Integer> {
    /** Where picocli's usage errors go: the command line that runs this command (its err stream, its usage). */
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--out", required = true, description = "The trace file to write.")
    Path out;

    @Option(names = "--requests", defaultValue = "12000", description = "Requests to write (default ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--seed", defaultValue = "42", description = "Random seed (default ${DEFAULT-VALUE}).")
    long seed;

    /**
     * The knobs of the generated workload.
     *
     * @param requests requests to generate
     * @param popularPrefixes shared prefixes (system prompts, documents)
     * @param zipfExponent skew of the prefixes' popularity
     * @param maxPrefixBlocks the longest shared prefix, in blocks
     * @param conversationShare probability that a request continues an active conversation
     * @param activeConversations conversations that interleave
     * @param endProbability probability a conversation ends after a turn
     * @param minNewBlocks fewest new blocks per turn
     * @param maxNewBlocks most new blocks per turn
     */
    public record Shape(int requests, int popularPrefixes, double zipfExponent, int maxPrefixBlocks,
            double conversationShare, int activeConversations, double endProbability, int minNewBlocks,
            int maxNewBlocks) {
        /** The default shape with {@code requests} requests. */
        public static Shape frequency(int requests) {
            return new Shape(requests, 200, 0.6, 16, 0.2, 3000, 0.5, 2, 60);
        }
    }

    /** Writes the trace of {@code shape} with {@code seed} to {@code writer}. */
    public static void generate(Shape shape, long seed, Writer writer) throws IOException {
        SplittableRandom random = new SplittableRandom(seed);
        double[] cumulative = zipf(shape.popularPrefixes(), shape.zipfExponent());
        long nextId = 0;
        long[][] prefixes = new long[shape.popularPrefixes()][];
        List<long[]> conversations = new ArrayList<>();
        long timestamp = 0;
        for (int r = 0; r < shape.requests(); r++) {
            long[] context;
            int conversation = -1;
            if (!conversations.isEmpty() && (conversations.size() >= shape.activeConversations()
                    || random.nextDouble() < shape.conversationShare())) {
                conversation = random.nextInt(conversations.size());
                context = conversations.get(conversation);
            } else {
                int p = pick(cumulative, random.nextDouble());
                if (prefixes[p] == null) {
                    prefixes[p] = new long[1 + random.nextInt(shape.maxPrefixBlocks())];
                    for (int i = 0; i < prefixes[p].length; i++) {
                        prefixes[p][i] = nextId++;
                    }
                }
                context = prefixes[p];
            }
            int fresh = shape.minNewBlocks() + random.nextInt(shape.maxNewBlocks() - shape.minNewBlocks() + 1);
            long[] ids = new long[context.length + fresh];
            System.arraycopy(context, 0, ids, 0, context.length);
            for (int i = context.length; i < ids.length; i++) {
                ids[i] = nextId++;
            }
            boolean ends = random.nextDouble() < shape.endProbability();
            if (conversation >= 0) {
                if (ends) {
                    conversations.set(conversation, conversations.getLast());
                    conversations.removeLast();
                } else {
                    conversations.set(conversation, ids);
                }
            } else if (!ends) {
                conversations.add(ids);
            }
            timestamp += (long) (-Math.log(1 - random.nextDouble()) * 250);
            writeLine(writer, timestamp, ids, 1 + random.nextInt(400));
        }
    }

    static void writeLine(Writer writer, long timestamp, long[] ids, int outputLength) throws IOException {
        StringBuilder line = new StringBuilder(32 + ids.length * 8);
        int inputLength = ids.length * 512 - 511 + (int) (timestamp % 511);
        line.append("{\"timestamp\": ").append(timestamp).append(", \"input_length\": ").append(inputLength)
                .append(", \"output_length\": ").append(outputLength).append(", \"hash_ids\": [");
        for (int i = 0; i < ids.length; i++) {
            if (i > 0) {
                line.append(", ");
            }
            line.append(ids[i]);
        }
        writer.write(line.append("]}\n").toString());
    }

    /** Cumulative Zipf probabilities of ranks 1..n with {@code exponent} (last = 1). */
    static double[] zipf(int n, double exponent) {
        double[] cumulative = new double[n];
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += 1 / Math.pow(i + 1, exponent);
            cumulative[i] = sum;
        }
        for (int i = 0; i < n; i++) {
            cumulative[i] /= sum;
        }
        return cumulative;
    }

    /** The rank (0-based) whose cumulative probability first reaches {@code u} (uniform in [0, 1)). */
    static int pick(double[] cumulative, double u) {
        int low = 0;
        int high = cumulative.length - 1;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (cumulative[mid] < u) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    @Override
    public Integer call() throws IOException {
        if (requests < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--requests = " + requests + " (expected: >= 1)");
        }
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            generate(Shape.frequency(requests), seed, writer);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
        System.out.printf(Locale.ROOT, "wrote %d requests to %s (seed %d)%n", requests, out, seed);
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new TraceGenerator()).execute(args));
    }
}
