package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * LMCache's {@code redis://} backend traffic through Debian's redis-py 4.3.4 (python3-redis), run by Debian's
 * own python3 ({@code /usr/bin/python3}): the put/contains/get sequence of 32 MiB chunks (one 256-token chunk
 * of Llama-3.1-8B) on 64 concurrent connections, byte-exact, with {@code redis.asyncio} (as LMCache) and
 * with the blocking client; then misses, DEL of half a pair and EXISTS on many keys. Each test has a Tiffin
 * of its own, with room for 64 chunks.
 */
class GatewayPythonTest {
    private static final int CHUNK = 32 * 1024 * 1024;
    private static final int CONNECTIONS = 64;
    private static Path script;
    private GatewayFixture fixture;

    @BeforeAll
    static void findTools() throws URISyntaxException {
        RedisTools.require(RedisTools.PYTHON, "python3");
        RedisTools.Result probe = RedisTools.run(List.of(RedisTools.PYTHON.toString(), "-c",
                "import redis, redis.asyncio; print(redis.__version__)"), null, 60);
        assertThat(probe.exitCode())
                .as("Debian's python3 cannot import redis (%s): install the Debian package python3-redis"
                        + " (apt-get install -y python3-redis; .ci/run does)", probe.err().strip())
                .isZero();
        script = Path.of(GatewayPythonTest.class.getResource("/gateway/lmcache_redis.py").toURI());
    }

    @BeforeEach
    void start() {
        // 64 chunks of 32 MiB and their metadata, below the eviction watermark (90 %)
        fixture = GatewayFixture.start(Map.of("node.segment-size", "2400MiB"));
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    private RedisTools.Result python(String mode, int chunks, int chunkBytes) {
        return RedisTools.run(List.of(RedisTools.PYTHON.toString(), script.toString(),
                Integer.toString(fixture.port()), mode, Integer.toString(chunks), Integer.toString(chunkBytes)),
                null, 600);
    }

    @Test
    void lmcacheSequenceWithRedisAsyncio() {
        RedisTools.Result r = python("async", CONNECTIONS, CHUNK);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"ok\": true", "\"chunks\": 64", "\"connections\": 64");
        assertThat(fixture.tiffin.client().stats().keys()).isEqualTo(2L * CONNECTIONS);
    }

    @Test
    void lmcacheSequenceWithTheBlockingClient() {
        RedisTools.Result r = python("sync", CONNECTIONS, CHUNK);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"ok\": true", "\"chunks\": 64", "\"connections\": 64");
    }

    @Test
    void missesHalfPairsAndExistsOnManyKeys() {
        RedisTools.Result r = python("edge", 4, 100_000);
        assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("\"miss_get\": true", "\"miss_exists\": 0", "\"del_data\": 1",
                "\"del_meta\": 1", "\"meta_was\": true", "\"after_exists\": 0", "\"exists_many\": 250",
                "\"exists_dup\": 2", "\"mget\": [true, false, true, false]", "\"dbsize\": 250",
                "\"info_keys\": 250", "\"scan_count\": 250");
    }
}
