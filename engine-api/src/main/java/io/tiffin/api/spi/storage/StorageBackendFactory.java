package io.tiffin.api.spi.storage;

import io.tiffin.api.spi.NamedFactory;
import io.tiffin.api.spi.PluginContext;

/**
 * Creates a {@link StorageBackend}; selected by {@code node.storage-backend=<name>}. The caller owns the
 * returned backend and closes it. Thread-safe: the node creates one backend at start-up.
 */
public interface StorageBackendFactory extends NamedFactory {
    /**
     * Opens (or creates) a backend. {@code context.properties()} holds {@code path} (the directory
     * to use) and backend-specific keys. Throws {@link io.tiffin.api.TiffinException} if the storage
     * cannot be opened.
     */
    StorageBackend create(PluginContext context);
}
