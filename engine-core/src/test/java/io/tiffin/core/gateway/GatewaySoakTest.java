package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A short soak ({@code /gateway/soak.py}, Debian's python3 and redis-py): LMCache's command sequence on 16
 * connections over a key space several times the store, with deletes, replacements and values given seconds to live,
 * so that eviction, removal, replacement and expiry all run under the reads; every value read back checks its own
 * bytes. Nothing read may be corrupt or a mix of two values, and no command may fail or lose its connection.
 * docs/BENCHMARKS.md records a ten-minute run of the same script against {@code tiffin standalone}.
 */
class GatewaySoakTest {
    @Test
    void lmcacheTrafficUnderEvictionAndChurnReadsOnlyWholeValues() throws URISyntaxException {
        RedisTools.require(RedisTools.PYTHON, "python3");
        Path script = Path.of(GatewaySoakTest.class.getResource("/gateway/soak.py").toURI());
        // about 300 keys of up to 1 MiB (a third of a MiB on average) and their metadata into 64 MiB. Read leases of
        // 1 s: a value read stays unevictable for its lease (removed or replaced, its memory stays taken as long), and
        // with the default 10 s the values read would cover the whole of so small a store, whose SETs then fail
        // NO_AVAILABLE_HANDLE as they should (with 1 GiB, docs/BENCHMARKS.md's ten-minute run saw none)
        try (GatewayFixture fixture = GatewayFixture.start(Map.of("node.segment-size", "64MiB", "master.lease-ttl", "1s",
                "client.location-cache-ttl", "500ms"))) {
            RedisTools.Result r = RedisTools.run(List.of(RedisTools.PYTHON.toString(), script.toString(), "--port",
                    Integer.toString(fixture.port()), "--duration", "8", "--report", "4", "--keys", "300",
                    "--connections", "16", "--max-size", Integer.toString(1 << 20)), null, 120);
            assertThat(r.exitCode()).as(r.out() + r.err()).isZero();
            assertThat(r.out()).contains("\"ok\": true").containsPattern("\"reads_ok\": [1-9]")
                    .containsPattern("\"pairs_written\": [1-9]").doesNotContain("CORRUPT");
            var counters = fixture.tiffin.master().service().counters();
            assertThat(counters.evictedKeys()).as("the store was full: values were evicted").isPositive();
        }
    }
}
