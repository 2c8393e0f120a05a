package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.plugins.testkit.storage.StorageBackendContract;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bucket backend with O_DIRECT reads passes the storage contract. The temporary directory lies on the
 * test machine's disk file system (ext4 here), which accepts O_DIRECT.
 */
class BucketStorageBackendDirectContractTest extends StorageBackendContract {
    @Override
    protected StorageBackend open(Path dir) {
        return BucketStorageBackend.open(BucketStorageConfig.defaults(dir).withDirectIo(true)
                .withBucketLimits(1 << 20, 8));
    }

    @Test
    void readsOnADiskFileSystemUseDirectIoWithoutFallback() {
        try (StorageBackend backend = open(tempDir)) {
            byte[] v = value(1, 1, 10_000);
            backend.writeBatch(Map.of("k", MemorySegment.ofArray(v)));
            byte[] dest = new byte[10_000];
            assertThat(backend.read("k", MemorySegment.ofArray(dest))).isEqualTo(10_000);
            assertThat(dest).isEqualTo(v);
            assertThat(backend.stats().directIoFallbacks()).isZero();
        }
    }
}
