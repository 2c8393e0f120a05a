package io.tiffin.plugin.storage;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Contributes the {@code bucket} storage backend ({@link BucketStorageBackend}). Stateless, so
 * thread-safe; holds no resources (each backend it creates is owned and closed by the caller).
 */
public final class BucketStoragePlugin implements TiffinPlugin {
    /** The name configuration selects the backend by: {@code node.storage-backend=bucket}. */
    public static final String BACKEND_NAME = "bucket";

    @Override
    public String name() {
        return "bucket-storage";
    }

    @Override
    public List<StorageBackendFactory> storageBackends() {
        return List.of(new StorageBackendFactory() {
            @Override
            public String name() {
                return BACKEND_NAME;
            }

            @Override
            public Optional<Set<String>> configKeys() {
                return Optional.of(BucketStorageConfig.SETTINGS);
            }

            @Override
            public StorageBackend create(PluginContext context) {
                return BucketStorageBackend.open(BucketStorageConfig.from(context.properties()));
            }
        });
    }
}
