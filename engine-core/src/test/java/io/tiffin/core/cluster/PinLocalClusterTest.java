package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.PinnedValue;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.ManualTicker;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link TiffinClient#pinLocal} (and {@code pinLocalOrLookUp}, which may ask the master): what a client has at
 * hand without waiting — a replica in a segment of its JVM,
 * in place for what is left of the read lease, or its hot cache's copy, pinned — and null for everything else.
 */
class PinLocalClusterTest {
    private static final long MiB = 1L << 20;

    private static byte[] bytesOf(PinnedValue v) {
        byte[] out = new byte[(int) v.size()];
        v.copyTo(MemorySegment.ofArray(out));
        return out;
    }

    /** A client of {@code cluster} through the network only, with the location cache and a 16 MiB LRU hot cache. */
    private static TiffinClient hotCachingRemoteClient(TestCluster cluster, PluginRegistry plugins) {
        TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                .locationCache(io.tiffin.core.client.LocationCache.Settings.DEFAULT)
                .hotCache(new HotCacheSettings(16 * MiB, MiB, 1.0, 1024, plugins.hotCachePolicy("lru"))).build());
        cluster.clients.add(c);
        return c;
    }

    @Test
    void aReplicaInThisJvmIsLentInPlaceUntilTheLeaseOfItsCachedLocationEnds() {
        ManualTicker ticker = new ManualTicker();
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "4s"), 1, 64 * MiB)) {
            TiffinClient c = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress())
                    .ticker(ticker).build()); // same-JVM copies and the location cache (2 s) on, as by default
            cluster.clients.add(c);
            byte[] value = TestCluster.randomBytes(300_000, 1);
            c.put("k", value, PutOptions.replicas(1));
            assertThat(c.pinLocal("k")).as("no location at hand: the client's own put dropped it").isNull();
            try (PinnedValue looked = c.pinLocalOrLookUp("k")) {
                assertThat(looked.inPlace()).isTrue();
                assertThat(bytesOf(looked)).isEqualTo(value);
            }
            assertThatThrownBy(() -> c.pinLocalOrLookUp("missing")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            try (PinnedValue p = c.pinLocal("k")) {
                assertThat(p).isNotNull();
                assertThat(p.inPlace()).isTrue();
                assertThat(p.fromCache()).isFalse();
                assertThat(p.segments()).hasSize(1).allMatch(MemorySegment::isReadOnly);
                assertThat(p.size()).isEqualTo(value.length);
                assertThat(bytesOf(p)).isEqualTo(value);
                assertThat(p.validForNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(4)); // the clock stood still
                ticker.advance(Duration.ofMillis(1500));
                assertThat(p.validForNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(2500));
            }
            try (PinnedValue p = c.pinLocal("k")) {
                assertThat(p.validForNanos()).as("what is left of the lease").isEqualTo(TimeUnit.MILLISECONDS.toNanos(2500));
            }
            ticker.advance(Duration.ofMillis(600));
            assertThat(c.pinLocal("k")).as("the location is reused for half the lease at most").isNull();
            assertThat(c.get("k")).isEqualTo(value);
            assertThat(c.pinLocal("k")).isNotNull().satisfies(PinnedValue::close);
            c.remove("k", true);
            assertThat(c.pinLocal("k")).as("a removal drops the location").isNull();
            assertThat(c.pinLocal("missing")).isNull();
            assertThatThrownBy(() -> c.pinLocal(null)).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY));
        }
    }

    @Test
    void aViewInPlaceIsRenewedWhileItsObjectStaysAndNotOnceItWasReplacedOrRemoved() {
        ManualTicker ticker = new ManualTicker();
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "4s"), 1, 64 * MiB)) {
            TiffinClient c = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress())
                    .ticker(ticker).build());
            cluster.clients.add(c);
            byte[] value = TestCluster.randomBytes(300_000, 2);
            c.put("k", value, PutOptions.replicas(1));
            try (PinnedValue p = c.pinLocalOrLookUp("k")) {
                ticker.advance(Duration.ofSeconds(3));
                assertThat(p.validForNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1));
                try (PinnedValue renewed = c.renewInPlace("k", p)) {
                    assertThat(renewed).isNotNull();
                    assertThat(renewed.inPlace()).isTrue();
                    assertThat(renewed.validForNanos()).as("a new lease").isEqualTo(TimeUnit.SECONDS.toNanos(4));
                    assertThat(renewed.segments().getFirst().address()).isEqualTo(p.segments().getFirst().address());
                    assertThat(renewed.version()).isEqualTo(p.version());
                    assertThat(bytesOf(renewed)).isEqualTo(value);
                }
                byte[] newer = TestCluster.randomBytes(300_000, 3);
                c.put("k", newer, PutOptions.replicas(1).withUpsert(true).withReplaceLeased(true));
                assertThat(c.renewInPlace("k", p)).as("another object now: the old bytes last as long as their lease")
                        .isNull();
                assertThat(p.validForNanos()).isEqualTo(TimeUnit.SECONDS.toNanos(1));
                try (PinnedValue again = c.pinLocalOrLookUp("k")) {
                    assertThat(bytesOf(again)).isEqualTo(newer);
                    c.remove("k", true);
                    assertThatThrownBy(() -> c.renewInPlace("k", again)).isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
                }
            }
        }
    }

    @Test
    void aMasterInThisJvmIsAskedDirectlyAndOneElsewhereIsNotAsked() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient here = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(here);
            byte[] value = TestCluster.randomBytes(200_000, 3);
            writer.put("j", value, PutOptions.replicas(1));

            assertThat(here.pinLocal("j")).as("no location at hand").isNull();
            try (PinnedValue p = here.pinLocalAskingMasterInThisJvm("j")) {
                assertThat(p.inPlace()).isTrue();
                assertThat(bytesOf(p)).isEqualTo(value);
            }
            try (PinnedValue p = here.pinLocal("j")) {
                assertThat(p).as("the location the direct lookup returned is kept").isNotNull();
                assertThat(bytesOf(p)).isEqualTo(value);
            }
            assertThatThrownBy(() -> here.pinLocalAskingMasterInThisJvm("missing"))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            here.remove("j", true);
            assertThat(here.pinLocal("j")).isNull();
            assertThatThrownBy(() -> here.pinLocalAskingMasterInThisJvm("j"))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));

            // a client of a master elsewhere (no same-JVM calls) does not ask it: a missing key is not reported
            // missing, as pinLocalOrLookUp reports it
            TiffinClient remote = hotCachingRemoteClient(cluster, plugins);
            byte[] other = TestCluster.randomBytes((int) (2 * MiB), 5);
            writer.put("far", other, PutOptions.replicas(1));
            assertThat(remote.pinLocalAskingMasterInThisJvm("far")).isNull();
            assertThat(remote.pinLocalAskingMasterInThisJvm("missing")).as("nothing asked, nothing known").isNull();
            assertThatThrownBy(() -> remote.pinLocalOrLookUp("missing")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
            assertThat(remote.get("far")).isEqualTo(other);
        }
    }

    @Test
    void aRemoteReplicaIsLentOnlyFromTheHotCache() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
             PluginRegistry plugins = PluginRegistry.classPathOnly()) {
            TiffinClient writer = cluster.remoteClient();
            TiffinClient plain = cluster.locationCachingClient(Duration.ofSeconds(2));
            TiffinClient caching = hotCachingRemoteClient(cluster, plugins);
            byte[] value = TestCluster.randomBytes((int) (3 * MiB + 7), 2);
            writer.put("r", value, PutOptions.replicas(1));

            assertThat(plain.get("r")).isEqualTo(value);
            assertThat(plain.pinLocal("r")).as("a location at hand, but the bytes are on the node").isNull();

            assertThat(caching.get("r")).isEqualTo(value); // fills the cache in the background
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                PinnedValue p = caching.pinLocal("r");
                if (p == null) {
                    caching.get("r"); // keep the location at hand while the fill lands
                    return false;
                }
                try (p) {
                    assertThat(p.fromCache()).isTrue();
                    assertThat(p.inPlace()).isFalse();
                    assertThat(p.validForNanos()).isEqualTo(Long.MAX_VALUE);
                    assertThat(bytesOf(p)).isEqualTo(value);
                }
                return true;
            });
            caching.hotCache().freeBlocksWhenQuiet();
            assertThat(caching.hotCache().freeBlocksWhenQuiet() + caching.hotCache().residentBlocks())
                    .as("no block left pinned").isEqualTo(caching.hotCache().blockCount());
        }
    }
}
