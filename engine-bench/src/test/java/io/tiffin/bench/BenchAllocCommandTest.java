package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tiffin bench alloc} on small cases: table, summary, CSV and plot. */
class BenchAllocCommandTest {
    @TempDir
    Path work;

    private record Run(int exitCode, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new BenchAllocCommand());
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void sizeClassChurnPrintsTableSummaryCsvAndPlot() throws IOException {
        Path csv = work.resolve("out/alloc.csv");
        Path png = work.resolve("out/alloc.png");
        Run r = run("--workload", "size_class_churn", "--segment-capacity", "64", "--num-allocations", "300",
                "--prefill-pct", "70", "--size-class-pattern", "all", "--segments", "10", "--replicas", "1,2",
                "--skewed=false", "--csv", csv.toString(), "--plot", png.toString());

        assertThat(r.exitCode()).as("exit code; stderr: %s", r.err()).isZero();
        assertThat(r.out()).contains("Frag_avg", "Full/Partial/Fail/Total", "Prefill summary [",
                "Fragmentation summary [", "Size-class breakdown:", "geomean_frag_ratio=",
                "Prefill summary [hole-fit r=1 s=10 kv_mixed]", "Fragmentation summary [random r=2 s=10 dsa_pair]");
        assertThat(r.out()).doesNotContain("[null ");
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst()).isEqualTo(BenchAllocCommand.CSV_HEADER);
        // 2 patterns x 2 replica counts x 4 strategies.
        assertThat(lines).hasSize(1 + 2 * 2 * 4);
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            assertThat(f).as("CSV row %s", line).hasSize(21);
            assertThat(Long.parseLong(f[16]) + Long.parseLong(f[17]) + Long.parseLong(f[18]))
                    .as("full + partial + failed in %s", line).isEqualTo(Long.parseLong(f[19]));
            assertThat(Double.parseDouble(f[10])).as("frag_avg in %s", line).isBetween(0.0, 1.0);
        }
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image).isNotNull();
        assertThat(image.getWidth()).isGreaterThan(100);
    }

    @Test
    void everyStrategySeesTheSameSizeSequence() {
        Run a = run("--workload", "size_class_churn", "--segment-capacity", "64", "--num-allocations", "200",
                "--segments", "1", "--replicas", "1", "--skewed=false", "--strategies", "random,hole-fit");
        assertThat(a.exitCode()).as("stderr: %s", a.err()).isZero();
        // With one segment and no prefill, every strategy can only choose that segment.
        List<String> breakdowns = a.out().lines().filter(l -> l.startsWith("Size-class breakdown:"))
                .map(l -> l.replaceAll("p99_ns=\\d+", "")).toList();
        assertThat(breakdowns).hasSize(2);
        assertThat(breakdowns.get(0)).isEqualTo(breakdowns.get(1));
    }

    @Test
    void fillupAndScaleoutRun() {
        Run fill = run("--workload", "fillup", "--segment-capacity", "64", "--num-allocations", "500",
                "--segments", "1,10", "--replicas", "1", "--skewed", "--strategies", "random,free-ratio-first");
        assertThat(fill.exitCode()).as("stderr: %s", fill.err()).isZero();
        assertThat(fill.out()).contains("UtilStdDev", "Succ/Total", "512KiB", "32MiB");
        Run scale = run("--workload", "scaleout", "--segment-capacity", "64", "--segments", "4", "--replicas", "1",
                "--skewed=false", "--strategies", "free-ratio-first");
        assertThat(scale.exitCode()).as("stderr: %s", scale.err()).isZero();
        assertThat(scale.out()).contains("ConvUtil%", "Scale-out summary [free-ratio-first r=1 s=4");
    }

    @Test
    void badOptionsNameTheValueAndWhatIsExpected() {
        Run r = run("--workload", "dsa");
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--workload = dsa (expected: fillup, scaleout or size_class_churn)");
        Run e = run("--size-class-evict-ratio", "0");
        assertThat(e.exitCode()).isEqualTo(2);
        assertThat(e.err()).contains("--size-class-evict-ratio = 0.0 (expected: in (0, 1])");
    }
}
