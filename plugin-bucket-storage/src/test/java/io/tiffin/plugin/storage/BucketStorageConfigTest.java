package io.tiffin.plugin.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration keys, their validation, and the plugin's registration. */
class BucketStorageConfigTest {
    @TempDir
    Path tempDir;

    @Test
    void everyKeyIsReadWithUnitsAndDefaultsApplyOtherwise() {
        BucketStorageConfig c = BucketStorageConfig.from(Map.of("path", "/data/ssd", "capacity", "2GiB",
                "high-watermark", "0.95", "low-watermark", "0.7", "eviction", "LRU", "bucket-max-bytes", "64MiB",
                "bucket-max-keys", "100", "direct-io", "false"));
        assertThat(c).isEqualTo(new BucketStorageConfig(Path.of("/data/ssd"), 2L << 30, 0.95, 0.7, EvictionPolicy.LRU,
                64L << 20, 100, false));
        assertThat(BucketStorageConfig.from(Map.of("path", "/x"))).isEqualTo(BucketStorageConfig.defaults(Path.of("/x")));
        assertThat(BucketStorageConfig.defaults(Path.of("/x"))).satisfies(d -> {
            assertThat(d.bucketMaxBytes()).isEqualTo(256L << 20);
            assertThat(d.bucketMaxKeys()).isEqualTo(500);
            assertThat(d.eviction()).isEqualTo(EvictionPolicy.FIFO);
            assertThat(d.highWatermark()).isEqualTo(0.90);
            assertThat(d.lowWatermark()).isEqualTo(0.80);
            assertThat(d.directIo()).isTrue();
        });
    }

    @Test
    void badValuesNameTheKeyTheValueAndWhatIsExpected() {
        assertInvalid(Map.of(), "path is not set");
        assertInvalid(Map.of("path", "/x", "colour", "red"), "unknown bucket storage keys [colour]");
        assertInvalid(Map.of("path", "/x", "low-watermark", "0.95"), "low-watermark = 0.95 (expected: > 0 and below");
        assertInvalid(Map.of("path", "/x", "high-watermark", "1.5"), "high-watermark = 1.5 (expected: in (0, 1]");
        assertInvalid(Map.of("path", "/x", "eviction", "random"), "eviction = random (expected: fifo or lru)");
        assertInvalid(Map.of("path", "/x", "capacity", "12 parsecs"), "capacity = 12 parsecs");
        assertInvalid(Map.of("path", "/x", "bucket-max-keys", "0"), "bucket-max-keys = 0 (expected: > 0");
        assertInvalid(Map.of("path", "/x", "direct-io", "yes"), "direct-io = yes (expected: true or false)");
    }

    private static void assertInvalid(Map<String, String> properties, String message) {
        assertThatThrownBy(() -> BucketStorageConfig.from(properties)).isInstanceOfSatisfying(TiffinException.class,
                e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
                    assertThat(e.getMessage()).contains(message);
                });
    }

    @Test
    void pluginIsFoundByServiceLoaderAndCreatesTheBucketBackend() {
        StorageBackendFactory factory = ServiceLoader.load(TiffinPlugin.class).stream()
                .map(ServiceLoader.Provider::get)
                .flatMap(p -> p.storageBackends().stream())
                .filter(f -> f.name().equals("bucket"))
                .findFirst().orElseThrow();
        try (StorageBackend backend = factory.create(new PluginContext(Map.of("path", tempDir.toString(),
                "capacity", "64MiB"), "node-1"))) {
            assertThat(backend).isInstanceOf(BucketStorageBackend.class);
            assertThat(backend.capacityBytes()).isEqualTo(64L << 20);
            backend.writeBatch(Map.of("k", MemorySegment.ofArray(new byte[] {1, 2, 3})));
            assertThat(backend.size("k")).hasValue(3);
        }
    }

    /** Without a capacity the files may take the disk's free space (not its size: others use it too). */
    @Test
    void theDefaultCapacityIsTheFreeSpacePlusTheBucketFiles() throws Exception {
        var store = java.nio.file.Files.getFileStore(tempDir);
        long usedByOthers = store.getTotalSpace() - store.getUsableSpace();
        try (BucketStorageBackend backend = BucketStorageBackend.open(BucketStorageConfig.from(
                Map.of("path", tempDir.toString())))) {
            long free = store.getUsableSpace();
            assertThat(backend.capacityBytes()).isBetween(free - (64L << 20), free + (64L << 20));
            if (usedByOthers > (256L << 20)) {
                assertThat(backend.capacityBytes()).isLessThan(store.getTotalSpace());
            }
        }
    }
}
