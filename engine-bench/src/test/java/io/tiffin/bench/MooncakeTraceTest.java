package io.tiffin.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import org.junit.jupiter.api.Test;

class MooncakeTraceTest {

    private static MooncakeTrace parse(String text) {
        return MooncakeTrace.read(new StringReader(text), "t.jsonl");
    }

    @Test
    void readsHashIdsOfEveryLineInOrderAndSkipsOtherFields() {
        MooncakeTrace trace = parse("""
                {"timestamp": 0, "input_length": 1000, "output_length": 6, "hash_ids": [0, 1, 2]}

                {"hash_ids":[0,1,3],"timestamp":40,"extra":{"a":[1,{"b":"x\\"]}"}],"c":null,"d":true,"e":-1.5e3}}
                {"timestamp": 41, "hash_ids": []}
                """);
        assertThat(trace.blocks()).containsExactly(0, 1, 2, 0, 1, 3);
        assertThat(trace.requests()).isEqualTo(3);
        assertThat(trace.distinctBlocks()).isEqualTo(4);
        assertThat(trace.length()).isEqualTo(6);
    }

    @Test
    void readsTheSharedTrace() {
        java.nio.file.Path shared = java.nio.file.Path.of("/work/shared/traces/synthetic_trace.jsonl");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.exists(shared));
        MooncakeTrace trace = MooncakeTrace.read(shared);
        assertThat(trace.requests()).isEqualTo(3993);
        assertThat(trace.distinctBlocks()).isEqualTo(43924);
    }

    @Test
    void malformedLinesFailNamingTheLineAndWhatWasExpected() {
        String good = "{\"hash_ids\": [1]}\n";
        assertThatThrownBy(() -> parse(good + "{\"hash_ids\": [1, 2}\n"))
                .isInstanceOf(MooncakeTrace.TraceFormatException.class)
                .hasMessageStartingWith("t.jsonl:2:")
                .hasMessageContaining("expected ',' or ']'");
        assertThatThrownBy(() -> parse(good + good + "{\"timestamp\": 3}\n"))
                .hasMessageStartingWith("t.jsonl:3:").hasMessageContaining("no \"hash_ids\"");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [1, \"x\"]}"))
                .hasMessageStartingWith("t.jsonl:1:").hasMessageContaining("expected an integer block id");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [1.5]}")).hasMessageContaining("is not an integer");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [99999999999999999999]}"))
                .hasMessageContaining("does not fit in a long");
        assertThatThrownBy(() -> parse("[1, 2]")).hasMessageContaining("expected '{'");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [1]} trailing")).hasMessageContaining("after the object");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [1], \"hash_ids\": [2]}")).hasMessageContaining("duplicate");
        assertThatThrownBy(() -> parse("{\"note\": \"unterminated, \"hash_ids\": [1]}"))
                .hasMessageContaining("expected '}', found 'h'");
        assertThatThrownBy(() -> parse("{\"a\": tru, \"hash_ids\": [1]}")).hasMessageContaining("expected a JSON value");
        assertThatThrownBy(() -> parse("{\"hash_ids\": [1,"))
                .hasMessageContaining("found the end of the line");
        assertThat(((MooncakeTrace.TraceFormatException) org.assertj.core.api.Assertions.catchThrowable(
                () -> parse(good + good + good + "{"))).line()).isEqualTo(4);
    }
}
