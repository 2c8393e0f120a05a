package io.tiffin.bench;

import io.tiffin.core.config.Sizes;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * What {@code tiffin bench kv} prints and writes: a table row per measured case, then the ratios of
 * Tiffin's throughput to the baselines' (per round, and of the medians over the rounds when there are
 * several), and the CSV file.
 *
 * <p>Not thread-safe: the bench's main thread records and prints.
 */
final class KvReport {
    private final PrintStream out;
    private final List<KvResult> results = new ArrayList<>();
    /** The round being measured, 1 to N. */
    private int round = 1;

    KvReport(PrintStream out) {
        this.out = out;
    }

    /** From now on cases are recorded as measured in round {@code n}. */
    void round(int n) {
        round = n;
    }

    /** Every case recorded so far, in the order measured. */
    List<KvResult> results() {
        return List.copyOf(results);
    }

    /**
     * Records one case of the current round and prints its row; {@code keysPerCall} &gt; 1 marks a batch
     * (its latency is of one call).
     */
    KvResult add(String target, String operation, long size, int clients, double opsPerSec, double p50Us,
                 double p99Us, int keysPerCall) {
        KvResult r = new KvResult(target, operation, size, clients, opsPerSec, opsPerSec * size / 1e9, p50Us, p99Us,
                round);
        results.add(r);
        printRow(r, keysPerCall > 1 ? "  (" + keysPerCall + " keys per call; latency per call)" : "");
        return r;
    }

    private void printRow(KvResult r, String suffix) {
        out.printf(Locale.ROOT, "%-14s %-9s %8s  %10.0f ops/s  %7.3f GB/s  p50 %9.1f us  p99 %9.1f us%s%n",
                r.target(), r.operation(), Sizes.format(r.valueSize()), r.opsPerSec(), r.gbPerSec(), r.p50Us(),
                r.p99Us(), suffix);
    }

    /**
     * Prints the ratios (of every round and, with several rounds, of the medians and the medians' rows)
     * and appends the CSV rows to {@code csv} (none when null): one per case, plus a {@code round}
     * column and a median row per case when {@code rounds} &gt; 1.
     */
    void finish(int rounds, Path csv) {
        if (rounds == 1) {
            printRatios(results, "Ratios (throughput, same run):");
            Map<String, KvResult> byKey = byKey(results);
            BenchSupport.writeCsv(csv, KvResult.CSV_HEADER, results.stream()
                    .map(r -> r.csv() + "," + socketRatioColumn(r, byKey)).toList());
            return;
        }
        for (int n = 1; n <= rounds; n++) {
            int current = n;
            printRatios(results.stream().filter(r -> r.round() == current).toList(), "Ratios of round " + n + ":");
        }
        List<KvResult> medians = medians(results);
        out.println();
        out.println("Medians over " + rounds + " rounds:");
        for (KvResult r : medians) {
            printRow(r, "");
        }
        printRatios(medians, "Ratios of the medians over " + rounds + " rounds:");
        List<String> rows = new ArrayList<>();
        for (int n = 1; n <= rounds; n++) {
            int current = n;
            List<KvResult> ofRound = results.stream().filter(r -> r.round() == current).toList();
            Map<String, KvResult> byKey = byKey(ofRound);
            ofRound.forEach(r -> rows.add(r.csvWithRound() + "," + socketRatioColumn(r, byKey)));
        }
        Map<String, KvResult> medianByKey = byKey(medians);
        medians.forEach(r -> rows.add(r.csvWithRound() + "," + socketRatioColumn(r, medianByKey)));
        BenchSupport.writeCsv(csv, KvResult.CSV_HEADER_WITH_ROUND, rows);
    }

    private static Map<String, KvResult> byKey(List<KvResult> results) {
        Map<String, KvResult> byKey = new LinkedHashMap<>();
        for (KvResult r : results) {
            byKey.put(r.key(), r);
        }
        return byKey;
    }

    /**
     * The socket baseline a case compares with: the socket put for puts and batch puts, the socket get for
     * gets and batch gets; null when that baseline was not measured for the case's size.
     */
    static KvResult socketBaseline(KvResult r, Map<String, KvResult> byKey) {
        String op = r.operation().equals("put") || r.operation().equals("batch_put") ? "put" : "get";
        return byKey.get("socket/" + op + "/" + r.valueSize());
    }

    /** The CSV's {@code socket_ratio}: throughput over {@link #socketBaseline}'s, or empty without one. */
    private static String socketRatioColumn(KvResult r, Map<String, KvResult> byKey) {
        KvResult b = socketBaseline(r, byKey);
        return b == null || b.gbPerSec() <= 0 ? "" : BenchSupport.fmt(r.gbPerSec() / b.gbPerSec(), 3);
    }

    /**
     * Per case (target, operation, size, in the order first measured), the median of each figure over
     * {@code all}'s rounds, as round 0; for an even count the mean of the middle two.
     */
    static List<KvResult> medians(List<KvResult> all) {
        Map<String, List<KvResult>> byCase = new LinkedHashMap<>();
        for (KvResult r : all) {
            byCase.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
        }
        List<KvResult> out = new ArrayList<>();
        for (List<KvResult> runs : byCase.values()) {
            KvResult first = runs.getFirst();
            out.add(new KvResult(first.target(), first.operation(), first.valueSize(), first.clients(),
                    median(runs, KvResult::opsPerSec), median(runs, KvResult::gbPerSec),
                    median(runs, KvResult::p50Us), median(runs, KvResult::p99Us), 0));
        }
        return out;
    }

