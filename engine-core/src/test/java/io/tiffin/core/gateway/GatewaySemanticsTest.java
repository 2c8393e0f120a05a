package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Redis's SET, DEL and expiry semantics through the gateway, seen by redis-py and by other Tiffin clients: a SET
 * right after a GET replaces at once while a client that already holds the old value's location reads the old
 * bytes intact; a value set with EX is gone for another client once its time has come, counted as expired.
 */
class GatewaySemanticsTest {
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        RedisTools.require(RedisTools.REDIS_CLI, "redis-tools");
        fixture = GatewayFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static String master() {
        return "127.0.0.1:" + fixture.tiffin.master().address().getPort();
    }

    /** A client of its own, reading over the network; {@code locationCache} = how long it reuses a lookup. */
    private static TiffinClient otherClient(Duration locationCache) {
        return TiffinClient.connect(TiffinClient.Options.builder(master()).localMemcpy(false).sharedMemory(false)
                .locationCache(locationCache.isZero() ? LocationCache.Settings.DISABLED
                        : new LocationCache.Settings(locationCache, 1000)).build());
    }

    private static String cli(String... args) {
        RedisTools.Result r = RedisTools.cli(fixture.port(), args);
        assertThat(r.err()).isEmpty();
        return r.out().strip();
    }

