package io.tiffin.plugin.storage;

import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.plugins.testkit.storage.StorageBackendContract;
import java.nio.file.Path;

/** The bucket backend with buffered reads passes the storage contract (small buckets, so batches span several). */
class BucketStorageBackendBufferedContractTest extends StorageBackendContract {
    @Override
    protected StorageBackend open(Path dir) {
        return BucketStorageBackend.open(BucketStorageConfig.defaults(dir).withDirectIo(false)
                .withBucketLimits(1 << 20, 8));
    }
}
