package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Replies sent from the node's memory ({@link LentValue}) that take longer to write than the read lease on their
 * bytes ({@link LeaseGuard}), with a 2 s lease: a client that keeps reading, slowly, gets the exact bytes over
 * several leases, each renewed; a client whose value is replaced while it reads is cut off before the old bytes'
 * lease ends, having received only the old value's bytes.
 */
class GatewayLeaseRenewalTest {
    private static final int BIG = 32 << 20;
    private static final int HEADER = ("$" + BIG + "\r\n").length();
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start(Map.of("master.lease-ttl", "2s"));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @BeforeEach
    void nothingInFlight() {
        fixture.awaitNothingInFlight();
    }

    /** A lent GET, looked for every 300 ms: within the location's reuse (half the 2 s lease). */
    private static void sendLentGet(RespSocket s, String key, byte[] value) {
        fixture.sendLentGet(s, key, value, Duration.ofMillis(300));
    }

    private static long stat(String field) {
        try (RespSocket s = new RespSocket(fixture.port())) {
            return s.infoStat(field);
        }
    }

    @Test
    void aReaderSlowerThanTheLeaseGetsTheExactBytesUnderRenewedLeases() throws IOException {
        byte[] value = GatewayFixture.randomValue(BIG, 21);
        long renewedBefore = stat("zero_copy_lease_renewed");
        long closedBefore = stat("zero_copy_lease_closed");
        try (RespSocket s = new RespSocket(fixture.port(), 64 * 1024)) {
            assertThat(s.call("SET", "renew:slow", value)).isEqualTo("OK");
            sendLentGet(s, "renew:slow", value);
            long started = System.nanoTime();
            // 512 steps 10 ms apart: over 5 s, more than two leases
            byte[] reply = GatewayFixture.readPaced(s.input(), HEADER + BIG + 2, 10);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofSeconds(4));
            assertThat(reply.length).as("the whole reply arrived").isEqualTo(HEADER + BIG + 2);
            assertThat(new String(reply, 0, HEADER, StandardCharsets.US_ASCII)).isEqualTo("$" + BIG + "\r\n");
            assertThat(Arrays.copyOfRange(reply, HEADER, HEADER + BIG)).isEqualTo(value);
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.lentValues() == 0);
            assertThat((byte[]) s.call("GET", "renew:slow")).isEqualTo(value); // the connection goes on
        }
        assertThat(stat("zero_copy_lease_renewed") - renewedBefore).isGreaterThanOrEqualTo(2);
        assertThat(stat("zero_copy_lease_closed")).isEqualTo(closedBefore);
    }

    @Test
    void aReaderWhoseValueIsReplacedMeanwhileIsCutOffWithOnlyTheOldBytes() throws Exception {
        byte[] old = GatewayFixture.randomValue(BIG, 22);
        byte[] replacement = GatewayFixture.randomValue(BIG, 23);
        long closedBefore = stat("zero_copy_lease_closed");
        try (RespSocket s = new RespSocket(fixture.port(), 64 * 1024)) {
            assertThat(s.call("SET", "renew:replaced", old)).isEqualTo("OK");
            sendLentGet(s, "renew:replaced", old);
            CompletableFuture<Object> replaced = CompletableFuture.supplyAsync(() -> {
                try (RespSocket other = new RespSocket(fixture.port())) {
                    return other.call("SET", "renew:replaced", replacement);
                }
            });
            s.socket().setSoTimeout(20_000);
            byte[] got = GatewayFixture.readPaced(s.input(), HEADER + BIG + 2, 10);
            assertThat(replaced.get()).isEqualTo("OK");
            assertThat(got.length).as("the reply was cut short").isLessThan(HEADER + BIG);
            assertThat(Arrays.copyOfRange(got, HEADER, got.length))
                    .as("what was sent before the close is the old value's own bytes")
                    .isEqualTo(Arrays.copyOfRange(old, 0, got.length - HEADER));
        }
        assertThat(stat("zero_copy_lease_closed") - closedBefore).isEqualTo(1);
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat((byte[]) s.call("GET", "renew:replaced")).isEqualTo(replacement);
        }
    }
}
