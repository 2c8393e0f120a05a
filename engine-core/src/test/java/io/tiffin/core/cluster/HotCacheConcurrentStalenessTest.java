package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.plugin.PluginRegistry;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The hot cache's promise under concurrency ({@link ConcurrentRewrites}): while one client rewrites keys, three
 * threads of a client with a hot cache too small for the keys (evictions and refills all along) and a location
 * cache never read a stale, torn or wrongly missing value.
 */
class HotCacheConcurrentStalenessTest {
    private static final long KiB = 1L << 10;

    @Test
    void noReadReturnsAnOlderGenerationThanTheLastReturnedWriteOrTornBytes() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "60ms"), 2, 64L << 20);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            // 32 blocks of 64 KiB; ten keys of four blocks and a bit: most of them fit, not all
            TiffinClient reader = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .hotCache(new HotCacheSettings(32 * 64 * KiB, 64 * KiB, 0.5, 1024, plugins.hotCachePolicy("lru")))
                    .locationCache(new LocationCache.Settings(Duration.ofSeconds(30), 1000)).build());
            cluster.clients.add(reader);
            ConcurrentRewrites race = new ConcurrentRewrites("stress-", 10, (int) (200 * KiB + 3));

            long rewrites = race.run(writer, Collections.nCopies(3, reader), Duration.ofSeconds(4));

            race.assertNoWrongAnswer(rewrites);
            var stats = reader.hotCacheStats().orElseThrow();
            assertThat(stats.hits()).as("reads served by the cache").isPositive();
            assertThat(stats.staleRejected()).as("cached copies a rewrite had made stale, refused").isPositive();
        }
    }
}
