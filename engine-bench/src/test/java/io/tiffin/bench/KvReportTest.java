package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link KvReport} alone: rows, medians, ratios and the CSV, from figures made up here. */
class KvReportTest {
    @TempDir
    Path tempDir;

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private final KvReport report = new KvReport(new PrintStream(printed, true, StandardCharsets.UTF_8));

    private String printed() {
        return printed.toString(StandardCharsets.UTF_8);
    }

    @Test
    void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        List<KvResult> runs = List.of(
                new KvResult("socket", "get", 4096, 2, 10, 1.0, 5, 50, 1),
                new KvResult("socket", "get", 4096, 2, 40, 4.0, 2, 20, 2),
                new KvResult("socket", "get", 4096, 2, 20, 2.0, 3, 30, 3),
                new KvResult("socket", "get", 4096, 2, 30, 3.0, 4, 40, 4),
                new KvResult("memcpy", "get", 4096, 2, 7, 0.7, 1, 1, 1));
        assertThat(KvReport.medians(runs)).containsExactly(
                new KvResult("socket", "get", 4096, 2, 25, 2.5, 3.5, 35, 0),
                new KvResult("memcpy", "get", 4096, 2, 7, 0.7, 1, 1, 0));
    }

    @Test
    void aRowIsPrintedAndRecordedWithItsRoundAndThroughputInBytes() {
        report.round(2);
        KvResult r = report.add("tiffin-remote", "batch_get", 1 << 20, 4, 1000, 12.5, 99.25, 16);
        assertThat(r).isEqualTo(new KvResult("tiffin-remote", "batch_get", 1 << 20, 4, 1000, 1000 * (1 << 20) / 1e9,
                12.5, 99.25, 2));
        assertThat(report.results()).containsExactly(r);
        assertThat(printed()).isEqualTo(String.format("tiffin-remote  batch_get     1MiB        1000 ops/s    1.049 GB/s"
                + "  p50      12.5 us  p99      99.3 us  (16 keys per call; latency per call)%n"));
    }

    @Test
    void oneRoundWritesTheEightColumnsAndTheRatiosToEachBaseline() throws Exception {
        report.add("tiffin-remote", "get", 4096, 2, 3000, 10, 20, 1);
        report.add("tiffin-remote", "batch_get", 4096, 2, 8000, 10, 20, 4);
        report.add("tiffin-uncached", "get", 4096, 2, 1500, 10, 20, 1);
        report.add("tiffin-shm", "get", 4096, 2, 6000, 10, 20, 1);
        report.add("socket", "get", 4096, 2, 2000, 10, 20, 1);
        report.add("memcpy", "get", 4096, 2, 12000, 1, 2, 1);
        report.add("redis", "get", 4096, 2, 1000, 10, 20, 1);
        report.add("redis", "batch_get", 4096, 2, 4000, 10, 20, 4);
        Path csv = tempDir.resolve("kv.csv");
        report.finish(1, csv);
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst())
                .isEqualTo("target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us,socket_ratio");
        assertThat(lines.get(1)).isEqualTo("tiffin-remote,get,4096,2,3000.0,0.012,10.0,20.0,1.500");
        assertThat(lines).contains("redis,batch_get,4096,2,4000.0,0.016,10.0,20.0,2.000", "memcpy,get,4096,2,12000.0,0.049,1.0,2.0,6.000");
        assertThat(lines).hasSize(9);
        assertThat(printed()).contains("Ratios (throughput, same run):")
                .contains("  tiffin-remote  get     4KiB: 1.50x socket, 3.00x redis, 2.00x tiffin-uncached")
                .contains("  tiffin-shm     get     4KiB: 0.50x memcpy, 3.00x socket, 6.00x redis")
                .contains("  tiffin-remote  batch_get     4KiB: 2.00x redis")
                .contains("  socket         get     4KiB: 2.00x redis (bound for a get over TCP)");
    }

    @Test
    void roundsAddARoundColumnAndAMedianRowPerCase() throws Exception {
        for (int round = 1; round <= 3; round++) {
            report.round(round);
            report.add("tiffin-remote", "get", 4096, 2, 1000 * round, 10, 20, 1);
            report.add("socket", "get", 4096, 2, 1000, 10, 20, 1);
        }
        Path csv = tempDir.resolve("rounds.csv");
        report.finish(3, csv);
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst())
                .isEqualTo("target,operation,value_size,clients,ops_per_sec,gb_per_sec,p50_us,p99_us,round,socket_ratio");
        assertThat(lines.subList(1, lines.size())).filteredOn(l -> l.startsWith("tiffin-remote,"))
                .extracting(l -> l.split(",")[4] + "@" + l.split(",")[8] + "=" + l.split(",")[9])
                .containsExactly("1000.0@1=1.000", "2000.0@2=2.000", "3000.0@3=3.000", "2000.0@median=2.000");
        assertThat(printed()).contains("Ratios of round 1:", "Ratios of round 3:", "Medians over 3 rounds:",
                "Ratios of the medians over 3 rounds:", "  tiffin-remote  get     4KiB: 2.00x socket");
    }

    /** Puts and batch puts are compared with the socket put, gets and batch gets with the socket get. */
    @Test
    void putsAreComparedWithTheSocketPutBesideTheGets() throws Exception {
        long mib = 1 << 20;
        report.add("tiffin-remote", "put", mib, 4, 1000, 10, 20, 1);
        report.add("tiffin-remote", "batch_put", mib, 4, 3000, 10, 20, 16);
        report.add("tiffin-remote", "get", mib, 4, 2000, 10, 20, 1);
        report.add("tiffin-local", "put", mib, 4, 9000, 10, 20, 1);
        report.add("socket", "put", mib, 4, 4000, 10, 20, 1);
        report.add("socket", "get", mib, 4, 5000, 10, 20, 1);
        report.add("tiffin-remote", "put", 4096, 4, 1000, 10, 20, 1); // no socket case of this size
        Path csv = tempDir.resolve("puts.csv");
        report.finish(1, csv);
        assertThat(printed()).contains("  tiffin-remote  put           1MiB: 0.25x socket put")
                .contains("  tiffin-remote  batch_put     1MiB: 0.75x socket put")
                .contains("  tiffin-remote  get     1MiB: 0.40x socket")
                .contains("  tiffin-remote  put           4KiB: NaNx socket put")
                .doesNotContain("tiffin-local   put           1MiB:");
        assertThat(Files.readAllLines(csv)).contains("tiffin-remote,put,1048576,4,1000.0,1.049,10.0,20.0,0.250",
                "tiffin-remote,batch_put,1048576,4,3000.0,3.146,10.0,20.0,0.750",
                "socket,put,1048576,4,4000.0,4.194,10.0,20.0,1.000", "tiffin-remote,put,4096,4,1000.0,0.004,10.0,20.0,");
    }

    @Test
    void noCsvFileIsWrittenWithoutAPath() {
        report.add("socket", "get", 4096, 2, 1000, 10, 20, 1);
        report.finish(1, null);
        assertThat(tempDir).isEmptyDirectory();
    }
}
