package io.tiffin.bench;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;

/**
 * Synthetic Mooncake-format traces for {@code tiffin bench cache-sim --generate}, one per workload where the
 * hot cache's policy matters. Ids are chained prefix hashes as in real traces (equal ids = the same prefix),
 * numbered densely from 0 in first-seen order; the same kind, seed and request count give the same file.
 *
 * <ul>
 *   <li>{@code conversation}: multi-turn chats. New chats arrive as a Poisson process, each opening with one of
 *   380 system prompts (3-8 blocks, mildly skewed popularity: each is read every few hundred requests, too
 *   rarely for LRU at small sizes but often enough for a frequency filter) and 8-22 blocks of user input;
 *   80% end after one turn, the others take on average 2.6 turns after an exponential think time (mean 900
 *   times the gap between new chats), each turn's prompt being the previous prompt, the answer (1-3 blocks) and new input. With
 *   12,000 requests it behaves like Mooncake's conversation trace (about 290k reads of 186k distinct blocks;
 *   LRU 6 / 20 / 29 / 35% at 1 / 5 / 10 / 25% of the distinct blocks, optimal 26 / 36%).</li>
 *   <li>{@code tool-agent}: agent loops. Each task opens with one of 6 long tool-use prompts (20-40 blocks, read
 *   by every step) and runs 17 steps on average; each step's prompt is the previous one, the model's action
 *   (1-2 blocks) and the tool's output (1-12 blocks), issued soon after the previous step (exponential wait,
 *   twice the mean gap between new tasks, so about 35 tasks interleave): recency dominates, as the context
 *   grows step by step.</li>
 *   <li>{@code frequency}: {@link TraceGenerator}'s trace, a Zipf-popular prefix set under one-time blocks and
 *   interleaved conversations.</li>
 * </ul>
 *
 * <p>Thread-safe (stateless).
 */
final class SyntheticTraces {
    /** The kinds {@code --generate} takes. */
    static final List<String> KINDS = List.of("conversation", "tool-agent", "frequency");

    private SyntheticTraces() {
    }

    /** Writes {@code requests} requests of {@code kind} with {@code seed}. */
    static void generate(String kind, int requests, long seed, Writer writer) throws IOException {
        switch (kind) {
            case "conversation" -> new Chats(seed, 380, 0.3, 3, 8, 8, 22, 1, 3, 0.8, 2.6, 900, 1.0)
                    .write(requests, writer);
            case "tool-agent" -> new Chats(seed, 6, 0.5, 20, 40, 1, 12, 1, 2, 0.0, 17, 40, 20.0)
                    .write(requests, writer);
            case "frequency" -> TraceGenerator.generate(TraceGenerator.Shape.frequency(requests), seed, writer);
            default -> throw new IllegalArgumentException("--generate " + kind + " (expected one of "
                    + String.join(", ", KINDS) + ")");
        }
    }

    /**
     * Sessions opening with a shared prompt, each turn re-reading the whole previous prompt and the answer, then
     * new input. New sessions arrive as a Poisson process; the next turn follows after an exponential wait.
     *
     * @param prompts shared opening prompts; {@code skew} their Zipf exponent, {@code promptMin..promptMax}
     *     blocks each
     * @param inputMin new input blocks per turn, at least (up to {@code inputMax})
     * @param answerMin answer blocks carried into the next turn, at least (up to {@code answerMax})
     * @param single share of sessions with one turn; the others take 2 + an exponential number more, averaging
     *     {@code meanTurns} in all
     * @param think mean wait between a session's turns, in time units (one new session per unit)
     * @param perNew mean time between new sessions, in time units
     */
    private record Chats(long seed, int prompts, double skew, int promptMin, int promptMax, int inputMin,
                         int inputMax, int answerMin, int answerMax, double single, double meanTurns, double think,
                         double perNew) {

        private record Turn(double time, long order, Session session) {
        }

        private static final class Session {
            long[] context;
            int turnsLeft;
        }

        void write(int requests, Writer writer) throws IOException {
            SplittableRandom random = new SplittableRandom(seed);
            double[] cumulative = TraceGenerator.zipf(prompts, skew);
            long[][] opening = new long[prompts][];
            long[] nextId = {0};
            PriorityQueue<Turn> due = new PriorityQueue<>((a, b) -> a.time() != b.time()
                    ? Double.compare(a.time(), b.time()) : Long.compare(a.order(), b.order()));
            double now = 0;
            long order = 0;
            for (int r = 0; r < requests; r++) {
                double arrival = now + exponential(random, perNew);
                Session s;
                if (!due.isEmpty() && due.peek().time() < arrival) {
                    Turn t = due.poll();
                    now = t.time();
                    s = t.session();
                } else {
                    now = arrival;
                    int p = TraceGenerator.pick(cumulative, random.nextDouble());
                    if (opening[p] == null) {
                        opening[p] = fresh(nextId, promptMin + random.nextInt(promptMax - promptMin + 1));
                    }
                    s = new Session();
                    s.context = opening[p];
                    s.turnsLeft = random.nextDouble() < single ? 1
                            : 2 + (int) Math.round(exponential(random, meanTurns - 2));
                }
                long[] ids = concat(s.context, fresh(nextId, inputMin + random.nextInt(inputMax - inputMin + 1)));
                TraceGenerator.writeLine(writer, (long) (now * 250), ids, 1 + random.nextInt(400));
                if (--s.turnsLeft > 0) {
                    s.context = concat(ids, fresh(nextId, answerMin + random.nextInt(answerMax - answerMin + 1)));
                    due.add(new Turn(now + exponential(random, think), order++, s));
                }
            }
        }

        /** An exponential wait of the given mean (0 for a mean of 0 or less). */
        private static double exponential(SplittableRandom random, double mean) {
            return mean <= 0 ? 0 : -Math.log(1 - random.nextDouble()) * mean;
        }

        private static long[] fresh(long[] nextId, int n) {
            long[] ids = new long[n];
            for (int i = 0; i < n; i++) {
                ids[i] = nextId[0]++;
            }
            return ids;
        }

        private static long[] concat(long[] a, long[] b) {
            long[] out = new long[a.length + b.length];
            System.arraycopy(a, 0, out, 0, a.length);
            System.arraycopy(b, 0, out, a.length, b.length);
            return out;
        }
    }

    /** A one-line description of what was written, for the command's output. */
    static String describe(String kind, int requests, long seed) {
        return String.format(Locale.ROOT, "generated a %s trace: %d requests, seed %d", kind, requests, seed);
    }
}
