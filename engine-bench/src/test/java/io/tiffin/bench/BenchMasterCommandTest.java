package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.cli.TiffinCli;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
        assertThat(rows.get(0)).isEqualTo("operation,clients,batch_size,duration_s,ops_per_sec");
        assertThat(rows).hasSize(3);
        for (String row : rows.subList(1, 3)) {
            assertThat(Long.parseLong(row.substring(row.lastIndexOf(',') + 1))).as(row).isPositive();
        }
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
}
