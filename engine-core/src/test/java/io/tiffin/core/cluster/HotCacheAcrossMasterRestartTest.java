package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.FailoverSettings;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The hot cache's promise across a restart of its master ({@code master.state-dir}): while one client rewrites keys
 * and three threads of a client with a hot cache and a location cache read them ({@link ConcurrentRewrites}), the
 * master is stopped and started again on its port. The restarted master knows nothing of the hits the reader may
 * still serve from lookups the old one answered; no read may return a value older than the last write that had
 * returned, torn bytes, or a miss while the key's value was certain.
 */
class HotCacheAcrossMasterRestartTest {
    private static final long KiB = 1L << 10;
    private static final long MiB = 1L << 20;

    @TempDir
    Path dir;

    private MasterServer startMaster(int port) {
        return startMaster(port, Map.of());
    }

    private MasterServer startMaster(int port, Map<String, String> settings) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.port", Integer.toString(port))
                .set("master.admin-port", "0").set("master.state-dir", dir.resolve("state").toString())
                // hits without a lookup for 200 ms (half the lease), longer than the restart takes; a forced
                // replacement waits as long
                .set("master.lease-ttl", "400ms");
        settings.forEach(b::set);
        var injector = Tiffin.injector(b.build());
        return MasterServer.start(injector.getInstance(MasterServer.Options.class),
                injector.getInstance(FailoverSettings.class), Ticker.SYSTEM);
    }

    /** A client with a hot cache of 32 blocks of 64 KiB (LRU) and a location cache that reuses lookups. */
    private static TiffinClient reader(String address, PluginRegistry plugins) {
        return TiffinClient.connect(TestCluster.remoteOptions(address)
                .hotCache(new HotCacheSettings(32 * 64 * KiB, 64 * KiB, 0.5, 1024, plugins.hotCachePolicy("lru")))
                .locationCache(new LocationCache.Settings(Duration.ofSeconds(30), 1000)).build());
    }

    @Test
    void noReadReturnsAnOlderGenerationThanTheLastReturnedWriteAcrossTheRestart() throws Exception {
        int port = TestCluster.freeFixedPort();
        String address = "127.0.0.1:" + port;
        AtomicReference<MasterServer> master = new AtomicReference<>(startMaster(port));
        List<NodeServer> nodes = new ArrayList<>();
        List<TiffinClient> clients = new ArrayList<>();
        try (PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            for (String id : List.of("a", "b")) {
                nodes.add(NodeServer.start(NodeOptions.builder(address).nodeId(id).segmentSize(64 * MiB)
                        .pingInterval(Duration.ofMillis(100)).build()));
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> master.get().service().liveNodes().size() == 2);
            TiffinClient writer = TiffinClient.connect(TestCluster.remoteOptions(address).build());
            clients.add(writer);
            // 32 blocks of 64 KiB; ten keys of four blocks and a bit: most of them fit, not all
            TiffinClient reader = reader(address, plugins);
            clients.add(reader);
            ConcurrentRewrites race = new ConcurrentRewrites("restart-", 10, (int) (200 * KiB + 3))
                    .withFaults(Set.of(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, ErrorCode.RPC_FAIL,
                            ErrorCode.RPC_TIMEOUT));
            long[] hitsAtRestart = new long[1];

            long rewrites = race.run(writer, List.of(reader, reader, reader), Duration.ofSeconds(6),
                    Duration.ofMillis(1500), () -> {
                        hitsAtRestart[0] = reader.hotCacheStats().orElseThrow().hits();
                        master.get().close();
                        master.set(startMaster(port));
                    });

            race.assertNoWrongAnswer(rewrites);
            assertThat(master.get().service().liveNodes()).as("nodes attached to the restarted master").hasSize(2);
            assertThat(race.writesAfterEvent()).as("writes through the restarted master").isGreaterThan(10);
            assertThat(race.valuesAfterEvent()).as("values read after the restart").isGreaterThan(100);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).as("hits after the restart")
                    .isGreaterThan(hitsAtRestart[0]);
        } finally {
            clients.forEach(TiffinClient::close);
            nodes.forEach(NodeServer::close);
            master.get().close();
        }
    }

    /**
     * An object only the node's SSD tier holds, read through the hot cache and the location cache; the master
     * restarts and learns the object from the node's scan, not from a commit record. A forced removal through the
     * restarted master answers only once the reader can no longer reuse the location the old master handed out:
     * right after it, the reader finds nothing, never the removed bytes (its hot cache still holds them).
     */
    @Test
    void aRemovalOfAnObjectTheRestartedMasterFoundOnSsdIsNeverFollowedByAHitOfItsBytes() throws Exception {
        int port = TestCluster.freeFixedPort();
        String address = "127.0.0.1:" + port;
        // the default lease (10 s): the reader reuses a lookup for 5 s, longer than the restart takes
        Map<String, String> tiering = Map.of("offload.mode", "write-through", "master.lease-ttl", "10s");
        AtomicReference<MasterServer> master = new AtomicReference<>(startMaster(port, tiering));
        List<TiffinClient> clients = new ArrayList<>();
        NodeServer node = null;
        try (PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            NodeOptions options = NodeOptions.builder(address).nodeId("ssd").segmentSize(16 * MiB)
                    .pingInterval(Duration.ofMillis(100)).build().withStorage(new NodeOptions.Storage(
                            plugins.storageBackend("bucket"),
                            new PluginContext(Map.of("path", dir.resolve("ssd").toString()), "ssd"),
                            Duration.ofSeconds(20)), Duration.ofMillis(20));
            node = NodeServer.start(options);
            await().atMost(Duration.ofSeconds(30)).until(() -> master.get().service().liveNodes().size() == 1);
            TiffinClient writer = TiffinClient.connect(TestCluster.remoteOptions(address).build());
            clients.add(writer);
            TiffinClient reader = reader(address, plugins);
            clients.add(reader);
            byte[] old = ClusterEndToEndTest.bytes(7, (int) (100 * KiB));
            writer.put("k", old);
            await("k's SSD copy").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                    .until(() -> master.get().service().counters().offloads() == 1);
            node.close(); // its memory is lost, its SSD copy stays
            node = NodeServer.start(options);
            await("k only on the node's SSD").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                    .until(() -> writer.locate("k").map(l -> l.replicas().stream()
                            .allMatch(r -> r.type() == ReplicaType.LOCAL_DISK)).orElse(false));
            assertThat(reader.get("k")).isEqualTo(old); // looked up: the location and the bytes are cached
            long hits = reader.hotCacheStats().orElseThrow().hits();
            assertThat(reader.get("k")).isEqualTo(old);
            assertThat(reader.hotCacheStats().orElseThrow().hits()).as("a hit").isEqualTo(hits + 1);

            master.get().close();
            master.set(startMaster(port, tiering));
            // the restarted master knows k only from the copy the node's scan reports
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(10))
                    .until(() -> writer.locate("k").isPresent());
            writer.remove("k", true); // waits until the reader's reuse of its lookup has ended

            assertThatThrownBy(() -> reader.get("k")).as("the removed bytes, from the reader's hot cache")
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
        } finally {
            clients.forEach(TiffinClient::close);
            if (node != null) {
                node.close();
            }
            master.get().close();
        }
    }
}
