package io.tiffin.bench;

import io.tiffin.bench.BenchMasterCommand.Measured;
import io.tiffin.bench.BenchMasterCommand.Operation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code tiffin bench master --mooncake DIR}: Mooncake's C++ master and Tiffin's, side by side on this machine.
 * For each operation and each of {@code --pairs} pairs it runs Mooncake's {@code DIR/run-master-bench} (its
 * {@code mooncake_master} and {@code master_bench} with the bench's clients, threads, keys, batch, value size and
 * duration) and a fresh {@code tiffin master} started through the launcher with its defaults (or {@code java -cp}
 * outside a distribution) measured by this bench, alternating which goes first. Prints every run, the medians and
 * their ratio per operation.
 *
 * <p>Not thread-safe: one instance runs one comparison.
 */
final class MasterSideBySide {
    private static final Pattern RATE = Pattern.compile("Operations per second:\\s*([0-9.]+)");

    private final BenchMasterCommand bench;
    private final Path mooncakeDir;

    MasterSideBySide(BenchMasterCommand bench, Path mooncakeDir) {
        this.bench = bench;
        this.mooncakeDir = mooncakeDir;
    }

    /** Runs every pair; returns the exit code (1 if a Tiffin run had failed keys). */
    int run() {
        boolean one = bench.spec.commandLine().getParseResult().hasMatchedOption("--operation");
        List<Operation> ops = one ? List.of(bench.operation) : List.of(Operation.values());
        Map<Operation, double[]> moon = new EnumMap<>(Operation.class);
        Map<Operation, double[]> tiffin = new EnumMap<>(Operation.class);
        List<String> rows = new ArrayList<>();
        boolean failed = false;
        Path dir = tempDir();
        for (Operation op : ops) {
            double[] m = new double[bench.pairs];
            double[] t = new double[bench.pairs];
            for (int p = 0; p < bench.pairs; p++) {
                boolean mooncakeFirst = p % 2 == 0;
                for (int side = 0; side < 2; side++) {
                    if ((side == 0) == mooncakeFirst) {
                        m[p] = mooncake(op);
                        System.out.printf("Mooncake %s pair %d: %,.0f/s%n", op, p + 1, m[p]);
                        rows.add(op + "," + bench.numClients * bench.numThreads + ","
                                + (op == Operation.BatchPut || op == Operation.BatchGet ? bench.batchSize : 1) + ","
                                + bench.duration + "," + Math.round(m[p]) + ",0,-1,-1,mooncake");
                    } else {
                        Measured r = tiffin(op, dir);
                        t[p] = r.opsPerSec();
                        failed |= r.failures() > 0;
                        System.out.printf("Tiffin %s pair %d: %,.0f/s%n", op, p + 1, t[p]);
                        rows.add(bench.csvRow(r, "tiffin"));
                    }
                }
            }
            moon.put(op, m);
            tiffin.put(op, t);
        }
        System.out.println();
        System.out.println("| operation | Mooncake C++ (runs) | median | Tiffin (runs) | median | Tiffin / Mooncake |");
        System.out.println("|---|---|---|---|---|---|");
        for (Operation op : ops) {
            double mm = median(moon.get(op));
            double tm = median(tiffin.get(op));
            System.out.printf("| %s | %s | %,.0f | %s | %,.0f | %sx |%n", op, runs(moon.get(op)), mm,
                    runs(tiffin.get(op)), tm, BenchSupport.fmt(tm / mm, 2));
        }
        BenchSupport.writeCsv(bench.csv, BenchMasterCommand.CSV_HEADER, rows);
        return failed ? 1 : 0;
    }

    /** One Mooncake run: its rate, from master_bench's "Operations per second: X". */
    private double mooncake(Operation op) {
        List<String> command = List.of(mooncakeDir.resolve("run-master-bench").toString(), op.name(),
                "--duration=" + bench.duration, "--num_clients=" + bench.numClients,
                "--num_threads=" + bench.numThreads, "--num_keys=" + bench.numKeys,
                "--batch_size=" + bench.batchSize, "--value_size=" + bench.valueSize);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(bench.duration + 120L, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not end");
            }
            return rate(out).orElseThrow(() -> new IllegalStateException(String.join(" ", command)
                    + " printed no \"Operations per second\" (exit " + p.exitValue() + "):\n" + out));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** The rate in master_bench's output, if it printed one. */
    static java.util.OptionalDouble rate(String output) {
        Matcher m = RATE.matcher(output);
        double last = -1;
        while (m.find()) {
            last = Double.parseDouble(m.group(1));
        }
        return last < 0 ? java.util.OptionalDouble.empty() : java.util.OptionalDouble.of(last);
    }

    /** One Tiffin run against a fresh {@code tiffin master} with the launcher's defaults. */
    private Measured tiffin(Operation op, Path dir) {
        int port = FailoverCluster.freePort();
        try (TiffinProcess master = TiffinProcess.start("master-" + op, dir, List.of("master", "--host", "127.0.0.1",
                "--port", Integer.toString(port), "--admin-port", "0"), List.of())) {
            master.awaitLine("Tiffin master listening", Duration.ofSeconds(120));
            return bench.measure(op, "127.0.0.1:" + port, master.pid(), false);
        }
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("tiffin-bench-master-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory", e);
        }
    }

    static double median(double[] values) {
        double[] s = values.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String runs(double[] values) {
        StringBuilder sb = new StringBuilder();
        for (double v : values) {
            sb.append(sb.isEmpty() ? "" : " / ").append(String.format(java.util.Locale.ROOT, "%,.0f", v));
        }
        return sb.toString();
    }
}
