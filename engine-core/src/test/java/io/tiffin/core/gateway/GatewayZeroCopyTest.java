package io.tiffin.core.gateway;

import static io.tiffin.core.gateway.RespSocket.command;
import static io.tiffin.core.gateway.RespSocket.concat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * GETs answered on the event loop from values the store has at hand ({@link ReadyGets}), larger ones sent from
 * the node's segment without a copy ({@link LentValue}): the bytes are exact, and every lent value is released
 * once its reply is written, when its client disconnects in the middle of it, when its client reads slowly,
 * and when its client stops reading so that the gateway closes the connection before the read lease on the
 * bytes ends (the default 10 s lease: a location is reused for 2 s, so the guard closes after 6 to 7.5 s; a client
 * that keeps reading has the lease renewed instead, {@link GatewayLeaseRenewalTest}).
 */
class GatewayZeroCopyTest {
    private static final int BIG = 32 << 20;
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @BeforeEach
    void nothingInFlight() {
        fixture.awaitNothingInFlight();
    }

    /** Stores {@code value} and reads it once the usual way, so that the next GETs find its location at hand. */
    private static void setAndWarm(RespSocket s, String key, byte[] value) {
        assertThat(s.call("SET", key, value)).isEqualTo("OK");
        assertThat((byte[]) s.call("GET", key)).isEqualTo(value);
    }

    private static void sendLentGet(RespSocket s, String key, byte[] value) {
        fixture.sendLentGet(s, key, value, Duration.ofSeconds(2));
    }

