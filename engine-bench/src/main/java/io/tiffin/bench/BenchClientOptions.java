package io.tiffin.bench;

import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.transport.TransportSettings;
import java.time.Duration;

/**
 * Every {@link TiffinClient.Options} the benches build, in one place: default transport settings and
 * 16 MiB slices throughout; what differs is said by the method's name.
 *
 * <p>Thread-safe (stateless).
 */
final class BenchClientOptions {
    private static final long SLICE_SIZE = 16L << 20;

    private BenchClientOptions() {
    }

    /**
     * Target {@code tiffin-remote}: a {@code bench kv} client of another process ({@code localMemcpy=false},
     * no shared memory).
     *
     * @param readHints client.read-hint-cache-size: keys whose last known replica a get reads while it
     *     looks the key up; 0 = off
     * @param locationCacheTtl client.location-cache-ttl (1,000,000 entries); zero = no location cache
     */
    static TiffinClient.Options kvRemote(String masterAddress, long readHints, Duration locationCacheTtl) {
        return kv(masterAddress, readHints, locationCacheTtl).withSharedMemory(false);
    }

    /** Target {@code tiffin-remote-tls}: {@link #kvRemote} over TLS with {@code tls}. */
    static TiffinClient.Options kvRemoteTls(String masterAddress, long readHints, Duration locationCacheTtl,
                                            io.tiffin.core.transport.TlsSettings tls) {
        TiffinClient.Options o = kvRemote(masterAddress, readHints, locationCacheTtl);
        return o.toBuilder().transport(o.transport().withTls(tls)).build();
    }

    /** Target {@code tiffin-unhinted}: {@link #kvRemote} without read hints. */
    static TiffinClient.Options kvUnhinted(String masterAddress, Duration locationCacheTtl) {
        return kv(masterAddress, 0, locationCacheTtl).withSharedMemory(false);
    }

    /** Target {@code tiffin-uncached}: {@link #kvRemote} without location cache. */
    static TiffinClient.Options kvUncached(String masterAddress, long readHints) {
        return kv(masterAddress, readHints, Duration.ZERO).withSharedMemory(false);
    }

    /** Target {@code tiffin-shm}: {@link #kvRemote} mapping the nodes' shared segments (client.shared-memory). */
    static TiffinClient.Options kvShm(String masterAddress, long readHints, Duration locationCacheTtl) {
        return kv(masterAddress, readHints, locationCacheTtl).withSharedMemory(true);
    }

    private static TiffinClient.Options kv(String masterAddress, long readHints, Duration locationCacheTtl) {
        return base(masterAddress, false).readHints(readHints)
                .locationCache(locationCacheTtl.isZero() ? LocationCache.Settings.DISABLED
                        : new LocationCache.Settings(locationCacheTtl, 1_000_000))
                .build();
    }

    /** A {@code bench hotcache} writer, beside the node it writes to ({@code localMemcpy=true}). */
    static TiffinClient.Options hotCacheWriter(String masterAddress) {
        return base(masterAddress, true).build();
    }

    /**
     * A {@code bench hotcache} reader of another node, with a hot cache of {@code settings} (null = none) and a
     * location cache of {@code locationCacheTtl} (zero = none).
     */
    static TiffinClient.Options hotCacheReader(String masterAddress, HotCacheSettings settings,
                                               Duration locationCacheTtl) {
        return base(masterAddress, false).hotCache(settings)
                .locationCache(locationCacheTtl.isZero() ? LocationCache.Settings.DISABLED
                        : new LocationCache.Settings(locationCacheTtl, LocationCache.Settings.DEFAULT.maxEntries()))
                .build();
    }

    /**
     * Default transport, 16 MiB slices, no location cache, default read hints; same-JVM and same-host
     * shortcuts both follow {@code localMemcpy}.
     */
    private static TiffinClient.Options.Builder base(String masterAddress, boolean localMemcpy) {
        return TiffinClient.Options.builder(masterAddress).transport(TransportSettings.defaults())
                .sliceSize(SLICE_SIZE).localMemcpy(localMemcpy).sharedMemory(localMemcpy)
                .locationCache(LocationCache.Settings.DISABLED);
    }
}
