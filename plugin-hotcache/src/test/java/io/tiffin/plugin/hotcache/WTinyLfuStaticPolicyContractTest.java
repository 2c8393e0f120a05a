package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.plugins.testkit.HotCachePolicyContract;

/** The policy contract for {@code w-tinylfu-static}. */
class WTinyLfuStaticPolicyContractTest extends HotCachePolicyContract {
    @Override
    protected HotCachePolicy create(long capacityBlocks) {
        return new WTinyLfuPolicy("w-tinylfu-static", capacityBlocks, 0.01, false);
    }
}
