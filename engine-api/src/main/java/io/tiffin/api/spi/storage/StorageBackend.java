package io.tiffin.api.spi.storage;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BiConsumer;

/**
 * A node's persistent tier (SSD): stores whole objects by key and reads them back.
 *
 * <p><b>Ownership</b>: the backend owns its files, indexes and native handles and releases them in
 * {@link #close()}. Segments passed in are the caller's: the backend reads or writes them only during
 * the call and never keeps a reference.
 *
 * <p><b>Threads</b>: implementations are thread-safe; reads, writes and removals may run concurrently
 * from several threads. A read concurrent with a removal of the same key either returns the whole
 * object or reports it missing, never partial or foreign bytes.
 *
 * <p><b>Not found</b>: {@link #read} returns -1 and {@link #size} returns empty for an unknown key; a
 * stored object that fails its checksum is reported as missing (and counted), never returned.
 *
 * <p><b>Retry</b>: {@link #writeBatch} is all-or-nothing per call; on failure (for example a full disk)
 * it throws {@link io.tiffin.api.TiffinException} with a FILE_* code and nothing of the batch is
 * readable.
 */
public interface StorageBackend extends AutoCloseable {

    /** Writes the objects durably; the map's values are read in full. */
    void writeBatch(Map<String, MemorySegment> objects);

    /** Size of the stored object, or empty if unknown. */
    OptionalLong size(String key);

    /**
     * Reads the object into {@code destination} (which must be at least its size) and returns the number
     * of bytes read, or -1 if the key is unknown or its bytes failed their checksum.
     */
    long read(String key, MemorySegment destination);

    /** Removes the object; returns false if it was unknown. */
    boolean remove(String key);

    /** Removes every object whose key is in {@code keys}; returns the keys removed. */
    default List<String> removeAll(List<String> keys) {
        return keys.stream().filter(this::remove).toList();
    }

    /** Calls {@code visitor} with the key and size of every stored object (used at restart). */
    void scan(BiConsumer<String, Long> visitor);

    /** Bytes used by stored objects. */
    long usedBytes();

    /** Capacity the backend is allowed to use, in bytes. */
    long capacityBytes();

    @Override
    void close();
}
