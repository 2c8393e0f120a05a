package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.Tiffin;
import io.tiffin.core.cli.TiffinCli;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tiffin bench master}, with failover on (masters and a ZooKeeper server in this JVM) and its usage errors. */
class BenchMasterCommandTest {
    @TempDir
    Path dir;

    private static int tiffin(ByteArrayOutputStream err, String... args) {
        return TiffinCli.run(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
    }

    /** As {@link #tiffin(ByteArrayOutputStream, String...)}; what the bench prints on System.out goes to out. */
    private static int tiffin(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
        PrintStream stdout = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            return tiffin(err, args);
        } finally {
            System.setOut(stdout);
        }
    }

    @Test
    void putsAndGetsRunAgainstTheLeaderOfMastersWithFailoverOn() throws Exception {
        Path csv = dir.resolve("master.csv");
        for (String op : new String[] {"Put", "Get"}) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = tiffin(err, "bench", "master", "--operation", op, "--failover", "--failover-masters", "2",
                    "--num-segments", "4", "--num-keys", "200", "--duration", "1", "--warmup", "0", "--csv",
                    csv.toString());
            assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        }
        List<String> rows = Files.readAllLines(csv);
        assertThat(rows.get(0)).isEqualTo(
                "operation,clients,batch_size,duration_s,ops_per_sec,warmup_s,bench_jit_ms,master_jit_ms,target");
        assertThat(rows).hasSize(3);
        for (String row : rows.subList(1, 3)) {
            String[] cells = row.split(",");
            assertThat(Long.parseLong(cells[4])).as(row).isPositive();
            assertThat(Long.parseLong(cells[6])).as("bench JIT ms: " + row).isNotNegative();
            assertThat(cells[7]).as("one JVM: the master's JIT time is the bench's").isEqualTo(cells[6]);
            assertThat(cells[8]).isEqualTo("tiffin");
        }
    }

    /** The multiplexed Netty client still drives the master (the comparison with the default blocking callers). */
    @Test
    void batchGetsRunThroughTheEventLoopClientToo() throws Exception {
        Path csv = dir.resolve("event-loop.csv");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = tiffin(err, "bench", "master", "--operation", "BatchGet", "--client-transport", "event-loop",
                "--num-segments", "4", "--num-keys", "300", "--batch-size", "16", "--duration", "1", "--warmup", "4",
                "--csv", csv.toString());
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        String[] cells = Files.readAllLines(csv).get(1).split(",");
        assertThat(cells[0]).isEqualTo("BatchGet");
        assertThat(cells[2]).isEqualTo("16");
        assertThat(Long.parseLong(cells[4])).isPositive();
        // the warm-up ran at least --warmup s, extended in 2 s slices while the JIT compiled, by at most as much again
        // less its last slice
        assertThat(Integer.parseInt(cells[5])).as("warmup_s").isBetween(4, 6).isEven();
    }

    /** LMCache-named keys reach the master as such: a random chunk hash between the prefix and the dtype. */
    @Test
    void keysCanBeNamedAsLMCacheNamesItsChunks() throws Exception {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0").build();
        try (MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            CompletableFuture<Integer> bench = CompletableFuture.supplyAsync(() -> tiffin(out, err, "bench", "master",
                    "--master", "127.0.0.1:" + master.address().getPort(), "--operation", "BatchPut", "--key-shape",
                    "lmcache", "--num-segments", "4", "--batch-size", "16", "--duration", "2", "--warmup", "0"));
            // the bench erases its objects when it unmounts its segments at the end: look while it puts
            Set<String> keys = Set.of();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (keys.size() < 16 && !bench.isDone() && System.nanoTime() < deadline) {
                keys = master.service().listKeys("bench-", 100).keys().keySet();
                Thread.sleep(5);
            }
            assertThat(bench.get(60, TimeUnit.SECONDS)).as(err.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("batch size: 16, keys: lmcache,");
            assertThat(keys).hasSizeGreaterThanOrEqualTo(16).allMatch(
                    k -> k.matches("bench-[0-9a-f]{8}-[a-z0-9]+-@1@0@[0-9a-f]{1,16}@bfloat16"), "LMCache's form");
        }
        SplittableRandom random = new SplittableRandom(1);
        assertThat(KeyShape.NUMBERED.key("p-", 7, random)).isEqualTo("p-7");
        assertThat(KeyShape.named("LMCache")).isEqualTo(KeyShape.LMCACHE);
        assertThat(KeyShape.LMCACHE.key("m", 0, random)).isNotEqualTo(KeyShape.LMCACHE.key("m", 0, random));
    }

    @Test
    void anUnknownKeyShapeAndLMCacheKeysBesideMooncakeAreUsageErrors() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "master", "--key-shape", "uuid")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--key-shape uuid: expected numbered or lmcache");
        Path wrapper = Files.writeString(dir.resolve("run-master-bench"), "#!/bin/sh\nexit 1\n");
        assertThat(wrapper.toFile().setExecutable(true)).isTrue();
        err.reset();
        assertThat(tiffin(err, "bench", "master", "--mooncake", dir.toString(), "--key-shape", "lmcache"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("Mooncake's master_bench names its keys itself");
    }

    @Test
    void anUnknownClientTransportIsAUsageError() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "master", "--client-transport", "netty")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--client-transport netty: expected blocking or"
                + " event-loop");
    }

    @Test
    void failoverOptionsThatDoNotGoTogetherAreUsageErrors() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "master", "--failover", "--master", "127.0.0.1:1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--failover starts masters in this JVM");
        err.reset();
        assertThat(tiffin(err, "bench", "master", "--coordinator", "zk://127.0.0.1:2181")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--coordinator needs --failover");
    }

    @Test
    void sideBySideOptionsThatDoNotFitAreUsageErrors() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(tiffin(err, "bench", "master", "--mooncake", dir.toString())).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("no executable run-master-bench there");
        err.reset();
        assertThat(tiffin(err, "bench", "master", "--mooncake", dir.toString(), "--master", "127.0.0.1:1"))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--mooncake starts both masters itself");
        err.reset();
        assertThat(tiffin(err, "bench", "master", "--pairs", "0")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--pairs must be >= 1");
        err.reset();
        assertThat(tiffin(err, "bench", "master", "--master-pid", "1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--master-pid goes with --master");
    }

    @Test
    void jitTimeOfAnotherJvmIsReadFromItsPerformanceCounters() throws Exception {
        Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), JitSpinner.class.getName()).start();
        try {
            child.getInputStream().read(); // it prints one byte once it is running
            long ms = JitClock.of(child.pid());
            assertThat(ms).as("a JVM that ran code has compiled something").isNotNegative();
            assertThat(JitClock.of(ProcessHandle.current().pid() + 1_000_000)).as("no such JVM").isEqualTo(-1);
        } finally {
            child.destroyForcibly().waitFor();
        }
        assertThat(JitClock.counter("java.ci.totalTime=123\nsun.os.hrt.frequency=1000000000\n", "java.ci.totalTime"))
                .isEqualTo(123);
        assertThat(JitClock.counter("java.ci.totalTime=x\n", "java.ci.totalTime")).isEqualTo(-1);
        assertThat(JitClock.counter("", "sun.os.hrt.frequency")).isEqualTo(-1);
    }

    @Test
    void mooncakesRateIsItsLastReportedFigureAndMediansAreMedians() {
        assertThat(MasterSideBySide.rate("warming\nOperations per second: 6723\n").orElseThrow()).isEqualTo(6723);
        assertThat(MasterSideBySide.rate("error: cannot connect\n")).isEmpty();
        assertThat(MasterSideBySide.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(MasterSideBySide.median(new double[] {4, 1, 2, 3})).isEqualTo(2.5);
    }

    @Test
    void cpuPerOperationIsEachKindsTicksOverTheOperations() {
        LinkedHashMap<String, Long> ticks = new LinkedHashMap<>();
        ticks.put("event loops", 300L); // 3 s at 100 ticks a second
        ticks.put("GC", 100L);
        assertThat(BenchMasterCommand.cpuPerOperation(ticks, 1_000_000))
                .isEqualTo("4.00 µs (event loops 3.00, GC 1.00)");
        assertThat(BenchMasterCommand.cpuPerOperation(Map.of(), 0)).as("no operations, no ticks")
                .isEqualTo("0.00 µs ()");
    }

    /** Mooncake's binaries beside the project (../shared/peers/mooncake), when this machine has them. */
    @Test
    void sideBySideRunsMooncakeAndATiffinMasterProcess() throws Exception {
        Path mooncake = Path.of(System.getProperty("tiffin.mooncake.dir", "/work/shared/peers/mooncake"));
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(mooncake.resolve("run-master-bench")),
                "Mooncake's master_bench is not on this machine");
        Path csv = dir.resolve("side.csv");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = tiffin(out, err, "bench", "master", "--mooncake", mooncake.toString(), "--operation", "Get",
                "--num-keys", "200", "--duration", "1", "--warmup", "1", "--csv", csv.toString());
        assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).as("the master process's CPU per Get, by kind of thread")
                .containsPattern("Master CPU per call in the measured window: [0-9.]+ µs \\(.*event loops [0-9.]+");
        List<String> rows = Files.readAllLines(csv);
        assertThat(rows).hasSize(3);
        assertThat(rows.get(1)).startsWith("Get,4,1,1,").endsWith(",mooncake");
        String[] tiffin = rows.get(2).split(",");
        assertThat(tiffin[8]).isEqualTo("tiffin");
        assertThat(Long.parseLong(tiffin[4])).isPositive();
        assertThat(Long.parseLong(tiffin[7])).as("the master process's JIT time").isNotNegative();
    }

    /** A JVM that says it runs and then waits. */
    public static final class JitSpinner {
        public static void main(String[] args) throws Exception {
            System.out.write('r');
            System.out.flush();
            Thread.sleep(60_000); // waits to be read and killed
        }
    }
}
