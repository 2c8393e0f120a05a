package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.gateway.GatewayServer;
import io.tiffin.core.gateway.GatewaySettings;
import io.tiffin.core.gateway.TiffinGatewayStore;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tiffin bench resp}: a tiny run with the real redis-benchmark against a gateway in this JVM (given by
 * {@code --port}) and a redis-server the bench starts itself, and the parts that need no process.
 */
class BenchRespCommandTest {
    private static final Path REDIS_BENCHMARK = Path.of("/usr/bin/redis-benchmark");
    private static final Path REDIS_SERVER = Path.of("/usr/bin/redis-server");

    @TempDir
    Path dir;

    @Test
    void aShortRunMeasuresBothTargetsAndWritesTheMedians() throws Exception {
        assertThat(Files.isExecutable(REDIS_BENCHMARK)).as("redis-benchmark is missing: install the Debian package"
                + " redis-tools (.ci/run does)").isTrue();
        assertThat(Files.isExecutable(REDIS_SERVER)).as("redis-server is missing: install the Debian package"
                + " redis-server (.ci/run does)").isTrue();
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "64MiB")
                // a run's GETs lease their values for this long, and a measured run waits until their memory is free
                .set("master.lease-ttl", "1s").set("client.location-cache-ttl", "500ms").build();
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (Tiffin tiffin = Tiffin.embedded(config);
             GatewayServer gateway = GatewayServer.start(TiffinGatewayStore.over(tiffin.client(), 1, "in-process"),
                     GatewaySettings.defaults("127.0.0.1", 0))) {
            Path csv = dir.resolve("resp.csv");
            StringWriter err = new StringWriter();
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            int code = new CommandLine(new BenchRespCommand()).setErr(new PrintWriter(err, true)).execute("--port",
                    Integer.toString(gateway.address().getPort()), "--redis-server", REDIS_SERVER.toString(),
                    "--redis-benchmark", REDIS_BENCHMARK.toString(), "--sizes", "4KiB", "--pipelines", "1,4",
                    "--requests", "2000", "--warmup", "3000", "--rounds", "1", "--clients", "2", "--threads", "2",
                    "--csv", csv.toString());
            System.setOut(stdout);
            assertThat(code).as(err + printed.toString(StandardCharsets.UTF_8)).isZero();
            List<String> lines = Files.readAllLines(csv);
            assertThat(lines.getFirst()).isEqualTo(BenchRespCommand.CSV_HEADER);
            assertThat(lines.subList(1, lines.size())).extracting(l -> String.join(",", List.of(l.split(",")).subList(0, 5)))
                    .containsExactlyInAnyOrder("tiffin,set,4096,1,2", "tiffin,get,4096,1,2", "tiffin,set,4096,4,2",
                            "tiffin,get,4096,4,2", "redis,set,4096,1,2", "redis,get,4096,1,2", "redis,set,4096,4,2",
                            "redis,get,4096,4,2");
            for (String row : lines.subList(1, lines.size())) {
                assertThat(Double.parseDouble(row.split(",")[5])).as(row).isPositive();
            }
            assertThat(printed.toString(StandardCharsets.UTF_8)).containsPattern("tiffin/redis GET +4KiB -P 1 : [0-9.]+x")
                    .contains("load before: ", "load after: ", "warm-up 1/2 tiffin SET", "warm-up 2/2 tiffin GET",
                            "(2 clients, 2 redis-benchmark threads)")
                    .containsPattern("\\(tiffin: [0-9]+ of [0-9]+ lookups missed").containsPattern(
                            "\\(redis: [0-9]+ of [0-9]+ lookups missed");
        } finally {
            System.setOut(stdout);
        }
    }

    @Test
    void redisBenchmarkCsvIsReadAndMediansTaken() {
        BenchRespCommand bench = new BenchRespCommand();
        bench.clients = 8;
        List<BenchRespCommand.Run> runs = bench.parse("tiffin", 4096, 16, """
                "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
                "SET","43478.26","0.116","0.016","0.055","0.463","0.735","1.927"
                "GET","51282.05","0.096","0.008","0.047","0.351","0.871","3.303"
                """);
        assertThat(runs).containsExactly(new BenchRespCommand.Run("tiffin", "set", 4096, 16, 8, 43478.26, 0.055, 0.735),
                new BenchRespCommand.Run("tiffin", "get", 4096, 16, 8, 51282.05, 0.047, 0.871));
        assertThat(BenchRespCommand.csvRow(runs.getFirst())).isEqualTo("tiffin,set,4096,16,8,43478.3,0.055,0.735");
        assertThat(BenchRespCommand.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(BenchRespCommand.median(new double[] {4, 1, 2, 3})).isEqualTo(2.5);
        List<BenchRespCommand.Run> three = List.of(runs.getFirst(), runs.getFirst().withRps(10), runs.getFirst().withRps(20));
        assertThat(BenchRespCommand.medians(three)).singleElement().extracting(BenchRespCommand.Run::rps).isEqualTo(20.0);
        assertThat(bench.requestsFor(4096)).isEqualTo(200_000);
        assertThat(bench.requestsFor(1 << 20)).isEqualTo(2048);
        assertThat(bench.keyspaceFor(1 << 20)).isEqualTo(256);
        assertThat(bench.warmupFor(4096)).as("a small value's measured run warms enough").isEqualTo(200_000);
        assertThat(bench.warmupFor(1 << 20)).as("past C2's call thresholds").isEqualTo(20_000);
        assertThat(bench.warmupFor(32 << 20)).as("at most 24 GiB, at least one run").isEqualTo(1000);
        bench.warmup = 5;
        assertThat(bench.warmupFor(1 << 20)).isEqualTo(5);
    }

    /** redis-benchmark prints a rate of "inf" for a run shorter than its clock's millisecond. */
    @Test
    void aRunTooShortToTimeIsAClearError() {
        BenchRespCommand bench = new BenchRespCommand();
        assertThatThrownBy(() -> bench.parse("redis", 4096, 4, """
                "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
                "SET","inf","0.032","0.016","0.039","0.047","0.071","0.071"
                """)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("could not time a run (requests per second 'inf'")
                .hasMessageContaining("give --requests a larger number");
    }

    /** redis-server's {@code used_memory} never reaches 0 (its own structures): the wait ends at its bound, saying so. */
    @Test
    void theWaitForAnEmptyStoreEndsAtItsBoundWithAWarning() throws Exception {
        int port;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Process redis = new ProcessBuilder(REDIS_SERVER.toString(), "--port", Integer.toString(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no").redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile()).start();
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).ignoreExceptions()
                    .until(() -> BenchRespCommand.infoField("127.0.0.1", port, "memory", "used_memory") > 0);
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            long waited = BenchRespCommand.awaitEmpty("127.0.0.1", port, 300);
            System.setOut(stdout);
            assertThat(waited).isGreaterThanOrEqualTo(300);
            assertThat(printed.toString(StandardCharsets.UTF_8)).containsPattern(
                    "\\(warning: [0-9]+ bytes still used [0-9]+ ms after FLUSHALL; the run starts anyway\\)");
        } finally {
            System.setOut(stdout);
            redis.destroy();
            redis.waitFor();
        }
    }

    @Test
    void withoutAnInstallationOrAPortItSaysWhatToPass() {
        StringWriter err = new StringWriter();
        int code = new CommandLine(new BenchRespCommand()).setErr(new PrintWriter(err, true)).execute("--no-redis");
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("pass --tiffin PATH of an unpacked distribution, or --port of a running gateway");
    }
}
