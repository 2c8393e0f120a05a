package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Commands naming more keys than one batch request to the master may carry (transport.max-batch-keys, 100,000) work
 * as Redis answers them, and an MGET of many keys holds memory for its values, not 16 KiB of guesswork per key: with
 * a 64 MiB gateway.max-memory, an MGET of 120,000 keys (1.9 GB of first-read buffers at once before) answers.
 */
class GatewayManyKeysTest {
    private static final int KEYS = 120_000;
    private static GatewayFixture fixture;

    @BeforeAll
    static void start() {
        fixture = GatewayFixture.start(Map.of("gateway.max-memory", "64MiB"));
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static Object[] command(String name, List<String> args) {
        Object[] c = new Object[args.size() + 1];
        c[0] = name;
        for (int i = 0; i < args.size(); i++) {
            c[i + 1] = args.get(i);
        }
        return c;
    }

    @Test
    void msetMgetExistsAndDelOfMoreKeysThanOneBatchTakes() {
        List<String> pairs = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add("many-" + i);
            if (i % 1000 == 0) { // a few present among many missing
                pairs.add("many-" + i);
                pairs.add("v" + i);
            }
        }
        try (RespSocket s = new RespSocket(fixture.port())) {
            assertThat(s.call(command("MSET", pairs))).isEqualTo("OK");
            List<?> values = (List<?>) s.call(command("MGET", keys));
            assertThat(values).hasSize(KEYS);
            for (int i = 0; i < KEYS; i++) {
                Object v = values.get(i);
                if (i % 1000 == 0) {
                    assertThat(new String((byte[]) v, StandardCharsets.UTF_8)).as(keys.get(i)).isEqualTo("v" + i);
                } else {
                    assertThat(v).as(keys.get(i)).isNull();
                }
            }
            assertThat(s.call(command("EXISTS", keys))).isEqualTo((long) (KEYS / 1000));
            assertThat(s.call(command("DEL", keys))).isEqualTo((long) (KEYS / 1000));
            assertThat(s.call("EXISTS", "many-0", "many-1000")).isEqualTo(0L);

            List<String> bigMset = new ArrayList<>();
            for (int i = 0; i < 100_001; i++) {
                bigMset.add("mset-" + i);
                bigMset.add("x");
            }
            assertThat(s.call(command("MSET", bigMset))).isEqualTo("OK");
            assertThat(s.call("MGET", "mset-0", "mset-100000")).asInstanceOf(
                    org.assertj.core.api.InstanceOfAssertFactories.LIST).hasSize(2).doesNotContainNull();
        }
    }

    /** A key over master.max-key-length is answered in a short error naming the limit (it echoed the key twice). */
    @Test
    void aKeyOverTheLengthLimitIsAnsweredInAShortError() {
        try (RespSocket s = new RespSocket(fixture.port())) {
            Object reply = s.call("GET", "k".repeat(5_000));
            assertThat(reply).isInstanceOf(RespSocket.Err.class);
            String message = reply.toString();
            assertThat(message).contains("INVALID_KEY").contains("max-key-length");
            assertThat(message.length()).as(message).isLessThan(600);
        }
    }
}
