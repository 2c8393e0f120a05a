package io.tiffin.core.gateway;

import static io.tiffin.core.gateway.RespSocket.command;
import static io.tiffin.core.gateway.RespSocket.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.util.internal.PlatformDependent;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clients that misbehave: garbage bytes, a bulk length of 10^12, an array of a million elements, a
 * truncated command, a client that never reads its replies, thousands of idle connections, one connection
 * too many. Each gets an error or a closed connection within the configured limits, the gateway keeps
 * serving another client meanwhile, and its memory stays within {@code gateway.max-memory} and returns to
 * zero once they are gone.
 */
class GatewayBadInputTest {
    private static final long MAX_MEMORY = 256L << 20;
    private static final long WRITE_BUFFER = 2L << 20;
    private static GatewayFixture fixture;
    private static RecordingStore store;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start(Map.of("gateway.idle-timeout", "2s", "gateway.max-memory", "256MiB",
                "gateway.write-buffer", "2MiB", "gateway.max-connections", "5000"), s -> store = new RecordingStore(s));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    /** Another client is served while {@link #fixture} deals with a bad one. */
    private static void othersAreServed() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("SET", "other", "fine")).isEqualTo("OK");
            assertThat(text(s.call("ECHO", "still serving"))).isEqualTo("still serving");
        }
    }

    /** Each test starts with nothing in flight (what an earlier test's connections left has ended). */
    @org.junit.jupiter.api.BeforeEach
    void nothingInFlight() {
        await().atMost(Duration.ofSeconds(60)).until(() -> fixture.gateway.bufferedBytes() == 0);
    }

    private static void memoryWithinLimits() {
        assertThat(fixture.gateway.bufferedBytes()).isLessThanOrEqualTo(MAX_MEMORY);
        long direct = PlatformDependent.usedDirectMemory();
        if (direct >= 0) {
            assertThat(direct).as("Netty's direct memory").isLessThan(MAX_MEMORY + (128L << 20));
        }
    }

    @Test
    void garbageBytesGetAnErrorAndAClosedConnection() {
        for (long seed = 1; seed <= 5; seed++) {
            byte[] garbage = new byte[1 << 20];
            new SplittableRandom(seed).nextBytes(garbage);
            try (RespSocket s = new RespSocket(fixture.port())) {
                s.send(garbage);
                String reply = new String(s.readToEnd(10_000), StandardCharsets.ISO_8859_1);
                assertThat(reply).as("seed %d", seed).startsWith("-ERR ").contains("-ERR Protocol error: ");
            }
            othersAreServed();
            memoryWithinLimits();
        }
    }

    @Test
    void aBulkLengthOfTenToTheTwelfthIsRefusedWithoutAllocating() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000000000\r\n");
            assertThat(new String(s.readToEnd(5000), StandardCharsets.US_ASCII))
                    .isEqualTo("-ERR Protocol error: invalid bulk length\r\n");
        }
        othersAreServed();
        memoryWithinLimits();
    }

    @Test
    void anArrayOfAMillionElementsIsAnsweredWithinTheMemoryLimit() {
        ByteArrayOutputStream huge = new ByteArrayOutputStream();
        huge.writeBytes("*1000000\r\n$6\r\nNOSUCH\r\n".getBytes(StandardCharsets.US_ASCII));
        for (int i = 1; i < 1_000_000; i++) {
            huge.writeBytes("$1\r\nx\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send(huge.toByteArray());
            assertThat(s.read()).isEqualTo(new RespSocket.Err("ERR unknown command 'NOSUCH', with args beginning"
                    + " with: " + "'x' ".repeat(32)));
            memoryWithinLimits();
            assertThat(s.call("PING")).isEqualTo("PONG");
        }
        // an array longer than gateway.max-array-length (1048576) is refused from its header on
        try (RespSocket s = new RespSocket(fixture.port())) {
            s.send("*2000000\r\n");
            assertThat(new String(s.readToEnd(5000), StandardCharsets.US_ASCII))
                    .isEqualTo("-ERR Protocol error: invalid multibulk length\r\n");
        }
        othersAreServed();
    }

    @Test
    void aTruncatedCommandWaitsWithoutHoldingMemoryAndIsClosedWhenIdle() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            // announces a 100 MiB value and a million elements, sends a few bytes of them, then nothing
            s.send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$104857600\r\nabc");
            try (RespSocket t = new RespSocket(fixture.port())) {
                t.send("*1000000\r\n$4\r\nPING\r\n");
                othersAreServed();
                memoryWithinLimits();
                assertThat(t.readToEnd(15_000)).isEmpty(); // closed by gateway.idle-timeout (2s)
            }
            assertThat(s.readToEnd(15_000)).isEmpty();
        }
        othersAreServed();
    }

    @Test
    void aClientThatNeverReadsItsRepliesCannotGrowTheGatewaysMemory() throws Exception {
        byte[] value = new byte[1 << 20];
        new SplittableRandom(7).nextBytes(value);
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call("SET", "big", value)).isEqualTo("OK");
        }
        store.calls.clear();
        try (Socket lazy = new Socket()) {
            lazy.setReceiveBufferSize(64 * 1024);
            lazy.connect(new InetSocketAddress("127.0.0.1", fixture.port()));
            ByteArrayOutputStream gets = new ByteArrayOutputStream();
            for (int i = 0; i < 2000; i++) {
                gets.writeBytes(command("GET", "big"));
            }
            lazy.getOutputStream().write(gets.toByteArray()); // 1.9 GiB of replies it will never read
            await().atMost(Duration.ofSeconds(10)).until(() -> readsOf(store.calls) > 0);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                assertThat(fixture.gateway.bufferedBytes()).isLessThanOrEqualTo(WRITE_BUFFER + 2 * value.length + 65536);
                memoryWithinLimits();
            });
            // only what fits in the socket buffers and gateway.write-buffer was read from the store
            assertThat(readsOf(store.calls)).isLessThan(64);
            othersAreServed();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.bufferedBytes() == 0);
    }

    private static long readsOf(List<String> calls) {
        return calls.stream().filter(c -> c.startsWith("get")).mapToLong(c -> Long.parseLong(c.substring(
                c.indexOf(':') + 1))).sum();
    }

    @Test
    void thousandsOfIdleConnectionsAreServedCheaplyAndClosedByTheIdleTimeout() throws Exception {
        List<Socket> idle = new ArrayList<>();
        try {
            for (int i = 0; i < 3000; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", fixture.port()));
                idle.add(s);
            }
            othersAreServed();
            memoryWithinLimits();
            await().atMost(Duration.ofSeconds(30)).until(() -> fixture.gateway.connections() == 0);
            for (Socket s : idle) {
                s.setSoTimeout(5000);
                assertThat(s.getInputStream().read()).isEqualTo(-1);
            }
        } finally {
            for (Socket s : idle) {
                s.close();
            }
        }
    }

    @Test
    void oneConnectionMoreThanTheCapIsToldSoAndClosed() {
        try (GatewayFixture small = GatewayFixture.start(Map.of("gateway.max-connections", "20",
                "node.segment-size", "16MiB"))) {
            List<RespSocket> open = new ArrayList<>();
            try {
                for (int i = 0; i < 20; i++) {
                    RespSocket s = new RespSocket(small.port());
                    assertThat(s.call("PING")).isEqualTo("PONG");
                    open.add(s);
                }
                try (RespSocket extra = new RespSocket(small.port())) {
                    assertThat(new String(extra.readToEnd(5000), StandardCharsets.US_ASCII))
                            .isEqualTo("-ERR max number of clients reached\r\n");
                }
                assertThat(open.getFirst().call("PING")).isEqualTo("PONG");
            } finally {
                open.forEach(RespSocket::close);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> small.gateway.connections() == 0);
            try (RespSocket again = new RespSocket(small.port())) {
                assertThat(again.call("PING")).isEqualTo("PONG");
            }
        }
    }
}
