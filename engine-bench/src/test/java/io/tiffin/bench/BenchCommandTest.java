package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.cli.TiffinCli;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code tiffin bench} is added to the engine's command line by this jar (ServiceLoader, BenchCliExtension). */
class BenchCommandTest {
    private record Result(int exit, String out, String err) {
    }

    private static Result tiffin(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TiffinCli.run(InputStream.nullInputStream(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void tiffinHelpListsBenchWhenTheBenchJarIsOnTheClassPath() {
        Result help = tiffin("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("bench", "standalone", "put");
    }

    @Test
    void benchWithoutABenchmarkIsAUsageErrorNamingEveryBenchmark() {
        Result r = tiffin("bench");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("missing benchmark")
                .contains("alloc", "master", "prefix", "kv", "storage", "promotion", "hotcache", "cache-sim", "failover");
    }

    @Test
    void eachBenchmarkAnswersHelp() {
        for (String b : new String[] {"alloc", "master", "prefix", "kv", "storage", "promotion", "hotcache",
                "cache-sim", "failover"}) {
            Result r = tiffin("bench", b, "--help");
            assertThat(r.exit()).as(b).isZero();
            assertThat(r.out()).as(b).contains("Usage: tiffin bench " + b);
        }
    }
}
