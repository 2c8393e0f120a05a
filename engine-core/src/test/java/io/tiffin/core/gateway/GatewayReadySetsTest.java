package io.tiffin.core.gateway;

import static io.tiffin.core.gateway.RespSocket.command;
import static io.tiffin.core.gateway.RespSocket.concat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Plain SETs of small values stored on the event loop ({@link ReadySets}) in a gateway whose master and node run in
 * its own process, as in the standalone: the replies come in order with the commands around them, and a SET whose
 * answer is held for another client's cache is answered later without holding up the event loop.
 */
class GatewayReadySetsTest {
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    /**
     * SET {@code key} alone until it is stored on the event loop: a connection is seen idle again a moment after the
     * usual path's replies were written, and a SET meanwhile goes the usual way.
     */
    private static void loneSetOnTheLoop(RespSocket s, String key, byte[] value) {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            long before = s.infoStat("ready_sets");
            assertThat(s.call("SET", key, value)).isEqualTo("OK");
            assertThat(s.infoStat("ready_sets") - before).isEqualTo(1);
        });
        assertThat((byte[]) s.call("GET", key)).isEqualTo(value);
    }

    @Test
    void smallPlainSetsAreStoredOnTheEventLoopAndAnsweredInOrder() {
        byte[] a = GatewayFixture.randomValue(4096, 1);
        byte[] b = GatewayFixture.randomValue(100, 2);
        byte[] big = GatewayFixture.randomValue(64 * 1024, 3);
        try (RespSocket s = new RespSocket(fixture.port())) {
            loneSetOnTheLoop(s, "rs:a", a);

            long before = s.infoStat("ready_sets");
            // pipelined SETs go as one batch call, after the GET before them; replies in order
            s.send(concat(command("GET", "rs:a"), command("SET", "rs:a", b), command("SET", "rs:b", a),
                    command("GET", "rs:a"), command("SET", "rs:big", big), command("SET", "rs:ttl", b, "EX", "100"),
                    command("GET", "rs:b"), command("TTL", "rs:ttl")));
            assertThat((byte[]) s.read()).isEqualTo(a);
            assertThat(s.read()).isEqualTo("OK");
            assertThat(s.read()).isEqualTo("OK");
            assertThat((byte[]) s.read()).isEqualTo(b);
            assertThat(s.read()).isEqualTo("OK");
            assertThat(s.read()).isEqualTo("OK");
            assertThat((byte[]) s.read()).isEqualTo(a);
            assertThat((Long) s.read()).isBetween(1L, 100L);
            assertThat(s.infoStat("ready_sets") - before).as("only a lone SET is stored on the loop").isZero();
            // a lone SET of a large value goes the usual way too
            loneSetOnTheLoop(s, "rs:big", a);
            before = s.infoStat("ready_sets");
            assertThat(s.call("SET", "rs:big", big)).isEqualTo("OK");
            assertThat(s.infoStat("ready_sets") - before).isZero();
            assertThat((byte[]) s.call("GET", "rs:big")).isEqualTo(big);
            // a plain SET drops an earlier expiry, as in Redis
            assertThat(s.call("SET", "rs:ttl", a)).isEqualTo("OK");
            assertThat(s.call("TTL", "rs:ttl")).isEqualTo(-1L);
        }
    }

    @Test
    void aStoredSetWhoseAnswerFailsGetsTheStoresErrorAndTheConnectionGoesOn() {
        // a store whose puts take effect but whose answer fails (as when the master closes during a held reply)
        try (GatewayFixture failing = GatewayFixture.start(Map.of(), store -> new ForwardingStore(store) {
            @Override
            public CompletableFuture<Void> putWithoutWaiting(String key, io.netty.buffer.ByteBuf value) {
                CompletableFuture<Void> stored = store.putWithoutWaiting(key, value);
                return stored == null || !key.startsWith("rs:fail") ? stored : stored.thenCompose(v ->
                        CompletableFuture.failedFuture(new TiffinException(ErrorCode.INTERNAL_ERROR,
                                "PUT_END took effect, but the master closed first")));
            }
        }); RespSocket s = new RespSocket(failing.port())) {
            byte[] v = GatewayFixture.randomValue(512, 6);
            assertThat(s.call("SET", "rs:fail", v)).isInstanceOfSatisfying(RespSocket.Err.class, e -> assertThat(
                    e.text()).startsWith("ERR INTERNAL_ERROR SET").contains("took effect"));
            s.send(concat(command("SET", "rs:ok", v), command("GET", "rs:fail")));
            assertThat(s.read()).isEqualTo("OK");
            assertThat((byte[]) s.read()).as("it took effect").isEqualTo(v);
            assertThat(s.infoStat("ready_sets")).as("the pipelined SET went the usual way").isEqualTo(1);
            loneSetOnTheLoop(s, "rs:ok", v);
        }
    }

    @Test
    void aSetHeldForAnotherClientsCacheIsAnsweredLaterWhileTheLoopServesOthers() throws IOException {
        byte[] old = GatewayFixture.randomValue(4096, 4);
        byte[] fresh = GatewayFixture.randomValue(4096, 5);
        String master = "127.0.0.1:" + fixture.tiffin.master().address().getPort();
        try (TiffinClient caching = TiffinClient.connect(TiffinClient.Options.builder(master).localMemcpy(false)
                .sharedMemory(false).locationCache(new LocationCache.Settings(Duration.ofSeconds(20), 1000)).build());
             RespSocket writer = new RespSocket(fixture.port());
             RespSocket other = new RespSocket(fixture.port())) {
            assertThat(writer.call("SET", "rs:held", old)).isEqualTo("OK");
            assertThat(caching.get("rs:held")).isEqualTo(old); // its location now cached for up to half the lease
            long before = other.infoStat("ready_sets");

            writer.send(command("SET", "rs:held", fresh));
            assertThat(other.call("PING")).as("the event loop serves others meanwhile").isEqualTo("PONG");
            assertThat(writer.input().available()).as("the SET's answer waits for the other cache").isZero();
            writer.send(command("GET", "rs:held")); // waits behind the SET on its connection
            assertThat(writer.read()).isEqualTo("OK");
            assertThat((byte[]) writer.read()).isEqualTo(fresh);
            assertThat(caching.get("rs:held")).as("once answered, no client reads the old bytes").isEqualTo(fresh);
            assertThat(other.infoStat("ready_sets") - before).isEqualTo(1);
        }
    }
}
