package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import java.util.List;
import java.util.function.LongFunction;

/**
 * The built-in hot-cache policies, selected with {@code hotcache.policy}: {@code lru} (what Mooncake
 * upstream does), {@code sieve}, {@code s3-fifo}, {@code w-tinylfu} (adaptive window, the default
 * recommendation) and {@code w-tinylfu-static} (a fixed 1% window, kept as a baseline).
 *
 * <p>Thread-safe: stateless; every factory call returns a new, independent policy.
 */
public final class HotCachePlugin implements TiffinPlugin {

    @Override
    public String name() {
        return "hotcache";
    }

    @Override
    public List<HotCachePolicyFactory> hotCachePolicies() {
        return List.of(
                factory("lru", LruPolicy::new),
                factory("sieve", SievePolicy::new),
                factory("s3-fifo", S3FifoPolicy::new),
                factory("w-tinylfu", HotCachePlugin::adaptiveTinyLfu),
                factory("w-tinylfu-static", capacity -> new WTinyLfuPolicy("w-tinylfu-static", capacity, 0.01,
                        false)));
    }

    static HotCachePolicy adaptiveTinyLfu(long capacityBlocks) {
        return new WTinyLfuPolicy("w-tinylfu", capacityBlocks, 0.01, true);
    }

    private static HotCachePolicyFactory factory(String name, LongFunction<HotCachePolicy> constructor) {
        return new HotCachePolicyFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public HotCachePolicy create(long capacityBlocks) {
                return constructor.apply(capacityBlocks);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
