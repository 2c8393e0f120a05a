package io.tiffin.api.spi.hotcache;

import io.tiffin.api.spi.NamedFactory;
import io.tiffin.api.spi.PluginContext;

/**
 * Creates a {@link HotCachePolicy}; selected by {@code hotcache.policy=<name>}. Thread-safe: each client
 * creates its own policy instance; the caller owns it (policies hold no resources).
 */
public interface HotCachePolicyFactory extends NamedFactory {
    /** A new policy for a cache of {@code capacityBlocks} blocks, with the policy's default settings. */
    HotCachePolicy create(long capacityBlocks);

    /**
     * A new policy for a cache of {@code capacityBlocks} blocks with the policy's settings: the keys
     * {@code hotcache.policy.<name>.*}, prefix removed, in {@code context.properties()} (checked by the
     * host against {@link #configKeys()} when the factory declares them). The default ignores the
     * settings and calls {@link #create(long)}; a policy that has settings overrides this method.
     *
     * @throws IllegalArgumentException naming the key and value for a setting it cannot use
     */
    default HotCachePolicy create(long capacityBlocks, PluginContext context) {
        return create(capacityBlocks);
    }
}
