package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client that reads a large reply slowly holds the gateway's memory for longer than a waiting GET's patience
 * ({@link MemoryBudget#VALUE_WAIT_SECONDS}) without releasing any of it; as long as its reply's bytes keep
 * reaching it, another client's GET that waits for that memory is served once it is released, not failed (as
 * LMCache's 64 concurrent 32 MiB GETs were on a loaded machine). The store lends nothing ({@link ForwardingStore}),
 * so every GET reads into memory counted in {@code gateway.max-memory}.
 */
class GatewaySlowReaderTest {
    private static final int VALUE = 32 << 20;
    private GatewayFixture fixture;

    @BeforeEach
    void start() {
        LeakCheck.install();
        // room for one 32 MiB reply, not two
        fixture = GatewayFixture.start(Map.of("gateway.max-memory", "40MiB", "node.segment-size", "256MiB"),
                ForwardingStore::new);
    }

    @AfterEach
    void stop() {
        try {
            LeakCheck.assertClean(fixture.gateway);
        } finally {
            fixture.close();
        }
    }

    @Test
    void aGetWaitingForMemoryHeldByASlowReaderIsServedNotFailed() throws Exception {
        byte[] a = GatewayFixture.randomValue(VALUE, 1);
        byte[] b = GatewayFixture.randomValue(VALUE, 2);
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("SET", "a", a)).isEqualTo("OK");
            assertThat(s.call("SET", "b", b)).isEqualTo("OK");
        }
        try (RespSocket slow = new RespSocket(fixture.port(), 64 * 1024);
             RespSocket waiting = new RespSocket(fixture.port())) {
            slow.send(RespSocket.command("GET", "a"));
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.bufferedBytes() >= VALUE);
            CompletableFuture<Object> got = CompletableFuture.supplyAsync(() -> waiting.call("GET", "b"));
            // a's reply trickles out at ~1.7 MiB/s: the last of it leaves the gateway well after the 10 s that
            // a GET waits for memory while nothing is released and nothing written
            String header = "$" + VALUE + "\r\n";
            InputStream in = slow.input();
            byte[] reply = new byte[header.length() + VALUE + 2];
            int n = 0;
            long start = System.nanoTime();
            while (n < reply.length) {
                int r = in.read(reply, n, Math.min(256 * 1024, reply.length - n));
                if (r < 0) {
                    break;
                }
                n += r;
                if (!got.isDone()) {
                    Thread.sleep(150);
                }
            }
            assertThat(System.nanoTime() - start).as("the slow read outlasted a GET's wait for memory")
                    .isGreaterThan(TimeUnit.SECONDS.toNanos(MemoryBudget.VALUE_WAIT_SECONDS));
            Object value = got.get(30, TimeUnit.SECONDS);
            assertThat(value).as("the waiting GET's reply").isInstanceOf(byte[].class);
            assertThat(Arrays.equals((byte[]) value, b)).isTrue();
            assertThat(new String(reply, 0, header.length(), java.nio.charset.StandardCharsets.US_ASCII))
                    .isEqualTo(header);
            assertThat(Arrays.equals(reply, header.length(), header.length() + VALUE, a, 0, VALUE)).isTrue();
        }
    }
}
