package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.fppt.jedismock.RedisServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import redis.clients.jedis.Jedis;

/**
 * A tiny end-to-end run of {@code bench kv}: a node process (with its event-loop count set), every Tiffin
 * target including the data-plane-only get, and the socket baselines.
 */
class BenchKvCommandTest {
    @TempDir
    Path tempDir;

    @Test
    void aShortRunWritesEveryTargetWithTheIssueColumns() throws Exception {
        Path csv = tempDir.resolve("kv.csv");
        int code = new CommandLine(new BenchKvCommand()).execute("--sizes", "4KiB", "--nodes", "1",
                "--segment-size", "64MiB", "--duration", "0.3", "--warmup", "0", "--cluster-warmup", "0.3",
                "--clients", "2", "--batch-size", "4", "--spread-baseline", "--data-plane", "--node-io-threads", "2", "--socket-prefix", "24",
                "--shared-memory-dir", tempDir.toString(), "--uncached-baseline", "--operations", "put,get,batch_get,batch_put", "--csv", csv.toString());
        assertThat(code).isZero();
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst())
                .isEqualTo("target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us,socket_ratio");
        List<String> rows = lines.subList(1, lines.size());
        assertThat(rows).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1))).containsExactly(
                "tiffin-remote,put", "tiffin-remote,batch_put", "tiffin-remote,get", "tiffin-data-plane,get",
                "tiffin-remote,batch_get", "tiffin-uncached,get", "tiffin-uncached,batch_get",
                "tiffin-shm,put", "tiffin-shm,batch_put", "tiffin-shm,get", "tiffin-shm,batch_get", "socket,put", "socket,get",
                "socket-spread,get", "socket-prefixed,get", "memcpy,get", "tiffin-local,put", "tiffin-local,batch_put",
                "tiffin-local,get", "tiffin-local,batch_get");
        for (String row : rows) {
            String[] f = row.split(",");
            assertThat(f[2]).isEqualTo("4096");
            assertThat(Double.parseDouble(f[4])).as(row).isPositive();
        }
    }

    /**
     * The Redis side against a Redis server in this JVM (jedis-mock): every operation gets its row, the
     * ratios to Redis are printed, and the bench leaves none of its keys behind.
     */
    @Test
    void theRedisSideMeasuresEveryOperationAndRemovesItsKeys() throws Exception {
        RedisServer redis = RedisServer.newRedisServer().start();
        PrintStream out = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try {
            try (Jedis j = new Jedis("127.0.0.1", redis.getBindPort())) {
                j.set("someone-elses-key", "kept");
            }
            Path csv = tempDir.resolve("redis.csv");
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            StringWriter err = new StringWriter();
            int code = new CommandLine(new BenchKvCommand()).setErr(new PrintWriter(err, true)).execute("--sizes", "4KiB", "--nodes", "1",
                    "--segment-size", "64MiB", "--duration", "0.3", "--warmup", "0", "--cluster-warmup", "0.3",
                    "--clients", "2", "--batch-size", "4", "--no-local", "--operations", "put,get,batch_get,batch_put",
                    "--redis", "127.0.0.1:" + redis.getBindPort(), "--csv", csv.toString());
            System.setOut(out);
            assertThat(code).as(err + "\n" + printed.toString(StandardCharsets.UTF_8)).isZero();
            List<String> redisRows = Files.readAllLines(csv).stream().filter(l -> l.startsWith("redis,")).toList();
            assertThat(redisRows).extracting(l -> l.split(",")[1]).containsExactly("put", "get", "batch_get", "batch_put");
            for (String row : redisRows) {
                assertThat(Double.parseDouble(row.split(",")[4])).as(row).isPositive();
            }
            assertThat(printed.toString(StandardCharsets.UTF_8))
                    .containsPattern("tiffin-remote +get +4KiB: [0-9.]+x socket, [0-9.]+x redis")
                    .containsPattern("tiffin-remote +batch_get +4KiB: [0-9.]+x redis")
                    .containsPattern("tiffin-remote +batch_put +4KiB: [0-9.]+x redis")
                    .contains("bound for a get over TCP");
            try (Jedis j = new Jedis("127.0.0.1", redis.getBindPort())) {
                assertThat(j.keys("*")).containsExactly("someone-elses-key");
            }

            // two rounds: Redis measured in each, its keys removed each time, ratios per round and of the medians
            Path roundsCsv = tempDir.resolve("redis-rounds.csv");
            printed.reset();
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            code = new CommandLine(new BenchKvCommand()).setErr(new PrintWriter(err, true)).execute("--sizes", "4KiB",
                    "--nodes", "1", "--segment-size", "64MiB", "--duration", "0.2", "--warmup", "0", "--cluster-warmup",
                    "0.2", "--clients", "2", "--no-local", "--operations", "get", "--rounds", "2",
                    "--redis", "127.0.0.1:" + redis.getBindPort(), "--csv", roundsCsv.toString());
            System.setOut(out);
            assertThat(code).as(err + "\n" + printed.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(Files.readAllLines(roundsCsv).stream().filter(l -> l.startsWith("redis,get,")).toList())
                    .extracting(l -> l.split(",")[8]).containsExactly("1", "2", "median");
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("Ratios of round 1:", "Ratios of round 2:",
                    "Ratios of the medians over 2 rounds:");
            try (Jedis j = new Jedis("127.0.0.1", redis.getBindPort())) {
                assertThat(j.keys("*")).containsExactly("someone-elses-key");
            }
        } finally {
            System.setOut(out);
            redis.stop();
        }
    }

    @Test
    void aRedisAddressWithNoServerFailsBeforeAnyCaseRuns() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new BenchKvCommand()).setErr(new PrintWriter(err, true));
        long start = System.nanoTime();
        assertThat(cli.execute("--redis", "127.0.0.1:" + port, "--sizes", "4KiB")).isEqualTo(2);
        assertThat(err.toString()).contains("--redis 127.0.0.1:" + port + ": no Redis server answers there")
                .contains("leave --redis out");
        assertThat(cli.execute("--redis", "localhost")).isEqualTo(2);
        assertThat(err.toString()).contains("--redis localhost: expected host:port");
        // refused before the cluster's node processes were started (that alone takes seconds)
        assertThat(System.nanoTime() - start).isLessThan(java.util.concurrent.TimeUnit.SECONDS.toNanos(20));
    }

    @Test
    void badFlagsAreRejected() {
        assertThat(new CommandLine(new BenchKvCommand()).execute("--clients", "0")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--cluster-warmup", "-1")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--node-io-threads", "-1")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--socket-prefix", "-1")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--location-cache-ttl", "-1s")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--location-cache-ttl", "soon")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--operations", "get,scan")).isEqualTo(2);
        assertThat(new CommandLine(new BenchKvCommand()).execute("--rounds", "0")).isEqualTo(2);
        assertThat(refusal("--replicas", "0")).contains("--replicas must be >= 1");
        assertThat(refusal("--replicas", "3", "--nodes", "2")).contains("at most --nodes (2)");
    }

    /** Sizes a run cannot hold are refused before anything starts, saying which flag to change. */
    @Test
    void sizesBeyondWhatTheSegmentsHoldAreRefusedWithTheSegmentSizeNeeded() {
        assertThat(refusal("--sizes", "0")).contains("--sizes: 0 is not between 1 byte and");
        assertThat(refusal("--sizes", "2GiB", "--segment-size", "4GiB")).contains("the socket baseline's buffers");
        assertThat(refusal("--sizes", "lots")).contains("--sizes: \"lots\" is not a size");
        assertThat(refusal("--sizes", "1MiB,128MiB", "--segment-size", "100MiB"))
                .contains("a value of 128MiB does not fit one node's segment (--segment-size 100MiB); raise"
                        + " --segment-size to at least 128MiB");
        // 32 MiB values: 8 keys + 4 threads x 5 put keys = 28 values = 896 MiB, over 2 x 256 MiB
        assertThat(refusal("--sizes", "32MiB", "--segment-size", "256MiB", "--operations", "put,get"))
                .contains("a case of 32MiB values keeps about 896MiB in the cluster")
                .contains("raise --segment-size to at least 448MiB");
        // two replicas of each: twice that
        assertThat(refusal("--sizes", "32MiB", "--segment-size", "512MiB", "--operations", "put,get",
                "--replicas", "2"))
                .contains("a case of 32MiB values keeps about 1792MiB in the cluster")
                .contains("2 replica(s) each")
                .contains("raise --segment-size to at least 896MiB");
    }

    /** {@code --replicas 2}: the Tiffin targets' puts write two replicas, on the two nodes, and read back. */
    @Test
    void putsWriteTheReplicasAsked() throws Exception {
        PrintStream stdout = System.out;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int code;
        System.setOut(new PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            code = new CommandLine(new BenchKvCommand()).execute("--sizes", "4KiB", "--nodes", "2", "--replicas", "2",
                    "--segment-size", "64MiB", "--duration", "0.2", "--warmup", "0", "--cluster-warmup", "0",
                    "--clients", "1", "--operations", "put,get", "--no-local");
        } finally {
            System.setOut(stdout);
        }
        assertThat(code).as(out.toString(java.nio.charset.StandardCharsets.UTF_8)).isZero();
        assertThat(out.toString(java.nio.charset.StandardCharsets.UTF_8)).contains("Tiffin puts write 2 replicas")
                .containsPattern("tiffin-remote +put +4KiB");
    }

    private static String refusal(String... args) {
        StringWriter err = new StringWriter();
        assertThat(new CommandLine(new BenchKvCommand()).setErr(new PrintWriter(err, true)).execute(args)).isEqualTo(2);
        return err.toString();
    }

    /** {@code --rounds 3}: every case three times, then a median row per case, with a round column. */
    @Test
    void roundsRepeatEveryCaseAndAddTheirMedians() throws Exception {
        Path csv = tempDir.resolve("rounds.csv");
        int code = new CommandLine(new BenchKvCommand()).execute("--sizes", "4KiB", "--nodes", "1",
                "--segment-size", "64MiB", "--duration", "0.2", "--warmup", "0", "--cluster-warmup", "0.2",
                "--clients", "2", "--operations", "put,get", "--no-local", "--rounds", "3", "--csv", csv.toString());
        assertThat(code).isZero();
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst())
                .isEqualTo("target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us,round,socket_ratio");
        List<String> rows = lines.subList(1, lines.size());
        List<String> cases = List.of("tiffin-remote,put", "tiffin-remote,get", "socket,put", "socket,get", "memcpy,get");
        for (String c : cases) {
            List<String[]> mine = rows.stream().filter(l -> l.startsWith(c + ",")).map(l -> l.split(",")).toList();
            assertThat(mine).as(c).extracting(f -> f[8]).containsExactly("1", "2", "3", "median");
            double[] ops = mine.subList(0, 3).stream().mapToDouble(f -> Double.parseDouble(f[4])).sorted().toArray();
            assertThat(Double.parseDouble(mine.get(3)[4])).as(c + " median of " + java.util.Arrays.toString(ops))
                    .isCloseTo(ops[1], org.assertj.core.data.Offset.offset(0.1));
        }
    }
}
