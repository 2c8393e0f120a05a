package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** A tiny run of {@code bench hotcache} with each read API. */
class BenchHotCacheCommandTest {
    @TempDir
    Path tempDir;

    @Test
    void everyApiMeasuresGetAndBatchGetWithTheCacheOffAndOn() throws Exception {
        for (String api : List.of("view", "into", "get", "bytes")) {
            Path csv = tempDir.resolve(api + ".csv");
            StringWriter out = new StringWriter();
            int code = new CommandLine(new BenchHotCacheCommand()).setOut(new PrintWriter(out)).execute("--keys", "4",
                    "--value-size", "1MiB", "--block-size", "512KiB", "--rounds", "3", "--batch-size", "2",
                    "--warmup-passes", "1", "--api", api, "--policy", "s3-fifo:small-share=0.3", "--csv", csv.toString());
            assertThat(code).as(out.toString()).isZero();
            List<String> lines = Files.readAllLines(csv);
            assertThat(lines.getFirst()).isEqualTo("method,cache_size_mb,value_size_mb,keys,rounds,first_round_ms,avg_round_ms,"
                    + "later_rounds_ms,later_gb_per_s,copy_gb_per_s");
            assertThat(lines.subList(1, lines.size())).extracting(l -> l.split(",")[0] + "/" + !l.split(",")[1].equals("0"))
                    .containsExactly("get/false", "get/true", "batch_get/false", "batch_get/true");
            assertThat(out.toString()).contains("ratio").contains("GB/s").contains("Reads through " + switch (api) {
                case "get", "bytes" -> "get/batchGet, each returning new byte arrays";
                case "into" -> "getInto/batchGetInto into reused off-heap buffers";
                default -> "getPinned/batchGetPinned with the cache on, getInto/batchGetInto with it off";
            });
        }
    }

    @Test
    void anUnknownApiIsRejected() {
        StringWriter err = new StringWriter();
        assertThat(new CommandLine(new BenchHotCacheCommand()).setErr(new PrintWriter(err)).execute("--api", "mmap"))
                .isEqualTo(2);
        assertThat(err.toString()).contains("--api mmap: expected into, get (bytes) or view");
    }

    @Test
    void aPolicyWithABadSettingIsRejectedNamingTheKey() {
        StringWriter err = new StringWriter();
        assertThat(new CommandLine(new BenchHotCacheCommand()).setErr(new PrintWriter(err))
                .execute("--policy", "w-tinylfu:window-share=3")).isEqualTo(2);
        assertThat(err.toString()).contains("--policy w-tinylfu:window-share=3: ")
                .contains("hotcache.policy.w-tinylfu.window-share = 3");
        StringWriter typo = new StringWriter();
        assertThat(new CommandLine(new BenchHotCacheCommand()).setErr(new PrintWriter(typo))
                .execute("--policy", "s3-fifo:small=0.2")).isEqualTo(2);
        assertThat(typo.toString()).contains("unknown key hotcache.policy.s3-fifo.small");
    }
}