    @Test
    void valuesAtHandComeBackExactCopiedOrLentAndAreReleased() {
        byte[] small = GatewayFixture.randomValue(4096, 1);
        byte[] medium = GatewayFixture.randomValue(100_000, 2);
        byte[] large = GatewayFixture.randomValue(1 << 20, 3);
        try (RespSocket s = new RespSocket(fixture.port())) {
            // retried as a whole: under load the location cache's 2 s may pass between the warm-up and the GETs
            await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
                setAndWarm(s, "zc:small", small);
                setAndWarm(s, "zc:medium", medium);
                setAndWarm(s, "zc:large", large);
                long ready = s.infoStat("ready_gets");
                long lent = s.infoStat("zero_copy_replies");
                // one read of pipelined GETs: all answered on the event loop, in order
                s.send(concat(command("GET", "zc:large"), command("GET", "zc:small"), command("GET", "zc:medium"),
                        command("GET", "zc:large")));
                assertThat((byte[]) s.read()).isEqualTo(large);
                assertThat((byte[]) s.read()).isEqualTo(small);
                assertThat((byte[]) s.read()).isEqualTo(medium);
                assertThat((byte[]) s.read()).isEqualTo(large);
                assertThat(s.infoStat("ready_gets") - ready).isEqualTo(4);
                assertThat(s.infoStat("zero_copy_replies") - lent).as("values above 32 KiB sent without a copy")
                        .isEqualTo(3);
            });
            // RESP3 frames a bulk string the same way
            s.call("HELLO", "3");
            assertThat((byte[]) s.call("GET", "zc:large")).isEqualTo(large);
            // a GET the store cannot answer at once, then ones it can: replies stay in order
            s.send(concat(command("GET", "zc:absent"), command("GET", "zc:small"), command("GET", "zc:large")));
            assertThat(s.read()).isNull();
            assertThat((byte[]) s.read()).isEqualTo(small);
            assertThat((byte[]) s.read()).isEqualTo(large);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.lentValues() == 0);
    }

    /**
     * A GET of a key that holds no value is answered on the event loop when the master in this JVM says so (one
     * lookup, not a second one on a command thread): RESP2's null bulk string, RESP3's null, counted as a miss, in
     * order with the GETs around it.
     */
    @Test
    void missingKeysAreAnsweredNilOnTheEventLoopInEitherProtocol() {
        byte[] small = GatewayFixture.randomValue(4096, 300);
        try (RespSocket s = new RespSocket(fixture.port())) {
            // retried as a whole: a GET right after a command of the usual path may find the connection not idle
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                setAndWarm(s, "zc:miss:small", small);
                long ready = s.infoStat("ready_gets");
                long misses = s.infoStat("keyspace_misses");
                long hits = s.infoStat("keyspace_hits");
                s.send(concat(command("GET", "zc:miss:absent1"), command("GET", "zc:miss:small"),
                        command("GET", "zc:miss:absent2")));
                assertThat(rawReply(s, 5)).isEqualTo("$-1\r\n");
                assertThat((byte[]) s.read()).isEqualTo(small);
                assertThat(rawReply(s, 5)).isEqualTo("$-1\r\n");
                assertThat(s.infoStat("ready_gets") - ready).isEqualTo(3);
                assertThat(s.infoStat("keyspace_misses") - misses).isEqualTo(2);
                assertThat(s.infoStat("keyspace_hits") - hits).isEqualTo(1);
            });
            s.call("HELLO", "3");
            try (RespSocket info = new RespSocket(fixture.port())) { // RESP2: INFO as a bulk string
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                    long ready = info.infoStat("ready_gets");
                    s.send(concat(command("GET", "zc:miss:absent3"), command("GET", "zc:miss:small")));
                    assertThat(rawReply(s, 3)).isEqualTo("_\r\n");
                    assertThat((byte[]) s.read()).isEqualTo(small);
                    assertThat(info.infoStat("ready_gets") - ready).isEqualTo(2);
                });
            }
        }
    }

    /**
     * An EXISTS of one key (LMCache's check before its GETs) is answered on the event loop when the master in
     * this JVM answers it, in order with the GETs around it; an EXISTS of several keys goes the usual way.
     */
    @Test
    void existsOfOneKeyIsAnsweredOnTheEventLoop() {
        byte[] small = GatewayFixture.randomValue(4096, 301);
        try (RespSocket s = new RespSocket(fixture.port())) {
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                setAndWarm(s, "zc:exists:small", small);
                long readyExists = s.infoStat("ready_exists");
                long readyGets = s.infoStat("ready_gets");
                s.send(concat(command("EXISTS", "zc:exists:small"), command("EXISTS", "zc:exists:absent"),
                        command("GET", "zc:exists:small"), command("EXISTS", "zc:exists:small", "zc:exists:small")));
                assertThat(s.read()).isEqualTo(1L);
                assertThat(s.read()).isEqualTo(0L);
                assertThat((byte[]) s.read()).isEqualTo(small);
                assertThat(s.read()).as("several keys, the usual path").isEqualTo(2L);
                assertThat(s.infoStat("ready_exists") - readyExists).isEqualTo(2);
                assertThat(s.infoStat("ready_gets") - readyGets).isEqualTo(1);
            });
            assertThat(s.call("DEL", "zc:exists:small")).isEqualTo(1L);
            assertThat(s.call("EXISTS", "zc:exists:small")).isEqualTo(0L);
        }
    }

    /** The next {@code n} bytes of the reply stream, as text. */
    private static String rawReply(RespSocket s, int n) throws IOException {
        return new String(s.input().readNBytes(n), StandardCharsets.US_ASCII);
    }

    @Test
    void largeValuesAreLentOnTheCommandThreadsTooBeyondTheWriteBufferAndOnTheirFirstGet() {
        byte[][] values = new byte[12][];
        try (RespSocket s = new RespSocket(fixture.port())) {
            for (int i = 0; i < values.length; i++) {
                values[i] = GatewayFixture.randomValue(1 << 20, 100 + i);
                setAndWarm(s, "zc:run:" + i, values[i]);
            }
            long ready = s.infoStat("ready_gets");
            long lent = s.infoStat("zero_copy_replies");
            // 12 MiB of replies in one read: the event loop answers up to gateway.write-buffer (8 MiB), the
            // command thread the rest, once the client has taken half; all from the node's segment
            ByteArrayOutputStream pipeline = new ByteArrayOutputStream();
            for (int i = 0; i < values.length; i++) {
                pipeline.writeBytes(command("GET", "zc:run:" + i));
            }
            s.send(pipeline.toByteArray());
            for (byte[] v : values) {
                assertThat((byte[]) s.read()).isEqualTo(v);
            }
            assertThat(s.infoStat("zero_copy_replies") - lent).isEqualTo(values.length);
            assertThat(s.infoStat("ready_gets") - ready).as("not all on the event loop").isLessThan(values.length);
            // a value just stored has no location in the client: its first GET asks the master, which runs in
            // this JVM, directly on the event loop, and is lent there (a master elsewhere would be asked from a
            // command thread: PinLocalClusterTest)
            // (repeated: a GET right after a command of the usual path may find the connection not yet idle)
            byte[] fresh = GatewayFixture.randomValue(1 << 20, 200);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                long before = s.infoStat("zero_copy_replies");
                long readyBefore = s.infoStat("ready_gets");
                assertThat(s.call("SET", "zc:run:fresh", fresh)).isEqualTo("OK");
                assertThat((byte[]) s.call("GET", "zc:run:fresh")).isEqualTo(fresh);
                assertThat(s.infoStat("zero_copy_replies") - before).isEqualTo(1);
                assertThat(s.infoStat("ready_gets") - readyBefore).isEqualTo(1);
            });
            // a missing key is answered nil (on the event loop: the master in this JVM says so), the next GETs too
            byte[] small = GatewayFixture.randomValue(4096, 201);
            assertThat(s.call("SET", "zc:run:small", small)).isEqualTo("OK");
            s.send(concat(command("GET", "zc:run:absent"), command("GET", "zc:run:small")));
            assertThat(s.read()).isNull();
            assertThat((byte[]) s.read()).isEqualTo(small);
            // (the connection is seen idle again a moment after the usual path's replies)
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                long r = s.infoStat("ready_gets");
                assertThat((byte[]) s.call("GET", "zc:run:small")).isEqualTo(small);
                assertThat(s.infoStat("ready_gets") - r).isEqualTo(1);
            });
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.lentValues() == 0);
    }

    @Test
    void aReplacedOrRemovedValueIsNeverServedFromItsOldLocation() {
        byte[] first = GatewayFixture.randomValue(1 << 20, 4);
        byte[] second = GatewayFixture.randomValue(1 << 20, 5);
        try (RespSocket s = new RespSocket(fixture.port())) {
            setAndWarm(s, "zc:replaced", first);
            assertThat((byte[]) s.call("GET", "zc:replaced")).isEqualTo(first);
            assertThat(s.call("DEL", "zc:replaced")).isEqualTo(1L);
            assertThat(s.call("GET", "zc:replaced")).isNull();
            setAndWarm(s, "zc:replaced", second);
            assertThat((byte[]) s.call("GET", "zc:replaced")).isEqualTo(second);
        }
    }

    @Test
    void aClientThatDisconnectsInTheMiddleOfALentReplyReleasesIt() throws IOException {
        byte[] value = GatewayFixture.randomValue(BIG, 6);
        try (RespSocket s = new RespSocket(fixture.port(), 64 * 1024)) {
            setAndWarm(s, "zc:big", value);
            sendLentGet(s, "zc:big", value);
            s.send(command("GET", "zc:big")); // a second reply waiting behind the first
            byte[] head = s.input().readNBytes(64 * 1024);
            assertThat(new String(head, 0, 11, StandardCharsets.US_ASCII)).isEqualTo("$" + BIG + "\r\n");
            assertThat(Arrays.copyOfRange(head, 11, head.length)).isEqualTo(Arrays.copyOfRange(value, 0,
                    head.length - 11));
            s.socket().setSoLinger(true, 0); // a reset, with most of the reply unsent
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.gateway.connections() == 0
                && fixture.gateway.lentValues() == 0 && fixture.gateway.bufferedBytes() == 0);
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat((byte[]) s.call("GET", "zc:big")).isEqualTo(value); // the gateway serves on
        }
    }

    @Test
    void aSlowReaderGetsTheExactBytesAndTheLoanEndsWhenItHasThem() throws IOException, InterruptedException {
        byte[] value = GatewayFixture.randomValue(BIG, 7);
        try (RespSocket s = new RespSocket(fixture.port(), 64 * 1024)) {
            setAndWarm(s, "zc:slow", value);
            sendLentGet(s, "zc:slow", value);
            InputStream in = s.input();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] chunk = new byte[64 * 1024];
            int expected = ("$" + value.length + "\r\n").length() + value.length + 2;
            while (got.size() < expected) {
                int n = in.read(chunk, 0, Math.min(chunk.length, expected - got.size()));
                assertThat(n).as("the gateway closed the connection").isPositive();
                got.write(chunk, 0, n);
                if (got.size() < expected / 2) {
                    assertThat(fixture.gateway.lentValues()).as("held while the reply is being sent").isEqualTo(1);
                }
                Thread.sleep(1); // a slow reader: paced, yet done well within the guard's 6 s
            }
            byte[] reply = got.toByteArray();
            assertThat(new String(reply, 0, 11, StandardCharsets.US_ASCII)).isEqualTo("$" + value.length + "\r\n");
            assertThat(Arrays.copyOfRange(reply, 11, 11 + value.length)).isEqualTo(value);
            assertThat(new String(reply, 11 + value.length, 2, StandardCharsets.US_ASCII)).isEqualTo("\r\n");
            await().atMost(Duration.ofSeconds(10)).until(() -> fixture.gateway.lentValues() == 0);
            assertThat((byte[]) s.call("GET", "zc:slow")).isEqualTo(value); // the connection goes on
        }
    }

    @Test
    void aClientTooSlowForTheReadLeaseIsDisconnectedBeforeItEnds() throws IOException {
        byte[] value = GatewayFixture.randomValue(BIG, 8);
        long closedBefore;
        try (RespSocket s = new RespSocket(fixture.port())) {
            closedBefore = s.infoStat("zero_copy_lease_closed");
        }
        try (RespSocket s = new RespSocket(fixture.port(), 64 * 1024)) {
            setAndWarm(s, "zc:stalled", value);
            sendLentGet(s, "zc:stalled", value);
            // reads nothing while the lease runs: the gateway must give up on the reply before the lease ends
            await().atMost(Duration.ofSeconds(30)).until(() -> fixture.gateway.lentValues() == 0);
            s.socket().setSoTimeout(10_000);
            byte[] received = GatewayFixture.readPaced(s.input(), Integer.MAX_VALUE, 0);
            assertThat(received.length).as("the reply was cut short").isLessThan(BIG);
            assertThat(new String(received, 0, 11, StandardCharsets.US_ASCII)).isEqualTo("$" + BIG + "\r\n");
            assertThat(Arrays.copyOfRange(received, 11, received.length))
                    .as("what was sent before the close is the value's own bytes")
                    .isEqualTo(Arrays.copyOfRange(value, 0, received.length - 11));
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.infoStat("zero_copy_lease_closed") - closedBefore).isEqualTo(1);
        }
    }
}
