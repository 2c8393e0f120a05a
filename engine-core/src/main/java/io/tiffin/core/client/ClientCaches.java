package io.tiffin.core.client;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.function.Predicate;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What this client remembers between calls, each part optional (null when disabled): the hot cache of
 * objects read from other nodes ({@link LocalHotCache}), the location cache of lookups reused within their
 * lease ({@link LocationCache}) and the read hints ({@link ReadHints}); and how a write or remove of a key
 * drops it from all three.
 *
 * <p>Thread-safe (each cache is). Owns the hot cache's off-heap blocks and frees them in {@link #close()};
 * the other two hold no off-heap memory.
 */
final class ClientCaches implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(ClientCaches.class);

    private final LocalHotCache hotCache;
    private final LocationCache locations;
    private final ReadHints hints;

    ClientCaches(LocalHotCache hotCache, LocationCache locations, ReadHints hints) {
        this.hotCache = hotCache;
        this.locations = locations;
        this.hints = hints;
    }

    /** The caches {@code options} ask for; the hot cache's policy is created with its settings. */
    static ClientCaches create(TiffinClient.Options options) {
        LocalHotCache hotCache = createHotCache(options.hotCache());
        LocationCache locations = options.locationCache().enabled()
                ? new LocationCache(options.locationCache(), options.ticker()) : null;
        ReadHints hints = options.readHints() > 0 ? new ReadHints(options.readHints()) : null;
        return new ClientCaches(hotCache, locations, hints);
    }

    /** The hot cache {@code s} describes, its policy created with its settings; null when disabled. */
    static LocalHotCache createHotCache(HotCacheSettings s) {
        if (s == null || s.size() == 0) {
            return null;
        }
        if (s.size() < s.blockSize()) {
            LOG.warn("hotcache.size = {} is smaller than one block (hotcache.block-size = {}); the hot cache is "
                    + "disabled. Raise hotcache.size to at least one block to enable it.", s.size(), s.blockSize());
            return null;
        }
        long blocks = s.size() / s.blockSize();
        return new LocalHotCache(s.size(), s.blockSize(), s.maxEntryShare(),
                PluginRegistry.create("hotcache.policy " + s.policy().name(),
                        () -> s.policy().create(blocks, new PluginContext(s.policySettings(), "client"))), s.ringSize());
    }

    /** Null when disabled. */
    LocalHotCache hotCache() {
        return hotCache;
    }

    /** Null when disabled. */
    LocationCache locations() {
        return locations;
    }

    /** Null when disabled. */
    ReadHints hints() {
        return hints;
    }

    /** Whether any of the three caches is on. */
    boolean anyEnabled() {
        return hotCache != null || locations != null || hints != null;
    }

    /** Drops {@code key} from every cache (this client writes or removes it). */
    void invalidate(String key) {
        if (hotCache != null) {
            hotCache.invalidate(key);
        }
        if (locations != null) {
            locations.invalidate(key);
        }
        if (hints != null) {
            hints.invalidate(key);
        }
    }

    /** Drops the matching keys from every cache (this client removes them). */
    void invalidateMatching(Predicate<String> keys) {
        if (hotCache != null) {
            hotCache.invalidateMatching(keys);
        }
        if (locations != null) {
            locations.invalidateMatching(keys);
        }
        if (hints != null) {
            // not needed for correctness (a hint is only used once the lookup confirms it): saves wasted reads
            hints.invalidateMatching(keys);
        }
    }

    /** Frees the hot cache's blocks. */
    @Override
    public void close() {
        if (hotCache != null) {
            hotCache.close();
        }
    }
}
