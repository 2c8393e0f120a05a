package io.tiffin.api.spi.storage;

import java.util.List;

/**
 * Hears about objects a {@link StorageBackend} drops on its own, so the owner of the metadata (the
 * master, through the node) can drop the matching SSD replicas.
 *
 * <p><b>Threads</b>: called on the thread that triggered the drop (a writer for eviction, a reader for
 * a corrupt object), possibly on several threads at once; implementations must be thread-safe and
 * quick (queue the news, do not do network I/O inline). A listener may call {@link StorageBackend#read},
 * {@link StorageBackend#size} and {@link StorageBackend#stats}, but must not write or remove objects of
 * the backend that calls it.
 *
 * <p><b>Failures</b>: an exception thrown by a listener is logged by the backend and otherwise ignored;
 * the drop goes ahead, so a listener cannot block eviction.
 *
 * <p><b>Ownership</b>: holds no resources of the backend; the key lists are immutable and may be kept.
 */
public interface StorageListener {

    /** A listener that ignores everything. */
    StorageListener NONE = new StorageListener() {
        @Override
        public void evicting(List<String> keys) {
        }
    };

    /**
     * The backend is about to evict {@code keys} to get below its disk watermark. Called before the keys
     * stop being readable and before any file holding them is deleted; after the call returns the keys
     * disappear from the backend.
     */
    void evicting(List<String> keys);

    /**
     * The backend found the stored bytes of {@code keys} corrupt or truncated while reading them and has
     * dropped them: they read as missing from now on. Called after the drop. The default ignores it.
     */
    default void lost(List<String> keys) {
    }
}
