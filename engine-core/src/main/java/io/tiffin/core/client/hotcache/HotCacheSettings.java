package io.tiffin.core.client.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import java.util.Map;
import java.util.Objects;

/**
 * How a client's hot cache is built (keys {@code hotcache.*}).
 *
 * <p>Thread-safe (immutable).
 *
 * @param size bytes of off-heap memory; 0 disables the cache, less than one block disables it with a
 *     warning
 * @param blockSize bytes per block
 * @param maxEntryShare largest share of the cache one object may take
 * @param ringSize slots of the fill ring (a power of two)
 * @param policy the admission/eviction policy factory
 * @param policySettings the policy's settings, keys {@code hotcache.policy.<name>.*} with that prefix removed
 *     (already checked against the keys the policy declares)
 */
public record HotCacheSettings(long size, long blockSize, double maxEntryShare, int ringSize,
                               HotCachePolicyFactory policy, Map<String, String> policySettings) {
    public HotCacheSettings {
        Objects.requireNonNull(policy, "policy");
        policySettings = Map.copyOf(policySettings);
    }

    /** Settings whose policy runs with its defaults. */
    public HotCacheSettings(long size, long blockSize, double maxEntryShare, int ringSize,
                            HotCachePolicyFactory policy) {
        this(size, blockSize, maxEntryShare, ringSize, policy, Map.of());
    }
}
