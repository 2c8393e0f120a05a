package io.tiffin.api.spi.storage;

/**
 * A point-in-time view of a {@link StorageBackend}'s counters. Counters only grow during the backend's
 * life and start at zero when it is opened; the other fields describe its current contents.
 *
 * <p>Thread-safe (immutable). The fields are read without a common lock, so they may be mutually
 * inconsistent by the operations in flight while the snapshot was taken.
 *
 * @param objects stored objects
 * @param usedBytes bytes of the stored objects, as {@link StorageBackend#usedBytes()}
 * @param diskBytes bytes the backend's files take on disk (padding and bytes of removed objects that
 *     share a file with live ones included); equal to {@code usedBytes} for a backend without files
 * @param capacityBytes as {@link StorageBackend#capacityBytes()}
 * @param corruptReads reads that found bytes failing their checksum or cut short, and returned a miss
 * @param directIoFallbacks files that O_DIRECT could not open or read and that were switched to
 *     buffered I/O
 * @param evictedObjects objects evicted to get below the disk watermark
 */
public record StorageStats(long objects, long usedBytes, long diskBytes, long capacityBytes, long corruptReads,
        long directIoFallbacks, long evictedObjects) {
}
