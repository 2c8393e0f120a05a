package io.tiffin.api.spi.hotcache;

import io.tiffin.api.spi.NamedFactory;

/**
 * Creates a {@link HotCachePolicy}; selected by {@code hotcache.policy=<name>}. Thread-safe: each client
 * creates its own policy instance; the caller owns it (policies hold no resources).
 */
public interface HotCachePolicyFactory extends NamedFactory {
    /** A new policy for a cache of {@code capacityBlocks} blocks. */
    HotCachePolicy create(long capacityBlocks);
}
