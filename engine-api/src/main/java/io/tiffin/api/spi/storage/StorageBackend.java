package io.tiffin.api.spi.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * from several threads. A read concurrent with a removal, an overwrite or an eviction of the same key
 * either returns one whole stored version of the object or reports it missing, never partial or foreign
 * bytes.
 *
 * <p><b>Not found</b>: {@link #read} returns -1 and {@link #size} returns empty for an unknown key; a
 * stored object that fails its checksum is reported as missing (and counted in {@link
 * StorageStats#corruptReads()}), never returned, and the backend drops it and tells its {@link
 * StorageListener#lost}.
 *
 * <p><b>Objects and keys</b>: a key is a non-empty string; an object holds at least one byte. Writing an
 * existing key replaces the stored object.
 *
 * <p><b>Retry</b>: {@link #writeBatch} is all-or-nothing per call; on failure (for example a full disk)
 * it throws {@link TiffinException} with a FILE_* code, nothing of the batch is readable,
 * objects stored before stay as they were, and the caller may retry the same batch. Reads and removals
 * are idempotent.
 *
 * <p><b>Stamps</b>: a backend may keep a small {@link ObjectStamp} (version and expiry deadline) with each
 * object; then {@link #keepsStamps()} is true, {@link #writeBatch(Map, Map)} stores each stamp in the same
 * durable step as the bytes, {@link #restamp} moves a deadline durably, and {@link #scanStamped} gives the
 * stamps back after a restart. The defaults keep none: stamps are dropped and scans report {@link
 * ObjectStamp#NONE}, and the store then treats copies found after a restart as of unknown version, without a
 * deadline.
 *
 * <p><b>Eviction</b>: a backend with a capacity may evict objects on its own to make room for writes; it
 * tells its {@link StorageListener} which keys go before they stop being readable.
 *
 * <p><b>Errors</b>: misuse (a null or empty key, an empty object, a destination that is too small)
 * throws {@link TiffinException} with {@code INVALID_KEY}, {@code INVALID_PARAMS} or {@code
 * BUFFER_OVERFLOW}; I/O failures throw it with a FILE_* code; any call after {@link #close()} throws it
 * with {@code UNAVAILABLE_IN_CURRENT_STATUS}.
 */
public interface StorageBackend extends AutoCloseable {

    /**
     * Writes the objects durably: when the call returns they survive a crash and a restart. The map's
     * values are read in full during the call. All-or-nothing (see the class comment).
     */
    void writeBatch(Map<String, MemorySegment> objects);

    /**
     * As {@link #writeBatch(Map)}, each object with its stamp from {@code stamps} (a key without one gets {@link
     * ObjectStamp#NONE}; keys of {@code stamps} that are not in {@code objects} are ignored). Writing an existing
     * key replaces its stamp too. The default drops the stamps.
     */
    default void writeBatch(Map<String, MemorySegment> objects, Map<String, ObjectStamp> stamps) {
        Objects.requireNonNull(stamps, "stamps");
        writeBatch(objects);
    }

    /** Whether this backend keeps the stamps written with its objects (see the class comment); the default: no. */
    default boolean keepsStamps() {
        return false;
    }

    /**
     * Moves the expiry deadline of {@code key}'s stamp to {@code expireAtMs} (0 = none), durably when it returns,
     * but only if the stored object carries {@code version} (&gt; 0): a copy written since by another put of the
     * key is left as it is. Returns whether the stored stamp now holds that deadline; false for an unknown key,
     * another version, or a backend that keeps no stamps (the default).
     *
     * @throws TiffinException with a FILE_* code if the stamp cannot be written (the old one stays)
     */
    default boolean restamp(String key, long version, long expireAtMs) {
        return false;
    }

    /**
     * The stamp of {@code key}'s stored object ({@link ObjectStamp#NONE} if it has none, as from a backend that keeps
     * no stamps, the default), or null if the key is unknown.
     */
    default ObjectStamp stamp(String key) {
        return size(key).isPresent() ? ObjectStamp.NONE : null;
    }

    /** Size of the stored object, or empty if unknown. */
    OptionalLong size(String key);

    /**
     * Reads the object into {@code destination} (from its offset 0) and returns the number of bytes
     * read, or -1 if the key is unknown or its bytes failed their checksum. On -1 the destination's
     * first bytes may have been overwritten (with zeros or stale bytes, never handed out as the object).
     *
     * @throws TiffinException {@code BUFFER_OVERFLOW} if {@code destination} is smaller
     *     than the object (nothing is read; the object stays stored)
     */
    long read(String key, MemorySegment destination);

    /**
     * Reads several objects; element {@code i} of the result is what {@link #read} would return for
     * {@code keys.get(i)} into {@code destinations.get(i)}. A backend may reorder and merge the reads to
     * follow the disk layout. The default reads one key after the other.
     *
     * @throws TiffinException {@code INVALID_PARAMS} if the lists differ in length, or as
     *     {@link #read} for any element (objects read before the failing one stay in their destinations)
     */
    default long[] readBatch(List<String> keys, List<MemorySegment> destinations) {
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(destinations, "destinations");
        if (keys.size() != destinations.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS,
                    "readBatch: keys.size() = " + keys.size() + " but destinations.size() = "
                            + destinations.size() + " (expected: one destination per key)");
        }
        long[] result = new long[keys.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = read(keys.get(i), destinations.get(i));
        }
        return result;
    }

    /**
     * Removes the object; returns false if it was unknown. Throws (a {@link TiffinException} naming the cause, such as
     * {@link ErrorCode#FILE_WRITE_FAIL}) when the removal cannot be made durable (a full or failing disk): the object
     * may then remain, and the node asks for its removal again later.
     */
    boolean remove(String key);

    /**
     * Removes every object whose key is in {@code keys}; returns the keys removed. Throws as {@link #remove} does;
     * then any of them may remain.
     */
    default List<String> removeAll(List<String> keys) {
        return keys.stream().filter(this::remove).toList();
    }

    /**
     * Calls {@code visitor} with the key and size of every stored object (used at restart to re-register
     * the objects that survived). Objects written or removed during the scan may or may not be visited.
     */
    void scan(BiConsumer<String, Long> visitor);

    /** Receives one stored object in {@link #scanStamped}. */
    @FunctionalInterface
    interface StampedVisitor {
        void visit(String key, long size, ObjectStamp stamp);
    }

    /**
     * As {@link #scan}, with each object's stamp ({@link ObjectStamp#NONE} when it has none, and always from a
     * backend that keeps no stamps, which is the default).
     */
    default void scanStamped(StampedVisitor visitor) {
        Objects.requireNonNull(visitor, "visitor");
        scan((key, size) -> visitor.visit(key, size, ObjectStamp.NONE));
    }

    /** Bytes of the stored objects (the sum of their sizes). */
    long usedBytes();

    /** Capacity the backend is allowed to use, in bytes. */
    long capacityBytes();

    /**
     * Sets who hears about evicted and lost objects (replacing the previous listener; {@link
     * StorageListener#NONE} until set). Set it before the first write so no eviction goes unheard.
     */
    void listener(StorageListener listener);

    /** A snapshot of the backend's contents and counters. */
    StorageStats stats();

    /**
     * Releases files, indexes and native handles. Idempotent. Callers stop using the backend first;
     * reads still in flight finish before the files they read are closed.
     */
    @Override
    void close();
}
