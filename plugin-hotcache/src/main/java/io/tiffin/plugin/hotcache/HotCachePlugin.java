package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The built-in hot-cache policies, selected with {@code hotcache.policy}: {@code lru} (what Mooncake
 * upstream does), {@code sieve}, {@code s3-fifo}, {@code w-tinylfu} (a window adapted by ghost feedback),
 * {@code w-tinylfu-static} (a fixed 1% window, kept as a baseline), {@code w-tinylfu-tuned} (the default:
 * follows the best of simulated W-TinyLFU caches with windows from 1% to 100%, an S3-FIFO cache and a
 * reuse-interval cache, {@link ShadowTunedPolicy}) and {@code reuse-interval} (evicts the block predicted to be
 * read farthest ahead from its last reuse interval, {@link ReuseIntervalPolicy}).
 *
 * <p>Settings ({@code hotcache.policy.<name>.<key>}; the host refuses any other key under a policy's
 * prefix): {@code s3-fifo.small-share}, the small queue's share of the capacity (default 0.1, between 0
 * and 1 exclusive); {@code w-tinylfu.window-share}, the window's initial share (default 0.01, 0 to 1;
 * the window then adapts), and {@code w-tinylfu-static.window-share}, its fixed share (default 0.01).
 * {@code lru}, {@code sieve}, {@code w-tinylfu-tuned} and {@code reuse-interval} have none.
 *
 * <p>Thread-safe: stateless; every factory call returns a new, independent policy.
 */
public final class HotCachePlugin implements TiffinPlugin {
    static final String SMALL_SHARE = "small-share";
    static final String WINDOW_SHARE = "window-share";
    static final double DEFAULT_WINDOW_SHARE = 0.01;

    @Override
    public String name() {
        return "hotcache";
    }

    @Override
    public List<HotCachePolicyFactory> hotCachePolicies() {
        return List.of(
                factory("lru", Set.of(), (capacity, settings) -> new LruPolicy(capacity)),
                factory("sieve", Set.of(), (capacity, settings) -> new SievePolicy(capacity)),
                factory("s3-fifo", Set.of(SMALL_SHARE), (capacity, settings) -> new S3FifoPolicy(capacity,
                        share(settings, "s3-fifo", SMALL_SHARE, S3FifoPolicy.DEFAULT_SMALL_SHARE, false))),
                factory("w-tinylfu", Set.of(WINDOW_SHARE), (capacity, settings) -> new WTinyLfuPolicy("w-tinylfu",
                        capacity, share(settings, "w-tinylfu", WINDOW_SHARE, DEFAULT_WINDOW_SHARE, true), true)),
                factory("w-tinylfu-static", Set.of(WINDOW_SHARE), (capacity, settings) -> new WTinyLfuPolicy(
                        "w-tinylfu-static", capacity, share(settings, "w-tinylfu-static", WINDOW_SHARE,
                        DEFAULT_WINDOW_SHARE, true), false)),
                factory("w-tinylfu-tuned", Set.of(), (capacity, settings) -> new ShadowTunedPolicy("w-tinylfu-tuned",
                        capacity)),
                factory("reuse-interval", Set.of(), (capacity, settings) -> new ReuseIntervalPolicy("reuse-interval",
                        capacity)));
    }

    static HotCachePolicy adaptiveTinyLfu(long capacityBlocks) {
        return new WTinyLfuPolicy("w-tinylfu", capacityBlocks, DEFAULT_WINDOW_SHARE, true);
    }

    /**
     * The share {@code key} of {@code settings}, or {@code defaultValue}: in [0, 1] with {@code closed},
     * else in (0, 1).
     *
     * @throws IllegalArgumentException naming the full key and the value
     */
    static double share(PluginContext settings, String policy, String key, double defaultValue, boolean closed) {
        String full = "hotcache.policy." + policy + "." + key;
        double v;
        try {
            v = settings.getDouble(key, defaultValue);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(full + " = " + settings.get(key).orElse("") + " (expected: a number)", e);
        }
        boolean ok = closed ? v >= 0 && v <= 1 : v > 0 && v < 1;
        if (!ok) {
            throw new IllegalArgumentException(full + " = " + settings.get(key).orElse("") + " (expected: a share of"
                    + " the capacity, " + (closed ? "0 to 1" : "between 0 and 1 exclusive") + ", e.g. "
                    + defaultValue + ")");
        }
        return v;
    }

    private interface Constructor {
        HotCachePolicy create(long capacityBlocks, PluginContext settings);
    }

    private static HotCachePolicyFactory factory(String name, Set<String> keys, Constructor constructor) {
        return new HotCachePolicyFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<Set<String>> configKeys() {
                return Optional.of(keys);
            }

            @Override
            public HotCachePolicy create(long capacityBlocks) {
                return constructor.create(capacityBlocks, PluginContext.empty());
            }

            @Override
            public HotCachePolicy create(long capacityBlocks, PluginContext context) {
                return constructor.create(capacityBlocks, context);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
