package io.tiffin.plugins.testkit.storage;

import io.tiffin.api.spi.storage.StorageBackend;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The reference backend passes the contract; each temporary directory stands for one "disk". */
class InMemoryStorageBackendTest extends StorageBackendContract {
    private final Map<Path, ConcurrentHashMap<String, byte[]>> disks = new ConcurrentHashMap<>();

    @Override
    protected StorageBackend open(Path dir) {
        return new InMemoryStorageBackend(disks.computeIfAbsent(dir, d -> new ConcurrentHashMap<>()), 1L << 30);
    }
}
