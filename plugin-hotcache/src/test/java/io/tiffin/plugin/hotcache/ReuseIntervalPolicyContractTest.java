package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.plugins.testkit.HotCachePolicyContract;

/** The policy contract for {@code reuse-interval}. */
class ReuseIntervalPolicyContractTest extends HotCachePolicyContract {
    @Override
    protected HotCachePolicy create(long capacityBlocks) {
        return new ReuseIntervalPolicy("reuse-interval", capacityBlocks);
    }
}
