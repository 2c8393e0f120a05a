package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TraceGeneratorTest {

    private static String generate(long seed, int requests) throws IOException {
        StringWriter out = new StringWriter();
        TraceGenerator.generate(TraceGenerator.Shape.frequency(requests), seed, out);
        return out.toString();
    }

    @Test
    void sameSeedSameTraceOtherSeedOtherTrace() throws IOException {
        assertThat(generate(7, 500)).isEqualTo(generate(7, 500));
        assertThat(generate(7, 500)).isNotEqualTo(generate(8, 500));
    }

    @Test
    void writesMooncakeFormatWithChainedDenseIds() throws IOException {
        String text = generate(3, 2_000);
        MooncakeTrace trace = MooncakeTrace.read(new StringReader(text), "generated");
        assertThat(trace.requests()).isEqualTo(2_000);
        long[] blocks = trace.blocks();
        long max = 0;
        Set<Long> distinct = new HashSet<>();
        for (long block : blocks) {
            max = Math.max(max, block);
            distinct.add(block);
        }
        assertThat(max + 1).as("ids are dense from 0").isEqualTo(distinct.size());
        for (String line : text.split("\n")) {
            assertThat(line).startsWith("{\"timestamp\": ").contains("\"input_length\": ", "\"output_length\": ");
        }
    }

    @Test
    void frequencyMattersAtOnePercent() throws IOException {
        MooncakeTrace trace = MooncakeTrace.read(new StringReader(generate(42, 6_000)), "generated");
        long[] blocks = trace.blocks();
        long capacity = BenchCacheSimCommand.capacity(trace, 1);
        double optimal = (double) BeladyOptimal.hits(blocks, capacity) / blocks.length;
        assertThat(optimal).as("optimal hit ratio at 1%").isBetween(0.15, 0.35);
    }
}