    private static double median(List<KvResult> runs, ToDoubleFunction<KvResult> figure) {
        double[] v = runs.stream().mapToDouble(figure).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /**
     * Prints {@code title} and the throughput ratios among {@code results} (cases of one round, or
     * medians): each Tiffin put and batch put (but tiffin-local's) against the socket put, each Tiffin get
     * against its baseline (socket for a remote client, memcpy for a local or
     * mapped one) and against Redis and the other baselines measured; Tiffin's batches against Redis's
     * MGET / MSET; and the socket gets against Redis, the bound for a get over TCP.
     */
    void printRatios(List<KvResult> results, String title) {
        Map<String, KvResult> byKey = new LinkedHashMap<>();
        for (KvResult r : results) {
            byKey.put(r.key(), r);
        }
        out.println();
        out.println(title);
        for (KvResult r : results) {
            if (!r.target().startsWith("tiffin")) {
                continue;
            }
            if (r.operation().equals("get")) {
                out.println(getRatios(r, byKey));
            } else if ((r.operation().equals("put") || r.operation().equals("batch_put"))
                    && !r.target().equals("tiffin-local")) {
                KvResult b = socketBaseline(r, byKey);
                out.println(String.format(Locale.ROOT, "  %-14s %-9s %8s: %.2fx socket put", r.target(), r.operation(),
                        Sizes.format(r.valueSize()), b == null ? Double.NaN : r.gbPerSec() / b.gbPerSec()));
            }
        }
        for (KvResult r : results) {
            // batches against Redis's MGET / MSET of the same keys per call
            KvResult rd = byKey.get("redis/" + r.operation() + "/" + r.valueSize());
            if (rd != null && r.target().startsWith("tiffin") && !r.target().equals("tiffin-local")
                    && (r.operation().equals("batch_get") || r.operation().equals("batch_put"))) {
                out.println(String.format(Locale.ROOT, "  %-14s %-9s %8s: %.2fx redis", r.target(),
                        r.operation(), Sizes.format(r.valueSize()), r.gbPerSec() / rd.gbPerSec()));
            }
        }
        for (KvResult r : results) {
            KvResult rd = byKey.get("redis/get/" + r.valueSize());
            if (rd == null || !r.operation().equals("get")
                    || !(r.target().equals("socket") || r.target().equals("socket-spread"))) {
                continue;
            }
            // What a get over loopback TCP can reach against Redis: the plain socket moving the same bytes.
            out.println(String.format(Locale.ROOT, "  %-14s get %8s: %.2fx redis (bound for a get over TCP)",
                    r.target(), Sizes.format(r.valueSize()), r.gbPerSec() / rd.gbPerSec()));
        }
    }

    /** The ratio line of Tiffin target {@code r}'s get: to its baseline, then to every other one measured. */
    private static String getRatios(KvResult r, Map<String, KvResult> byKey) {
        boolean mapped = r.target().equals("tiffin-shm");
        boolean remote = !r.target().equals("tiffin-local") && !mapped;
        String base = remote ? "socket" : "memcpy";
        KvResult b = byKey.get(base + "/get/" + r.valueSize());
        KvResult rd = byKey.get("redis/get/" + r.valueSize());
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %-14s get %8s: %.2fx %s",
                r.target(), Sizes.format(r.valueSize()), b == null ? Double.NaN : r.gbPerSec() / b.gbPerSec(), base));
        KvResult spreadBase = byKey.get("socket-spread/get/" + r.valueSize());
        if (spreadBase != null && remote) {
            line.append(String.format(Locale.ROOT, ", %.2fx socket-spread", r.gbPerSec() / spreadBase.gbPerSec()));
        }
        KvResult socketBase = byKey.get("socket/get/" + r.valueSize());
        if (mapped && socketBase != null) {
            line.append(String.format(Locale.ROOT, ", %.2fx socket", r.gbPerSec() / socketBase.gbPerSec()));
        }
        if (rd != null && !r.target().equals("tiffin-local")) {
            line.append(String.format(Locale.ROOT, ", %.2fx redis", r.gbPerSec() / rd.gbPerSec()));
        }
        KvResult uncached = byKey.get("tiffin-uncached/get/" + r.valueSize());
        if (uncached != null && r.target().equals("tiffin-remote")) {
            line.append(String.format(Locale.ROOT, ", %.2fx tiffin-uncached", r.gbPerSec() / uncached.gbPerSec()));
        }
        KvResult plain = byKey.get("tiffin-remote/get/" + r.valueSize());
        if (plain != null && r.target().equals("tiffin-remote-tls")) {
            line.append(String.format(Locale.ROOT, ", %.2fx tiffin-remote", r.gbPerSec() / plain.gbPerSec()));
        }
        KvResult unhinted = byKey.get("tiffin-unhinted/get/" + r.valueSize());
        if (unhinted != null && r.target().equals("tiffin-remote")) {
            line.append(String.format(Locale.ROOT, ", %.2fx tiffin-unhinted", r.gbPerSec() / unhinted.gbPerSec()));
        }
        return line.toString();
    }
}
