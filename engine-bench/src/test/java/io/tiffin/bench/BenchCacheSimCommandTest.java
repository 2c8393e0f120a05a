package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class BenchCacheSimCommandTest {

    /** A small generated trace (frequency shape, 1,500 requests, seed 1) in {@code dir}. */
    private static Path generatedTrace(Path dir) throws IOException {
        Path trace = dir.resolve("trace.jsonl");
        StringWriter text = new StringWriter();
        TraceGenerator.generate(TraceGenerator.Shape.frequency(1_500), 1, text);
        Files.writeString(trace, text.toString());
        return trace;
    }

    @Test
    void replaysEveryInstalledPolicyAndOptimalIntoTableCsvAndPlot(@TempDir Path dir) throws IOException {
        Path trace = generatedTrace(dir);
        Path csv = dir.resolve("out.csv");
        Path png = dir.resolve("out.png");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int exit = new CommandLine(new BenchCacheSimCommand(new PrintStream(printed, true, StandardCharsets.UTF_8)))
                .execute("--trace", trace.toString(), "--csv", csv.toString(), "--plot", png.toString());

        assertThat(exit).isZero();
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("lru", "w-tinylfu", "optimal", "25%");
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines.getFirst()).isEqualTo("policy,capacity_pct,capacity_blocks,hit_ratio");
        assertThat(lines).anyMatch(l -> l.startsWith("lru,1,")).anyMatch(l -> l.startsWith("optimal,25,"));
        assertThat(lines).hasSize(1 + 4 * 8);
        for (String line : lines.subList(1, lines.size())) {
            String policy = line.split(",")[0];
            double ratio = Double.parseDouble(line.split(",")[3]);
            assertThat(ratio).as(line).isBetween(0.0, 1.0);
            if (!policy.equals("optimal")) {
                String size = line.split(",")[1];
                double optimal = lines.stream().filter(l -> l.startsWith("optimal," + size + ","))
                        .mapToDouble(l -> Double.parseDouble(l.split(",")[3])).findFirst().orElseThrow();
                assertThat(ratio).as(line).isLessThanOrEqualTo(optimal);
            }
        }
        assertThat(ImageIO.read(png.toFile()).getWidth()).isPositive();
    }

    @Test
    void malformedTraceFailsWithTheLineNumber(@TempDir Path dir) throws IOException {
        Path trace = dir.resolve("bad.jsonl");
        Files.writeString(trace, "{\"hash_ids\": [1]}\n{\"hash_ids\": [1,,2]}\n");
        StringWriter err = new StringWriter();
        CommandLine command = new CommandLine(new BenchCacheSimCommand());
        command.setErr(new java.io.PrintWriter(err));
        assertThat(command.execute("--trace", trace.toString())).isNotZero();
        assertThat(err.toString()).contains("bad.jsonl:2:");
    }

    @Test
    void aPolicyRunsWithItsSettingsBesideItsDefaults(@TempDir Path dir) throws IOException {
        Path trace = generatedTrace(dir);
        Path csv = dir.resolve("out.csv");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int exit = new CommandLine(new BenchCacheSimCommand(new PrintStream(printed, true, StandardCharsets.UTF_8)))
                .execute("--trace", trace.toString(), "--csv", csv.toString(), "--sizes", "1,25",
                        "--policies", "s3-fifo,s3-fifo:small-share=0.5");

        assertThat(exit).isZero();
        List<String> table = printed.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> l.startsWith("policy") || l.startsWith("s3-fifo") || l.startsWith("optimal")).toList();
        assertThat(table).hasSize(4);
        assertThat(table).as("the columns line up under a long label").extracting(l -> l.indexOf('%'))
                .containsOnly(table.getFirst().indexOf('%'));
        List<String> lines = Files.readAllLines(csv);
        assertThat(lines).hasSize(1 + 3 * 2);
        for (String size : List.of("1", "25")) {
            String plain = lines.stream().filter(l -> l.startsWith("s3-fifo," + size + ",")).findFirst().orElseThrow();
            String half = lines.stream().filter(l -> l.startsWith("s3-fifo:small-share=0.5," + size + ","))
                    .findFirst().orElseThrow();
            assertThat(half.split(",")[2]).as("same capacity").isEqualTo(plain.split(",")[2]);
        }
        assertThat(lines.stream().filter(l -> l.startsWith("s3-fifo,")).map(l -> l.split(",")[3]).toList())
                .as("a half-size small queue changes the hit ratios")
                .isNotEqualTo(lines.stream().filter(l -> l.startsWith("s3-fifo:small-share=0.5,"))
                        .map(l -> l.split(",")[3]).toList());
    }

    @Test
    void badPolicySettingsAreUsageErrorsNamingTheKey(@TempDir Path dir) throws IOException {
        Path trace = dir.resolve("trace.jsonl");
        Files.writeString(trace, "{\"hash_ids\": [1, 2, 3]}\n");
        for (String[] c : List.of(
                new String[] {"s3-fifo:smal-share=0.2", "did you mean hotcache.policy.s3-fifo.small-share?"},
                new String[] {"s3-fifo:small-share=2", "hotcache.policy.s3-fifo.small-share = 2"},
                new String[] {"lru:size=2", "unknown key hotcache.policy.lru.size"},
                new String[] {"s3-fifo:oops", "expected: a policy name, optionally followed by :key=value"},
                new String[] {"arc", "no such hot cache policy"},
                new String[] {"lru,s3-fifo:small-share=0.2,lru", "--policies lists lru twice"})) {
            StringWriter err = new StringWriter();
            CommandLine command = new CommandLine(new BenchCacheSimCommand());
            command.setErr(new java.io.PrintWriter(err));
            assertThat(command.execute("--trace", trace.toString(), "--policies", c[0])).as(c[0]).isEqualTo(2);
            assertThat(err.toString()).as(c[0]).contains(c[1]);
        }
    }

    @Test
    void generatesEachKindOfTraceReproduciblyThenReplaysIt(@TempDir Path dir) throws IOException {
        for (String kind : List.of("conversation", "tool-agent", "frequency")) {
            Path first = dir.resolve(kind + "-1.jsonl");
            Path second = dir.resolve(kind + "-2.jsonl");
            for (Path trace : List.of(first, second)) {
                ByteArrayOutputStream printed = new ByteArrayOutputStream();
                int exit = new CommandLine(new BenchCacheSimCommand(new PrintStream(printed, true, StandardCharsets.UTF_8)))
                        .execute("--generate", kind, "--requests", "300", "--seed", "5", "--trace", trace.toString(),
                                "--policies", "lru,w-tinylfu-tuned", "--sizes", "5");
                assertThat(exit).isZero();
                assertThat(printed.toString(StandardCharsets.UTF_8)).contains("generated a " + kind + " trace: 300 requests")
                        .contains("300 requests", "w-tinylfu-tuned", "optimal");
            }
            assertThat(Files.readAllLines(first)).hasSize(300).isEqualTo(Files.readAllLines(second));
            MooncakeTrace trace = MooncakeTrace.read(first);
            assertThat(trace.distinctBlocks()).as("%s re-reads blocks", kind).isLessThan(trace.length());
        }
        // a conversation's later turn starts with its earlier prompt
        List<String> lines = Files.readAllLines(dir.resolve("conversation-1.jsonl"));
        assertThat(lines.stream().map(l -> l.substring(l.indexOf('[') + 1, l.indexOf(']')))
                .anyMatch(ids -> lines.stream().map(l -> l.substring(l.indexOf('[') + 1, l.indexOf(']')))
                        .anyMatch(other -> other.length() > ids.length() + 20 && other.startsWith(ids + ", ")))).isTrue();
    }

    @Test
    void anUnknownKindIsRejected(@TempDir Path dir) {
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new BenchCacheSimCommand()).setErr(new java.io.PrintWriter(err))
                .execute("--generate", "chess", "--trace", dir.resolve("t.jsonl").toString());
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString()).contains("--generate chess (expected one of conversation, tool-agent, frequency)");
    }
}
