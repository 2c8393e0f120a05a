package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Lifetime rules of {@link LocationCache}, on a synthetic clock (the nanoTime values passed in). */
class LocationCacheTest {
    private static final long MS = 1_000_000L;

    @Test
    void aLookupAnsweredAcrossAnInvalidationIsNotKept() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofSeconds(5), 100));
        long before = cache.stamp("k");    // read before the lookup is sent
        cache.invalidate("k");             // this client removes k meanwhile
        cache.put(location("k", 10_000), System.nanoTime(), before);
        assertThat(cache.get("k", System.nanoTime())).as("the answer may predate the remove").isNull();

        cache.put(location("k", 10_000), System.nanoTime(), cache.stamp("k"));
        assertThat(cache.get("k", System.nanoTime())).isNotNull();
        long stamp = cache.stamp("k");
        cache.invalidateMatching(key -> key.startsWith("x")); // matches nothing, but moves every stamp
        cache.put(location("k", 10_000), System.nanoTime(), stamp);
        assertThat(cache.get("k", System.nanoTime())).as("the earlier entry stays").isNotNull();
    }

    private static ObjectLocation location(String key, long leaseMillis) {
        return new ObjectLocation(key, 100, 7, leaseMillis, List.of(new ReplicaDescriptor(1, ReplicaType.MEMORY,
                ReplicaStatus.COMPLETE, "seg", "node", "127.0.0.1:1", 0, 100, 3)));
    }

    @Test
    void anEntryIsUsedForItsTtlAndHandsOutWhatIsLeftOfTheLease() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofMillis(1000), 10));
        long t0 = 5_000 * MS;
        cache.put(location("k", 10_000), t0, cache.stamp("k"));
        ObjectLocation hit = cache.get("k", t0 + 400 * MS);
        assertThat(hit).isNotNull();
        assertThat(hit.leaseTtlMillis()).isEqualTo(9_600); // counted from the moment the lookup was sent
        assertThat(hit.replicas()).isEqualTo(location("k", 10_000).replicas());
        assertThat(hit.version()).isEqualTo(7);
        assertThat(cache.get("k", t0 + 1000 * MS)).isNotNull();
        assertThat(cache.get("k", t0 + 1001 * MS)).isNull();
        assertThat(cache.stats().hits()).isEqualTo(2);
        assertThat(cache.stats().misses()).isEqualTo(1);
    }

    @Test
    void noEntryIsUsedLongerThanTheBoundTheMasterHoldsRemovalsFor() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofMinutes(10), 10));
        assertThat(cache.cacheForMillis()).isEqualTo(600_000); // what it asks; the master caps it the same way
        long t0 = 1_000 * MS;
        cache.put(location("k", 300_000), t0, cache.stamp("k")); // a 5-minute lease
        assertThat(cache.get("k", t0 + LocationCache.MAX_REUSE_MILLIS * MS)).isNotNull();
        assertThat(cache.get("k", t0 + (LocationCache.MAX_REUSE_MILLIS + 1) * MS)).isNull();
    }

    @Test
    void aShortLeaseBoundsTheEntryToHalfOfIt() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofSeconds(60), 10));
        long t0 = 1_000 * MS;
        cache.put(location("k", 400), t0, cache.stamp("k"));
        assertThat(cache.get("k", t0 + 200 * MS)).isNotNull();
        assertThat(cache.get("k", t0 + 201 * MS)).isNull();
    }

    @Test
    void aLeaseTooShortToShareIsNotKept() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofSeconds(1), 10));
        cache.put(location("k", 0), 0, cache.stamp("k"));
        assertThat(cache.get("k", 0)).isNull();
        assertThat(cache.stats().size()).isZero();
    }

    @Test
    void invalidationDropsEntries() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofSeconds(1), 10));
        for (String k : List.of("a/1", "a/2", "b/1")) {
            cache.put(location(k, 10_000), 0, cache.stamp(k));
        }
        cache.invalidate("a/1");
        assertThat(cache.get("a/1", MS)).isNull();
        cache.refused("b/1");
        assertThat(cache.get("b/1", MS)).isNull();
        assertThat(cache.stats().refused()).isEqualTo(1);
        cache.invalidateMatching(k -> k.startsWith("a/"));
        assertThat(cache.get("a/2", MS)).isNull();
    }

    @Test
    void theSizeIsBounded() {
        LocationCache cache = new LocationCache(new LocationCache.Settings(Duration.ofSeconds(10), 100));
        for (int i = 0; i < 1000; i++) {
            cache.put(location("k" + i, 10_000), 0, cache.stamp("k" + i));
        }
        assertThat(cache.stats().size()).isLessThanOrEqualTo(100);
    }

    @Test
    void badSettingsAreRefused() {
        assertThatThrownBy(() -> new LocationCache.Settings(Duration.ofSeconds(-1), 10))
                .hasMessageContaining("client.location-cache-ttl");
        assertThatThrownBy(() -> new LocationCache.Settings(Duration.ofSeconds(1), -1))
                .hasMessageContaining("client.location-cache-size");
        assertThat(LocationCache.Settings.DISABLED.enabled()).isFalse();
        assertThatThrownBy(() -> new LocationCache(LocationCache.Settings.DISABLED))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
