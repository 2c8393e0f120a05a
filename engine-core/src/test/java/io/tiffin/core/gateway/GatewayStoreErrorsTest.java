package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.gateway.RespSocket.Err;
import io.tiffin.core.transport.TransportSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * When the store fails, the command gets {@code -ERR <Tiffin's code> ...} and the connection goes on: a
 * value larger than any segment, a master that is gone, a store call that fails as a whole or with a bug.
 */
class GatewayStoreErrorsTest {
    /** One test checks a gateway of its own, without a fixture. */
    @BeforeAll
    static void leaks() {
        LeakCheck.install();
    }

    @Test
    void aValueLargerThanAnySegmentIsNoAvailableHandle() {
        try (GatewayFixture f = GatewayFixture.start(Map.of("node.segment-size", "16MiB"))) {
            try (RespSocket s = new RespSocket(f.port())) {
                Object reply = s.call("SET", "huge", new byte[20 << 20]);
                assertThat(reply).isInstanceOf(Err.class);
                assertThat(((Err) reply).text()).startsWith("ERR NO_AVAILABLE_HANDLE SET of 'huge': ");
                assertThat(s.call("SET", "small", "fits")).isEqualTo("OK");
                assertThat(RespSocket.text(s.call("GET", "small"))).isEqualTo("fits");
            }
        }
    }

    @Test
    void aMasterThatIsGoneIsAnRpcErrorAndTheConnectionStays() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build();
        try (Tiffin tiffin = Tiffin.embedded(config)) {
            String master = "127.0.0.1:" + tiffin.master().address().getPort();
            TransportSettings quick = TransportSettings.defaults().withHandshakeTimeout(Duration.ofSeconds(2))
                    .withIoThreads(1).withRpcTimeout(Duration.ofSeconds(2));
            GatewayStore store = TiffinGatewayStore.connect(
                    TiffinClient.Options.builder(master).transport(quick).localMemcpy(false).build(), 1);
            try (GatewayServer gateway = GatewayServer.start(store, GatewaySettings.defaults("127.0.0.1", 0));
                 RespSocket s = new RespSocket(gateway.address().getPort())) {
                assertThat(s.call("SET", "k", "v")).isEqualTo("OK");
                tiffin.master().close();
                Object reply = s.call("GET", "other");
                assertThat(reply).isInstanceOf(Err.class);
                assertThat(((Err) reply).text()).matches("ERR (RPC_FAIL|RPC_TIMEOUT) GET of 'other': .*");
                Object dbsize = s.call("DBSIZE");
                assertThat(((Err) dbsize).text()).matches("ERR (RPC_FAIL|RPC_TIMEOUT) DBSIZE: .*");
                assertThat(s.call("PING")).isEqualTo("PONG");
                s.close();
                LeakCheck.assertClean(gateway);
            }
        }
    }

    @Test
    void storeFailuresOfWholeCallsAndBugsAreErrorRepliesOfTheirCommands() {
        try (GatewayFixture f = GatewayFixture.start(Map.of("node.segment-size", "16MiB"), FailingStore::new);
             RespSocket s = new RespSocket(f.port())) {
            s.send(RespSocket.command("SET", "fail-1", "a")).send(RespSocket.command("SET", "fail-2", "b"));
            assertThat(s.read()).isEqualTo(new Err("ERR TRANSFER_FAIL SET of 'fail-1': injected"));
            assertThat(s.read()).isEqualTo(new Err("ERR TRANSFER_FAIL SET of 'fail-2': injected"));
            assertThat(s.call("GET", "bug")).isEqualTo(new Err("ERR INTERNAL_ERROR GET failed:"
                    + " java.lang.IllegalStateException: injected bug; check the gateway's log"));
            // a value whose size the gateway knows is read in its event loop's batch once the connection is idle
            // (its last reply written: under load the GET may come first and be read alone, the value as it is);
            // a bug in the batch answers the GET too
            assertThat(s.call("SET", "batched-bug", "v")).isEqualTo("OK");
            AtomicReference<Object> reply = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                reply.set(s.call("GET", "batched-bug"));
                return reply.get() instanceof Err;
            });
            assertThat(reply.get()).isEqualTo(new Err("ERR INTERNAL_ERROR GET failed:"
                    + " java.lang.IllegalStateException: injected bug; check the gateway's log"));
            assertThat(s.call("SET", "fine", "v")).isEqualTo("OK");
            assertThat(RespSocket.text(s.call("GET", "fine"))).isEqualTo("v");
        }
    }

    /** Fails puts of keys starting with "fail" and has a bug on GET of "bug". Thread-safe. */
    private static final class FailingStore extends ForwardingStore {
        FailingStore(GatewayStore store) {
            super(store);
        }

        @Override
        public ByteBuf get(String key, ValueBuffers buffers) {
            if (key.equals("bug")) {
                throw new IllegalStateException("injected bug");
            }
            return store.get(key, buffers);
        }

        @Override
        public List<KeyResult<ByteBuf>> getAll(List<String> keys, ValueBuffers buffers) {
            if (keys.contains("batched-bug")) {
                throw new IllegalStateException("injected bug");
            }
            return store.getAll(keys, buffers);
        }

        @Override
        public void put(String key, ByteBuf value) {
            if (key.startsWith("fail")) {
                throw new TiffinException(ErrorCode.TRANSFER_FAIL, "injected");
            }
            store.put(key, value);
        }

        @Override
        public List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values) {
            if (keys.stream().anyMatch(k -> k.startsWith("fail"))) {
                throw new TiffinException(ErrorCode.TRANSFER_FAIL, "injected");
            }
            return store.putAll(keys, values);
        }

        @Override
        public boolean put(String key, ByteBuf value, PutTerms terms) {
            if (key.startsWith("fail")) {
                throw new TiffinException(ErrorCode.TRANSFER_FAIL, "injected");
            }
            return store.put(key, value, terms);
        }
    }
}
