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

/** A small run of every storage benchmark test through the real bucket plugin. */
class BenchStorageCommandTest {
    @TempDir
    Path tempDir;

    @Test
    void allTestsRunAndWriteTheCsvColumns() throws Exception {
        Path csv = tempDir.resolve("out.csv");
        StringWriter text = new StringWriter();
        CommandLine cl = new CommandLine(new BenchStorageCommand()).setOut(new PrintWriter(text));
        int code = cl.execute("--test", "all", "--value-size", "8KiB", "--batch-size", "4", "--num-operations", "6",
                "--warmup-operations", "2", "--cache-mode", "direct", "--storage-path", tempDir.resolve("data").toString(),
                "--csv", csv.toString());
        assertThat(code).as(text.toString()).isZero();
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst()).isEqualTo("test,target,value_size,throughput_mb_s,ops_s,p50_ms,p99_ms");
        assertThat(lines.subList(1, lines.size())).extracting(l -> l.substring(0, l.indexOf(',', l.indexOf(',') + 1)))
                .containsExactly("offload,bucket", "load,bucket", "load,raw_direct", "concurrent_load,bucket",
                        "concurrent_load,raw_direct", "restart,bucket");
        assertThat(lines.get(2)).startsWith("load,bucket,8192,");
        assertThat(text.toString()).contains("load: bucket / raw_direct = ");
        assertThat(tempDir.resolve("data")).isEmptyDirectory();
    }

    @Test
    void badFlagValuesAreRejectedWithTheExpectedValues() {
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new BenchStorageCommand()).setErr(new PrintWriter(err));
        assertThat(cl.execute("--test", "sideways")).isEqualTo(2);
        assertThat(err.toString()).contains("--test = sideways (expected: offload, load, concurrent_load, restart or all)");
    }
}
