package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import io.tiffin.plugins.testkit.HotCachePolicyContract;

/** The policy contract for {@code s3-fifo}. */
class S3FifoPolicyContractTest extends HotCachePolicyContract {
    @Override
    protected HotCachePolicy create(long capacityBlocks) {
        return new S3FifoPolicy(capacityBlocks);
    }
}
