package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.plugins.testkit.HotCachePolicyContract;

/** The policy contract for {@code w-tinylfu-tuned}. */
class ShadowTunedPolicyContractTest extends HotCachePolicyContract {
    @Override
    protected HotCachePolicy create(long capacityBlocks) {
        return new ShadowTunedPolicy("w-tinylfu-tuned", capacityBlocks);
    }
}
