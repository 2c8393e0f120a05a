package io.tiffin.core.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

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
                "--shared-memory-dir", tempDir.toString(), "--location-cache-ttl", "5s", "--operations", "put,get,batch_get,batch_put", "--csv", csv.toString());
        assertThat(code).isZero();
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst()).isEqualTo("target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us");
        List<String> rows = lines.subList(1, lines.size());
        assertThat(rows).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1))).containsExactly(
                "tiffin-remote,put", "tiffin-remote,batch_put", "tiffin-remote,get", "tiffin-data-plane,get",
                "tiffin-remote,batch_get", "tiffin-cached,get", "tiffin-cached,batch_get",
                "tiffin-shm,put", "tiffin-shm,batch_put", "tiffin-shm,get", "tiffin-shm,batch_get",
                "tiffin-shm-cached,get", "tiffin-shm-cached,batch_get", "socket,put", "socket,get",
                "socket-spread,get", "socket-prefixed,get", "memcpy,get", "tiffin-local,put", "tiffin-local,batch_put",
                "tiffin-local,get", "tiffin-local,batch_get");
        for (String row : rows) {
            String[] f = row.split(",");
            assertThat(f[2]).isEqualTo("4096");
            assertThat(Double.parseDouble(f[4])).as(row).isPositive();
        }
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
    }
}