    @Test
    void redisPySeesRedisSemantics() throws URISyntaxException {
        RedisTools.require(RedisTools.PYTHON, "python3");
        Path script = Path.of(GatewaySemanticsTest.class.getResource("/gateway/set_semantics.py").toURI());
        RedisTools.Result r = RedisTools.run(List.of(RedisTools.PYTHON.toString(), script.toString(),
                Integer.toString(fixture.port())), null, 120);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"ok\": true");
    }

    /**
     * A SET over a value another client has cached the location of returns only once that client can no longer
     * reuse it (as a forced DEL does): from then on every client reads the new value. The old buffer is not
     * reused meanwhile (fillers placed around it), so a read already under way finishes with the old bytes.
     */
    @Test
    void aSetReturnsOnlyOnceNoReaderCanReuseTheOldLocation() {
        byte[] old = new byte[256 * 1024];
        Arrays.fill(old, (byte) 'o');
        try (TiffinClient reader = otherClient(Duration.ofSeconds(8));
             TiffinClient fresh = otherClient(Duration.ZERO)) {
            reader.put("held", old, io.tiffin.api.PutOptions.DEFAULT);
            assertThat(reader.get("held")).isEqualTo(old); // the reader now holds its location (and a lease)
            String replacement = "n".repeat(256 * 1024);
            RedisTools.Result set = RedisTools.run(List.of(RedisTools.REDIS_CLI.toString(), "-p",
                    Integer.toString(fixture.port()), "-x", "SET", "held"), replacement.getBytes(), 30);
            assertThat(set.out().strip()).isEqualTo("OK");
            assertThat(fresh.get("held")).as("new lookups find the new value").isEqualTo(replacement.getBytes());
            for (int i = 0; i < 64; i++) {
                fresh.put("filler" + i, replacement.getBytes(), io.tiffin.api.PutOptions.DEFAULT);
            }
            assertThat(reader.get("held")).as("the SET has returned: the reader's cached location is not reused")
                    .isEqualTo(replacement.getBytes());
        }
    }

    @Test
    void aValueSetWithExIsGoneForAnotherClientOnceItsTimeHasCome() {
        long expiredBefore = fixture.tiffin.master().service().counters().expiredObjects();
        long evictedBefore = fixture.tiffin.master().service().counters().evictedKeys();
        try (TiffinClient other = otherClient(Duration.ZERO)) {
            long set = System.nanoTime(); // before the master starts the put, from which the second counts
            assertThat(cli("SET", "ex", "value", "EX", "1")).isEqualTo("OK");
            assertThat(other.get("ex")).isEqualTo("value".getBytes());
            assertThat(other.ttlMillis("ex")).isBetween(1L, 1000L);
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> {
                try {
                    other.get("ex");
                    return false;
                } catch (TiffinException e) {
                    return e.code() == ErrorCode.OBJECT_NOT_FOUND;
                }
            });
            assertThat(Duration.ofNanos(System.nanoTime() - set)).isGreaterThanOrEqualTo(Duration.ofMillis(999));
            assertThat(other.exists("ex")).isFalse();
            assertThat(cli("GET", "ex")).isEmpty();
            assertThat(cli("TTL", "ex")).isEqualTo("-2");
        }
        assertThat(fixture.tiffin.master().service().counters().expiredObjects()).isEqualTo(expiredBefore + 1);
        assertThat(fixture.tiffin.master().service().counters().evictedKeys()).isEqualTo(evictedBefore);
    }

    @Test
    void redisPySetsRacingGetsAndGetrangesNeverSeeNilOrMixedBytesAndSetGetsFormAChain() throws URISyntaxException {
        RedisTools.require(RedisTools.PYTHON, "python3");
        Path script = Path.of(GatewaySemanticsTest.class.getResource("/gateway/concurrent_sets.py").toURI());
        RedisTools.Result r = RedisTools.run(List.of(RedisTools.PYTHON.toString(), script.toString(),
                Integer.toString(fixture.port())), null, 180);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"ok\": true");
    }

    /**
     * A GET or MGET sent after another connection's SET (or DEL then SET) was answered never returns an older value
     * of the key, nor nil or another value while no write of the key overlaps it ({@code /gateway/read_your_writes.py},
     * redis-py): values change size from one write to the next, so the gateway's remembered sizes are stale all along.
     */
    @Test
    void readsOnOtherConnectionsNeverReturnAValueOlderThanTheLastAnsweredWrite() throws URISyntaxException {
        RedisTools.require(RedisTools.PYTHON, "python3");
        Path script = Path.of(GatewaySemanticsTest.class.getResource("/gateway/read_your_writes.py").toURI());
        RedisTools.Result r = RedisTools.run(List.of(RedisTools.PYTHON.toString(), script.toString(),
                Integer.toString(fixture.port()), "4"), null, 120);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"ok\": true");
    }

    @Test
    void setGetReadsAgainWhenAnotherClientWritesBetweenItsReadAndItsPutAndGivesUpIfThatNeverStops() {
        java.util.concurrent.atomic.AtomicReference<RecordingStore> recording = new java.util.concurrent.atomic.AtomicReference<>();
        try (GatewayFixture own = GatewayFixture.start(java.util.Map.of(), s -> {
            RecordingStore rs = new RecordingStore(s);
            recording.set(rs);
            return rs;
        }); TiffinClient other = TiffinClient.connect(TiffinClient.Options.builder(
                "127.0.0.1:" + own.tiffin.master().address().getPort()).build())) {
            io.tiffin.api.PutOptions replace = io.tiffin.api.PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
            other.put("k", "first".getBytes(), replace);
            java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
            recording.get().afterVersionedRead = () -> {
                if (reads.incrementAndGet() == 1) { // between the first read and its put: another client's SET
                    other.put("k", "second".getBytes(), replace);
                }
            };
            RedisTools.Result r = RedisTools.cli(own.port(), "SET", "k", "third", "GET");
            assertThat(r.out().strip()).as("the value it replaced, read again").isEqualTo("second");
            assertThat(reads.get()).isEqualTo(2);
            assertThat(other.get("k")).isEqualTo("third".getBytes());

            reads.set(0);
            recording.get().afterVersionedRead = () -> other.put("k", ("v" + reads.incrementAndGet()).getBytes(),
                    replace);
            r = RedisTools.cli(own.port(), "SET", "k", "never", "GET");
            assertThat(r.out().strip()).startsWith("ERR CONFLICT SET of 'k' with GET");
            assertThat(reads.get()).isEqualTo(StringCommands.SET_GET_ATTEMPTS);
            assertThat(other.get("k")).as("nothing stored").isEqualTo(("v" + reads.get()).getBytes());

            reads.set(0);
            recording.get().afterVersionedRead = () -> {
                if (reads.incrementAndGet() == 1) {
                    other.remove("k", true); // the key goes after the read: read again, then it is absent
                }
            };
            r = RedisTools.cli(own.port(), "SET", "k", "last", "GET");
            assertThat(r.out().strip()).isEmpty(); // nil
            assertThat(other.get("k")).isEqualTo("last".getBytes());
        }
    }

    /**
     * SET with EXAT or PXAT already past answers as Redis (its NX/XX condition and GET reply apply) and leaves no key
     * behind: not even for the next GET on the same connection, which the master's shortest time to live (1 ms) and
     * the gateway's location cache let find the value for up to about 50 ms.
     */
    @Test
    void aSetWhoseDeadlineHasPassedLeavesNoKey() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            for (int round = 0; round < 20; round++) {
                String k = "past-" + round;
                assertThat(s.call("SET", k, "old")).isEqualTo("OK");
                assertThat(s.call("GET", k)).isEqualTo("old".getBytes());
                assertThat(s.call("SET", k, "new", "EXAT", "1")).isEqualTo("OK");
                assertThat(s.call("GET", k)).as(k).isNull();
                assertThat(s.call("EXISTS", k)).isEqualTo(0L);

                assertThat(s.call("SET", k, "kept")).isEqualTo("OK");
                assertThat(s.call("SET", k, "new", "NX", "PXAT", "1")).as("NX with the key present").isNull();
                assertThat(s.call("GET", k)).isEqualTo("kept".getBytes());
                assertThat(s.call("SET", k, "new", "XX", "PXAT", "1")).isEqualTo("OK");
                assertThat(s.call("GET", k)).isNull();
                assertThat(s.call("SET", k, "new", "XX", "EXAT", "1")).as("XX with the key absent").isNull();

                assertThat(s.call("SET", k, "before")).isEqualTo("OK");
                assertThat(s.call("SET", k, "new", "PXAT", "1", "GET")).isEqualTo("before".getBytes());
                assertThat(s.call("GET", k)).isNull();
            }
        }
    }
}
