package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The real redis-benchmark ({@code -t set,get}) against the gateway, with 4 KiB and 1 MiB values, without
 * and with a pipeline of 16: it must run to its end without an error reply, the values it stored must be
 * its own bytes, and with {@code -P 16} its pipelined GETs and SETs must reach the store as batch calls.
 */
class GatewayRedisBenchmarkTest {
    private static GatewayFixture fixture;
    private static RecordingStore store;

    @BeforeAll
    static void start() {
        RedisTools.require(RedisTools.REDIS_BENCHMARK, "redis-tools");
        fixture = GatewayFixture.start(Map.of("node.segment-size", "1GiB"), s -> store = new RecordingStore(s));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @BeforeEach
    void flush() {
        // the previous run's GETs hold read leases on its keys; a flush removes them at once
        assertThat(RedisTools.cli(fixture.port(), "FLUSHALL").out()).isEqualTo("OK\n");
        store.calls.clear();
    }

    @ParameterizedTest(name = "{0}-byte values, pipeline {1}")
    @CsvSource({"4096, 1, 4000", "4096, 16, 8000", "1048576, 1, 200", "1048576, 16, 400"})
    void runsToItsEndWithoutErrors(int size, int pipeline, int requests) {
        RedisTools.Result r = RedisTools.run(List.of(RedisTools.REDIS_BENCHMARK.toString(), "-p",
                Integer.toString(fixture.port()), "-t", "set,get", "-d", Integer.toString(size), "-n",
                Integer.toString(requests), "-c", "8", "-r", "100", "-P", Integer.toString(pipeline), "-e", "--csv"),
                null, 600);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out() + r.err()).doesNotContain("Error", "ERR");
        assertThat(r.out()).contains("\"SET\",\"", "\"GET\",\"");
        for (String line : r.out().lines().filter(l -> l.startsWith("\"SET\"") || l.startsWith("\"GET\"")).toList()) {
            double rps = Double.parseDouble(line.split(",")[1].replace("\"", ""));
            assertThat(rps).as(line).isPositive();
        }
        // the values are redis-benchmark's own: the size asked for, random characters '0' + (0..63)
        List<?> page = call("SCAN", "0", "COUNT", "1000");
        List<?> keys = (List<?>) page.get(1);
        assertThat(keys).isNotEmpty();
        byte[] value = (byte[]) call1("GET", RespSocket.text(keys.getFirst()));
        assertThat(value).hasSize(size);
        long outside = IntStream.range(0, size).filter(i -> value[i] < '0' || value[i] >= '0' + 64).count();
        assertThat(outside).as("bytes that redis-benchmark does not send").isZero();
        assertThat(IntStream.range(0, size).map(i -> value[i]).distinct().count()).isGreaterThan(32);
        if (pipeline > 1) {
            assertThat(store.calls).anyMatch(c -> c.startsWith("getAll:") && Integer.parseInt(c.substring(7)) > 1);
            assertThat(store.calls).anyMatch(c -> c.startsWith("putAll:") && Integer.parseInt(c.substring(7)) > 1);
        }
    }

    @Test
    void configGetOfPersistenceKeysAnswersAsRedisWithoutPersistence() {
        // what redis-benchmark asks before it starts (it warns and goes on when these fail)
        assertThat(call("CONFIG", "GET", "save").stream().map(RespSocket::text)).containsExactly("save", "");
        assertThat(call("CONFIG", "GET", "appendonly").stream().map(RespSocket::text)).containsExactly("appendonly",
                "no");
    }

    private static List<?> call(Object... args) {
        return (List<?>) call1(args);
    }

    private static Object call1(Object... args) {
        try (RespSocket s = new RespSocket(fixture.port())) {
            return s.call(args);
        }
    }
}
