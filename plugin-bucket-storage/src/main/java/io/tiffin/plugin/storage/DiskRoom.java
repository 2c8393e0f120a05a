package io.tiffin.plugin.storage;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.FileStore;
import java.nio.file.Path;

/**
 * How many bytes a backend's bucket files may take. At most the configured capacity ({@code storage.bucket.capacity};
 * 0 = the disk), and never more than the disk can hold at the moment of a write: the bucket files plus the disk's
 * free space, less a reserve for what else grows there (the backend's own RocksDB index above all: its log and
 * tables take room after the capacity is measured). The disk's free space is asked at every write batch (one {@code
 * statvfs}), so the backend evicts by it: a disk that fills, by the index or by other files, makes the tier evict
 * instead of failing every later write with "No space left on device" while its files stay below a capacity measured
 * when the disk had more room.
 *
 * <p>The limit does not move with the backend's own evictions (an evicted bucket's bytes become free space), so
 * eviction can bring a batch under it.
 *
 * <p>Thread-safe (immutable; the file store answers each call afresh).
 */
final class DiskRoom {
    private static final System.Logger LOG = System.getLogger(DiskRoom.class.getName());
    /** The reserve: a twentieth of what the bucket files may take on the disk, at most 64 MiB. */
    private static final long MAX_RESERVE = 64L << 20;

    /** The disk's free space, or null on a file system that states no size (ramfs): the capacity alone holds. */
    private final FileStore store;
    private final long capacity;

    private DiskRoom(FileStore store, long capacity) {
        this.store = store;
        this.capacity = capacity;
    }

    /**
     * The room of bucket files in {@code bucketsDir}, which hold {@code bucketBytes} now, with {@code configured}
     * bytes of capacity (0 = the disk's).
     */
    static DiskRoom of(Path bucketsDir, long configured, long bucketBytes) throws IOException {
        FileStore store = java.nio.file.Files.getFileStore(bucketsDir);
        if (store.getTotalSpace() == 0) { // no size stated (ramfs): nothing to measure against
            return new DiskRoom(null, configured > 0 ? configured : Long.MAX_VALUE);
        }
        long disk = disk(store.getUsableSpace(), bucketBytes);
        if (configured > disk) {
            LOG.log(Level.WARNING, "storage capacity {0} bytes for {1} exceeds what its disk can take ({2} bytes: the"
                    + " bucket files plus the free space, less a reserve for the index): the tier holds what the disk"
                    + " takes and evicts by its free space; lower storage.bucket.capacity or free disk space",
                    configured, bucketsDir.getParent(), disk);
        }
        return new DiskRoom(store, configured > 0 ? configured : disk);
    }

    /** The capacity this backend states: the configured one, or what the disk could take when it opened. */
    long capacity() {
        return capacity;
    }

    /**
     * The most bytes the bucket files may take now, while they take {@code bucketBytes}: the capacity, or less when
     * the disk has less free space. The capacity when the file store cannot say.
     */
    long limit(long bucketBytes) {
        if (store == null) {
            return capacity;
        }
        long usable;
        try {
            usable = store.getUsableSpace();
        } catch (IOException e) {
            return capacity;
        }
        long disk = disk(usable, bucketBytes);
        return Math.min(capacity, disk);
    }

    private static long disk(long usable, long bucketBytes) {
        long total = usable + bucketBytes;
        return total - Math.min(MAX_RESERVE, total / 20);
    }
}
