package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.cli.TiffinCli;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tiffin bench scale} against a master process of its own (java, no launcher, in tests) and its usage errors. */
class BenchScaleCommandTest {
    @TempDir
    Path dir;

    private static int tiffin(ByteArrayOutputStream err, String... args) {
        return TiffinCli.run(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
    }

    @Test
    void fillsAMasterProcessAndWritesOneSaneRowPerStage() throws Exception {
        Path csv = dir.resolve("scale.csv");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        int exit;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8)); // the bench prints its progress there
        try {
            exit = tiffin(err, "bench", "scale", "--keys", "120000", "--segments", "20", "--nodes", "20", "--csv",
                    csv.toString(), "--join-nodes", "10", "--join-rounds", "2", "--heartbeat-window", "2",
                    "--jit-settle", "10");
        } finally {
            System.setOut(stdout);
        }
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        // the joining nodes in a process of their own, at a lower priority
        assertThat(out.toString(StandardCharsets.UTF_8)).containsPattern("The 10 joining nodes run in a process of"
                + " their own at nice 10; its output: .*\\.log\n");
        // the first stage's ten warm-up rounds, dropped, printed as the timed ones
        assertThat(out.toString(StandardCharsets.UTF_8)).containsPattern("10 warm-up rounds of joins and leaves"
                + " \\(dropped\\), p99 µs per round as below: (\\d+/\\d+ \\(\\d+/\\d+/\\d+\\), ){9}\\d+/\\d+"
                + " \\(\\d+/\\d+/\\d+\\)\n");
        // per stage, each join round's p99s with the compile time of the master process, of the bench's JVM and of
        // the joining nodes' JVM
        assertThat(out.toString(StandardCharsets.UTF_8)).containsPattern("join/leave \\(JIT ms in the round, master/"
                + "bench JVM/joining nodes' JVM\\): \\d+/\\d+ \\(\\d+/\\d+/\\d+\\), \\d+/\\d+ \\(\\d+/\\d+/\\d+\\)\n");
        // then ten of the nodes holding keys leave, each unmount timed
        assertThat(out.toString(StandardCharsets.UTF_8)).containsPattern("10 nodes holding keys left one after another"
                + " at 120000 keys \\(10 unmounts of a segment with about 6000 objects\\): unmount ms p50 [0-9.]+, max"
                + " [0-9.]+, all( [0-9.]+){10}\n");
        List<String> rows = Files.readAllLines(csv);
        assertThat(rows.getFirst()).isEqualTo("keys,segments,rss_bytes,heap_live_bytes,bytes_per_key,get_p50_us,"
                + "get_p99_us,batchget_keys_per_s,heartbeat_cpu_pct,join_get_p99_us,leave_get_p99_us,"
                + "exist_p99_us,batchget_p99_us");
        assertThat(rows).hasSize(3); // stages 100000 and 120000
        long previousHeap = 0;
        for (int i = 1; i < rows.size(); i++) {
            String[] f = rows.get(i).split(",", -1);
            assertThat(f).as(rows.get(i)).hasSize(13);
            assertThat(Long.parseLong(f[0])).isEqualTo(i == 1 ? 100_000 : 120_000);
            assertThat(f[1]).isEqualTo("20");
            long rss = Long.parseLong(f[2]);
            long heap = Long.parseLong(f[3]);
            assertThat(rss).as("rss").isGreaterThan(16L << 20);
            assertThat(heap).as("live heap").isPositive().isLessThan(rss);
            // 100k keys of metadata take room: more live heap at the larger stage, and some bytes per key
            assertThat(heap).as("live heap grows with keys").isGreaterThan(previousHeap);
            previousHeap = heap;
            assertThat(Double.parseDouble(f[4])).as("bytes per key").isPositive();
            double p50 = Double.parseDouble(f[5]);
            double p99 = Double.parseDouble(f[6]);
            assertThat(p50).as("get p50").isPositive();
            assertThat(p99).as("get p99").isGreaterThanOrEqualTo(p50);
            assertThat(Long.parseLong(f[7])).as("batchget keys/s").isPositive();
            assertThat(Double.parseDouble(f[8])).as("heartbeat cpu %").isPositive().isLessThan(200.0);
            assertThat(Double.parseDouble(f[9])).as("get p99 during a join").isPositive();
            assertThat(Double.parseDouble(f[10])).as("get p99 during a leave").isPositive();
            assertThat(Double.parseDouble(f[11])).as("exist p99").isPositive();
            // a BatchGet of 128 keys does more than a Get of one: its p99 is no lower than the Get's p50
            assertThat(Double.parseDouble(f[12])).as("batchget p99").isGreaterThanOrEqualTo(p50);
        }
    }

    @Test
    void moreNodesThanSegmentsAndZeroKeysAreUsageErrors() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "scale", "--keys", "1000", "--segments", "10", "--nodes", "20")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--nodes (20) must be at most --segments (10)");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--keys", "0")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("must be >= 1");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--join-nodes", "-1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--join-nodes must be >= 0");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--join-nice", "20")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--join-nice must be from 0 to 19");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--leave-nodes", "-1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--leave-nodes must be >= 0");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--keys", "10000000", "--segments", "50", "--nodes", "50"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--segments (50) of 64 GiB cannot hold --keys"
                + " (10000000) of 4 KiB to 2 MiB (mean 568 KiB) below the eviction watermark: give at least 106");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--heartbeat-window", "0")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--heartbeat-window must be >= 1");
    }

    @Test
    void theFillMixesSixSizesFromFourKibToTwoMibEvenly() {
        Map<Long, Integer> counts = new TreeMap<>();
        for (long i = 0; i < 60_000; i++) {
            counts.merge(BenchScaleCommand.valueSize(i), 1, Integer::sum);
        }
        assertThat(counts.keySet()).containsExactly(4096L, 16384L, 65536L, 262144L, 1L << 20, 2L << 20);
        assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(9_000, 11_000));
        assertThat(BenchScaleCommand.valueSize(7)).as("the same size for a key every time")
                .isEqualTo(BenchScaleCommand.valueSize(7));
    }

    @Test
    void stagesGrowTenfoldFromAHundredThousandUpToTheKeys() {
        assertThat(BenchScaleCommand.stages(20_000)).containsExactly(20_000L);
        assertThat(BenchScaleCommand.stages(1_000_000)).containsExactly(100_000L, 1_000_000L);
        assertThat(BenchScaleCommand.stages(2_500_000)).containsExactly(100_000L, 1_000_000L, 2_500_000L);
    }

    @Test
    void liveHeapIsTheTotalOfTheClassHistogram() {
        String histogram = """
                 num     #instances         #bytes  class name (module)
                -------------------------------------------------------
                   1:         12345         987654  [B (java.base@25)
                   2:           100           3200  java.lang.String (java.base@25)
                Total         12445         990854
                """;
        assertThat(ProcessProbe.parseHistogramTotal(histogram)).isEqualTo(990854L);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ProcessProbe.parseHistogramTotal("no such line"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("no Total line");
    }

    @Test
    void theHeartbeatWindowsCpuIsSplitByKindOfThreadLargestFirst() {
        Map<String, ProcessProbe.ThreadTicks> before = Map.of(
                "10", new ProcessProbe.ThreadTicks("tiffin-master-i", 100),
                "11", new ProcessProbe.ThreadTicks("GC Thread#0", 50),
                "12", new ProcessProbe.ThreadTicks("C2 CompilerThre", 70),
                "13", new ProcessProbe.ThreadTicks("Log4j2-TF-1-Asy", 5));
        Map<String, ProcessProbe.ThreadTicks> after = Map.of(
                "10", new ProcessProbe.ThreadTicks("tiffin-master-i", 103),
                "11", new ProcessProbe.ThreadTicks("GC Thread#0", 51),
                "14", new ProcessProbe.ThreadTicks("G1 Conc#0", 4), // started in the window: counts from 0
                "12", new ProcessProbe.ThreadTicks("C2 CompilerThre", 71),
                "13", new ProcessProbe.ThreadTicks("Log4j2-TF-1-Asy", 5));

        Map<String, Long> kinds = ProcessProbe.ticksByKind(before, after);

        assertThat(kinds).containsExactly(Map.entry("GC", 5L), Map.entry("event loops", 3L), Map.entry("JIT", 1L),
                Map.entry("other", 0L));
        assertThat(ProcessProbe.kindOf("VM Thread")).isEqualTo("GC");
        assertThat(ProcessProbe.kindOf("tiffin-master-w")).as("a worker: mounts, not pings").isEqualTo("other");
    }

    @Test
    void mooncakesKeyCountIsReadFromItsMetricsPage() {
        String page = "# HELP master_key_count Total number of keys\n# TYPE master_key_count gauge\n"
                + "master_key_count 10210388\nmaster_key_count_soft_pinned 0\n";
        assertThat(MooncakeScale.keyCount(page)).hasValue(10_210_388);
        assertThat(MooncakeScale.keyCount("master_key_count 1.5e+06\n")).hasValue(1_500_000);
        assertThat(MooncakeScale.keyCount("master_key_count_soft_pinned 3\n")).isEmpty();
        assertThat(MooncakeScale.keyCount("")).isEmpty();
    }

    @Test
    void mooncakeGoesWithoutMasterAndNeedsItsBinaries() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "scale", "--keys", "1000", "--segments", "10", "--nodes", "10", "--mooncake",
                dir.toString(), "--master", "127.0.0.1:1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot be given with --master");
        err.reset();
        assertThat(tiffin(err, "bench", "scale", "--keys", "1000", "--segments", "10", "--nodes", "10", "--mooncake",
                dir.toString())).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("has no executable mooncake_master");
    }

    @Test
    void aMasterBenchThatCannotStartIsReportedWithItsOutput() throws Exception {
        // a stand-in mooncake_master that serves its metrics page, and a master_bench that fails as one without
        // its libraries does
        Path fake = Files.createDirectories(dir.resolve("fake-mooncake"));
        Path master = fake.resolve("mooncake_master");
        Files.writeString(master, """
                #!/usr/bin/python3
                import http.server, sys
                port = int([a for a in sys.argv if a.startswith("--metrics_port=")][0].split("=")[1])
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        body = b"master_key_count 0\\n"
                        self.send_response(200); self.send_header("Content-Length", str(len(body)))
                        self.end_headers(); self.wfile.write(body)
                    def log_message(self, *a): pass
                http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
                """);
        Path bench = fake.resolve("master_bench");
        Files.writeString(bench, """
                #!/bin/sh
                echo "master_bench: error while loading shared libraries: libglog.so.1: cannot open shared object file"
                exit 127
                """);
        for (Path p : List.of(master, bench)) {
            Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "scale", "--keys", "1000", "--segments", "10", "--nodes", "10", "--mooncake",
                fake.toString())).isNotZero();
        String said = err.toString(StandardCharsets.UTF_8);
        assertThat(said).contains("master_bench ended (exit 127) before it mounted")
                .contains("libglog.so.1").contains("run-master-bench installs them");
        java.util.regex.Matcher kept = java.util.regex.Pattern.compile("output stays in (\\S+)").matcher(said);
        assertThat(kept.find()).as(said).isTrue();
        Path log = Path.of(kept.group(1));
        assertThat(log).as("kept after a failure").exists();
        Files.delete(log);
    }

    private static List<Path> mooncakeLogs() throws IOException {
        try (var files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(f -> f.getFileName().toString().startsWith("mooncake-master-")).toList();
        }
    }

    /** Mooncake's binaries beside the project (../shared/peers/mooncake), when this machine has them. */
    @Test
    void mooncakesMasterIsFilledAndMeasuredPerStage() throws Exception {
        Path mooncake = Path.of(System.getProperty("tiffin.mooncake.dir", "/work/shared/peers/mooncake"));
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(mooncake.resolve("master_bench")),
                "Mooncake's master_bench is not on this machine");
        Path csv = dir.resolve("mooncake.csv");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<Path> logsBefore = mooncakeLogs();
        int exit = tiffin(err, "bench", "scale", "--keys", "150000", "--segments", "20", "--nodes", "20",
                "--mooncake", mooncake.toString(), "--csv", csv.toString());
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(mooncakeLogs()).as("its master's output is removed after a measurement")
                .containsExactlyInAnyOrderElementsOf(logsBefore);
        List<String> rows = Files.readAllLines(csv);
        assertThat(rows).hasSize(3); // stages 100000 and 150000
        for (int i = 1; i < rows.size(); i++) {
            String[] f = rows.get(i).split(",", -1);
            assertThat(f).as(rows.get(i)).hasSize(13);
            assertThat(Long.parseLong(f[0])).as("keys reached").isGreaterThanOrEqualTo(i == 1 ? 100_000 : 150_000);
            assertThat(f[1]).isEqualTo("20");
            assertThat(Long.parseLong(f[2])).as("rss").isGreaterThan(16L << 20);
            assertThat(f[3]).as("no live heap for a C++ process").isEmpty();
            assertThat(Double.parseDouble(f[4])).as("bytes per key").isPositive();
            assertThat(f[12]).isEmpty();
        }
    }
}
