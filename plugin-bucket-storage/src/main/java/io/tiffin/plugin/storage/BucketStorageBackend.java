package io.tiffin.plugin.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.ObjectStamp;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.zip.CRC32C;

/**
 * The {@code bucket} {@link StorageBackend}: Mooncake's BucketStorageBackend with a RocksDB index.
 *
 * <p><b>Layout</b>: {@code <path>/buckets/<id>.bucket} files, each holding up to {@code bucket-max-keys}
 * objects and {@code bucket-max-bytes} bytes back to back (each object starts at a multiple of 4 KiB; the
 * gaps are holes), and {@code <path>/index/}, a RocksDB mapping key → bucket id, offset, length and
 * CRC32C, and the object's {@link ObjectStamp} ({@link #keepsStamps()}) under an entry of its own ({@link
 * BucketIndex}). Bucket ids grow with creation, so they order buckets by age.
 *
 * <p><b>Writes</b> ({@link #writeBatch}): make room by eviction if needed, write and fsync the new bucket
 * files and their directory, then add all index entries in one synced RocksDB batch; only then do the
 * objects become readable. A failure at any step deletes the new files and leaves the index as it was
 * ({@code FILE_WRITE_FAIL}); the caller's segments are only read.
 *
 * <p><b>Reads</b> ({@link #read}): look the key up, pin its bucket, read the object with O_DIRECT into an
 * aligned off-heap scratch buffer (or with buffered I/O, see {@link Bucket#read}), then check its CRC32C.
 * A mismatch or a file cut short is a miss: counted in {@link StorageStats#corruptReads()}, the key is
 * dropped from the index and the listener hears {@link StorageListener#lost}. Reads take no lock.
 *
 * <p><b>Eviction</b>: before a write, if the bucket files plus the batch would exceed {@code
 * high-watermark} of what they may take ({@link DiskRoom}: the capacity, or less when the disk has less room), whole buckets are evicted in {@link EvictionPolicy} order until they
 * plus the batch fit under {@code low-watermark}; the listener hears the keys before they stop being
 * readable, and files are deleted only when no read holds them. If the batch still does not fit the
 * capacity, the write fails with {@code FILE_WRITE_FAIL}.
 *
 * <p><b>Restart</b> ({@link #open}, {@link BucketRecovery}): reopens the index, drops entries whose bucket
 * file is missing or too short, deletes bucket files no entry points to, and serves the rest ({@link #scan}
 * reports them). Read recency is not persisted: after a restart LRU starts from bucket age.
 *
 * <p><b>Threads</b>: thread-safe. Writes, removals and evictions are serialised by one lock; reads and
 * {@link #scan} run concurrently with them and with each other.
 *
 * <p><b>Ownership</b>: owns the RocksDB handles (through {@link BucketIndex}) and the bucket files'
 * channels (through {@link Bucket}); {@link #close()} releases them once. Off-heap scratch buffers belong
 * to the read (or batch read) that allocates them and are freed before it returns.
 */
public final class BucketStorageBackend implements StorageBackend {
    private static final System.Logger LOG = System.getLogger(BucketStorageBackend.class.getName());
    private static final int MAX_OBJECT_BYTES = Integer.MAX_VALUE - Bucket.ALIGN;
    private static final int MAX_RUN_BYTES = 8 << 20;

    private final BucketStorageConfig config;
    private final Path bucketsDir;
    private final BucketIndex index;
    private final DiskRoom room;
    private final int alignment;
    private final ConcurrentHashMap<String, Location> locations = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Bucket> buckets = new ConcurrentHashMap<>();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final AtomicLong accessClock = new AtomicLong();
    private final AtomicLong usedBytes = new AtomicLong();
    private final AtomicLong diskBytes = new AtomicLong();
    private final LongAdder corruptReads = new LongAdder();
    private final LongAdder directIoFallbacks = new LongAdder();
    private final LongAdder evictedObjects = new LongAdder();
    private final Bucket.DirectIoListener fallbackListener = this::directIoFailed;
    private long nextBucketId;
    private volatile StorageListener listener = StorageListener.NONE;
    private volatile boolean closed;

    private BucketStorageBackend(BucketStorageConfig config, Path bucketsDir, BucketIndex index, DiskRoom room,
            int alignment) {
        this.config = config;
        this.bucketsDir = bucketsDir;
        this.index = index;
        this.room = room;
        this.alignment = alignment;
    }

    /**
     * Opens (or creates) the backend in {@code config.path()}, cleaning up after a crash (see the class
     * comment).
     *
     * @throws TiffinException {@code FILE_OPEN_FAIL} if the directory cannot be created or read, {@code
     *     FILE_LOCK_FAIL} if another backend uses it
     */
    public static BucketStorageBackend open(BucketStorageConfig config) {
        Objects.requireNonNull(config, "config");
        Path bucketsDir = config.path().resolve("buckets");
        int alignment;
        try {
            Files.createDirectories(bucketsDir);
            Files.createDirectories(config.path().resolve("index"));
            alignment = BucketRecovery.blockSize(Files.getFileStore(bucketsDir));
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "cannot use storage path " + config.path() + " ("
                    + e + "); check that it is a writable directory", e);
        }
        BucketIndex index = BucketIndex.open(config.path().resolve("index"));
        DiskRoom room;
        try {
            // measured once the index is open: what it takes of the disk is not the bucket files' to count on
            room = DiskRoom.of(bucketsDir, config.capacityBytes(), BucketRecovery.bucketFileBytes(bucketsDir));
        } catch (IOException e) {
            index.close();
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "cannot use storage path " + config.path() + " ("
                    + e + "); check that it is a writable directory", e);
        }
        BucketStorageBackend backend = new BucketStorageBackend(config, bucketsDir, index, room, alignment);
        try {
            backend.recover();
        } catch (RuntimeException e) {
            index.close();
            throw e;
        }
        return backend;
    }

    /** Takes over what {@link BucketRecovery} found on disk. */
    private void recover() {
        BucketRecovery.Recovered found = BucketRecovery.recover(config.path(), bucketsDir, index,
                accessClock::incrementAndGet, config.directIo(), fallbackListener);
        found.locations().forEach((key, loc) -> {
            locations.put(key, loc);
            usedBytes.addAndGet(loc.length());
        });
        found.buckets().values().forEach(b -> {
            buckets.put(b.id(), b);
            diskBytes.addAndGet(b.fileBytes());
        });
        nextBucketId = found.nextBucketId();
        LOG.log(Level.INFO, "Opened bucket storage {0}: {1} objects in {2} buckets, {3} of {4} bytes used",
                config.path(), locations.size(), buckets.size(), diskBytes.get(), room.capacity());
    }

    // ---------------------------------------------------------------- writes

    @Override
    public void writeBatch(Map<String, MemorySegment> objects) {
        writeBatch(objects, Map.of());
    }

    /** Keeps each object's stamp in its index entry, written in the same synced batch as the entry. */
    @Override
    public void writeBatch(Map<String, MemorySegment> objects, Map<String, ObjectStamp> stamps) {
        ensureOpen();
        Objects.requireNonNull(objects, "objects");
        Objects.requireNonNull(stamps, "stamps");
        List<List<Map.Entry<String, MemorySegment>>> chunks = new ArrayList<>();
        List<Long> chunkBytes = new ArrayList<>();
        List<Map.Entry<String, MemorySegment>> current = new ArrayList<>();
        long bytes = 0;
        for (Map.Entry<String, MemorySegment> e : objects.entrySet()) {
            checkKey(e.getKey());
            MemorySegment value = e.getValue();
            if (value == null || value.byteSize() == 0 || value.byteSize() > MAX_OBJECT_BYTES) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "object of key \"" + e.getKey() + "\" has "
                        + (value == null ? "no value" : value.byteSize() + " bytes") + " (expected: 1 to "
                        + MAX_OBJECT_BYTES + " bytes; do not store empty objects)");
            }
            long end = Bucket.align(bytes) + value.byteSize();
            if (!current.isEmpty() && (current.size() >= config.bucketMaxKeys() || end > config.bucketMaxBytes())) {
                chunks.add(current);
                chunkBytes.add(bytes);
                current = new ArrayList<>();
                end = value.byteSize();
            }
            current.add(e);
            bytes = end;
        }
        if (current.isEmpty()) {
            return;
        }
        chunks.add(current);
        chunkBytes.add(bytes);
        long needed = chunkBytes.stream().mapToLong(Long::longValue).sum();

        writeLock.lock();
        try {
            ensureOpen();
            makeRoom(needed, objects.size());
            List<Bucket> created = new ArrayList<>();
            List<Path> files = new ArrayList<>();
            Map<String, Location> puts = new LinkedHashMap<>();
            try {
                for (int i = 0; i < chunks.size(); i++) {
                    created.add(writeBucketFile(chunks.get(i), chunkBytes.get(i), stamps, puts, files));
                }
                try (FileChannel dir = FileChannel.open(bucketsDir, StandardOpenOption.READ)) {
                    dir.force(true);
                }
                index.write(puts, List.of());
            } catch (IOException | RuntimeException e) {
                files.forEach(BucketStorageBackend::deleteQuietly);
                String cause = e instanceof TiffinException t ? t.getMessage() : e.toString();
                throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "writing a batch of " + objects.size()
                        + " objects (" + needed + " bytes) to " + bucketsDir + " failed: " + cause
                        + "; nothing of the batch was stored, objects stored before are unchanged (free disk "
                        + "space, lower storage capacity, or retry)", e);
            }
            for (Bucket b : created) {
                buckets.put(b.id(), b);
                diskBytes.addAndGet(b.fileBytes());
            }
            puts.forEach((key, loc) -> {
                buckets.get(loc.bucketId()).addKey(key, loc.length());
                usedBytes.addAndGet(loc.length());
                Location old = locations.put(key, loc);
                if (old != null) {
                    forget(key, old);
                }
            });
        } finally {
            writeLock.unlock();
        }
    }

    /** Writes one bucket file (fsynced) and records its objects' locations in {@code puts}. */
    private Bucket writeBucketFile(List<Map.Entry<String, MemorySegment>> chunk, long fileBytes,
            Map<String, ObjectStamp> stamps, Map<String, Location> puts, List<Path> files) throws IOException {
        long id = nextBucketId++;
        Path file = bucketsDir.resolve(Bucket.fileName(id));
        if (Files.exists(file)) {
            throw new IOException("bucket file " + file + " exists already; another process may use " + bucketsDir);
        }
        files.add(file);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            long position = 0;
            CRC32C crc = new CRC32C();
            for (Map.Entry<String, MemorySegment> e : chunk) {
                long offset = Bucket.align(position);
                ByteBuffer buffer = byteBuffer(e.getValue());
                crc.reset();
                crc.update(buffer.duplicate());
                int length = buffer.remaining();
                long at = offset;
                while (buffer.hasRemaining()) {
                    at += ch.write(buffer, at);
                }
                puts.put(e.getKey(), new Location(id, offset, length, (int) crc.getValue(),
                        stamps.getOrDefault(e.getKey(), ObjectStamp.NONE)));
                position = offset + length;
            }
            ch.force(true);
            if (position != fileBytes) {
                throw new IllegalStateException("bucket " + id + " holds " + position + " bytes, planned " + fileBytes);
            }
        }
        return new Bucket(id, file, fileBytes, accessClock.incrementAndGet(), config.directIo(), fallbackListener);
    }

    private static ByteBuffer byteBuffer(MemorySegment value) {
        try {
            return value.asByteBuffer();
        } catch (UnsupportedOperationException e) {
            return ByteBuffer.wrap(value.toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /**
     * Evicts buckets if the batch would take the files above the high watermark of what they may take now ({@link
     * DiskRoom}: the capacity, or less on a disk that has less room); under the write lock.
     */
    private void makeRoom(long needed, int objects) {
        long limit = room.limit(diskBytes.get());
        if (needed > limit) {
            // Evicting everything would not help: fail before evicting anything.
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "a batch of " + objects + " objects needs " + needed
                    + " bytes on disk, more than the storage can take (" + limit + " bytes: its capacity of "
                    + room.capacity() + " bytes, or the bucket files plus the disk's free space less a reserve); nothing"
                    + " of the batch was stored and nothing was evicted (raise storage capacity, free disk space or"
                    + " write smaller batches)");
        }
        long high = (long) (limit * config.highWatermark());
        if (diskBytes.get() + needed > high) {
            evictDownTo((long) (limit * config.lowWatermark()) - needed);
        }
        if (diskBytes.get() + needed > limit) {
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "a batch of " + objects + " objects needs " + needed
                    + " bytes but the bucket files already use " + diskBytes.get() + " of the " + limit + " bytes the"
                    + " storage can take and nothing more can be evicted; nothing of the batch was stored "
                    + "(raise storage capacity, write smaller batches or remove objects)");
        }
    }

    private void evictDownTo(long target) {
        List<Bucket> order = new ArrayList<>(buckets.values());
        order.sort(config.eviction().order());
        List<Bucket> victims = new ArrayList<>();
        long projected = diskBytes.get();
        for (Bucket b : order) {
            if (projected <= target) {
                break;
            }
            victims.add(b);
            projected -= b.fileBytes();
        }
        if (victims.isEmpty()) {
            return;
        }
        List<String> keys = new ArrayList<>();
        victims.forEach(b -> keys.addAll(b.keys()));
        List<String> evicting = List.copyOf(keys);
        try {
            listener.evicting(evicting);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Storage listener failed on eviction of " + evicting.size() + " keys; evicting "
                    + "anyway", e);
        }
        index.write(Map.of(), evicting);
        for (String key : evicting) {
            Location loc = locations.remove(key);
            if (loc != null) {
                usedBytes.addAndGet(-loc.length());
            }
        }
        victims.forEach(this::retire);
        evictedObjects.add(evicting.size());
        LOG.log(Level.DEBUG, "Evicted {0} buckets ({1} objects) by {2}", victims.size(), evicting.size(),
                config.eviction());
    }

    /** Detaches {@code key}'s old location from its bucket; under the write lock. */
    private void forget(String key, Location old) {
        Bucket b = buckets.get(old.bucketId());
        if (b != null && b.removeKey(key, old.length())) {
            retire(b);
        }
        usedBytes.addAndGet(-old.length());
    }

    private void retire(Bucket b) {
        if (buckets.remove(b.id(), b)) {
            diskBytes.addAndGet(-b.fileBytes());
            b.retire();
        }
    }

    // ---------------------------------------------------------------- removals

    @Override
    public boolean remove(String key) {
        return !removeAll(List.of(key)).isEmpty();
    }

    @Override
    public List<String> removeAll(List<String> keys) {
        ensureOpen();
        keys.forEach(BucketStorageBackend::checkKey);
        writeLock.lock();
        try {
            ensureOpen();
            List<String> present = keys.stream().distinct().filter(locations::containsKey).toList();
            if (present.isEmpty()) {
                return List.of();
            }
            index.write(Map.of(), present);
            for (String key : present) {
                Location old = locations.remove(key);
                forget(key, old);
            }
            return present;
        } finally {
            writeLock.unlock();
        }
    }

    // ---------------------------------------------------------------- reads

    @Override
    public OptionalLong size(String key) {
        ensureOpen();
        checkKey(key);
        Location loc = locations.get(key);
        return loc == null ? OptionalLong.empty() : OptionalLong.of(loc.length());
    }

    @Override
    public long read(String key, MemorySegment destination) {
        ensureOpen();
        checkKey(key);
        Objects.requireNonNull(destination, "destination");
        for (int attempt = 0; attempt < 8; attempt++) {
            Location loc = locations.get(key);
            if (loc == null) {
                return -1;
            }
            if (destination.byteSize() < loc.length()) {
                throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, "destination of " + destination.byteSize()
                        + " bytes is too small for object \"" + key + "\" of " + loc.length()
                        + " bytes (expected: at least size(key) bytes)");
            }
            Bucket bucket = buckets.get(loc.bucketId());
            if (bucket == null || !bucket.acquire()) {
                if (locations.get(key) == loc) {
                    return -1;
                }
                continue; // overwritten meanwhile: read the new location
            }
            try {
                long n = bucket.read(loc.offset(), loc.length(), destination, alignment);
                if (n == loc.length() && crc(destination, loc.length()) == loc.crc()) {
                    bucket.touch(accessClock.incrementAndGet());
                    return loc.length();
                }
                destination.asSlice(0, loc.length()).fill((byte) 0);
                lost(key, loc, n < loc.length() ? "the bucket file ends before it" : "its bytes fail their CRC32C");
                return -1;
            } catch (IOException e) {
                throw new TiffinException(ErrorCode.FILE_READ_FAIL, "reading \"" + key + "\" from " + bucket.file()
                        + " failed (" + e + "); the object stays stored, retry or check the disk", e);
            } finally {
                bucket.release();
            }
        }
        return -1;
    }

    /**
     * Reads in bucket and offset order; objects lying next to each other in one bucket (up to {@value
     * #MAX_RUN_BYTES} bytes together) are read with one I/O into a per-call scratch buffer and then
     * checked and copied one by one, so a batch offloaded together loads with a few large reads.
     */
    @Override
    public long[] readBatch(List<String> keys, List<MemorySegment> destinations) {
        ensureOpen();
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(destinations, "destinations");
        if (keys.size() != destinations.size()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "readBatch: keys.size() = " + keys.size()
                    + " but destinations.size() = " + destinations.size() + " (expected: one destination per key)");
        }
        Integer[] order = new Integer[keys.size()];
        Location[] seen = new Location[keys.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
            checkKey(keys.get(i));
            seen[i] = locations.get(keys.get(i));
        }
        Arrays.sort(order, Comparator
                .comparingLong((Integer i) -> seen[i] == null ? Long.MAX_VALUE : seen[i].bucketId())
                .thenComparingLong(i -> seen[i] == null ? 0 : seen[i].offset()));
        long[] result = new long[keys.size()];
        int i = 0;
        while (i < order.length) {
            Location first = seen[order[i]];
            int j = i + 1;
            if (first != null) {
                long end = first.offset() + first.length();
                while (j < order.length) {
                    Location next = seen[order[j]];
                    if (next == null || next.bucketId() != first.bucketId() || next.offset() < end
                            || next.offset() > Bucket.align(end)
                            || next.offset() + next.length() - first.offset() > MAX_RUN_BYTES) {
                        break;
                    }
                    end = next.offset() + next.length();
                    j++;
                }
            }
            if (j - i == 1 || !readRun(keys, destinations, order, i, j, seen, result)) {
                for (int k = i; k < j; k++) {
                    result[order[k]] = read(keys.get(order[k]), destinations.get(order[k]));
                }
            }
            i = j;
        }
        return result;
    }

    /** Reads {@code order[from, to)}, adjacent in one bucket, with one I/O; false if it cannot (then read one by one). */
    private boolean readRun(List<String> keys, List<MemorySegment> destinations, Integer[] order, int from, int to,
            Location[] seen, long[] result) {
        Location first = seen[order[from]];
        Location last = seen[order[to - 1]];
        for (int k = from; k < to; k++) {
            if (destinations.get(order[k]).byteSize() < seen[order[k]].length()) {
                return false; // let read() report BUFFER_OVERFLOW at the right element
            }
        }
        Bucket bucket = buckets.get(first.bucketId());
        if (bucket == null || !bucket.acquire()) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            long span = Bucket.align(last.offset() + last.length() - first.offset());
            MemorySegment scratch = arena.allocate(span, Math.max(alignment, Bucket.ALIGN));
            long got = bucket.read(first.offset(), (int) span, scratch, alignment);
            for (int k = from; k < to; k++) {
                int index = order[k];
                Location loc = seen[index];
                long at = loc.offset() - first.offset();
                if (at + loc.length() <= got && crc(scratch.asSlice(at), loc.length()) == loc.crc()) {
                    MemorySegment.copy(scratch, at, destinations.get(index), 0, loc.length());
                    result[index] = loc.length();
                } else {
                    lost(keys.get(index), loc, at + loc.length() > got ? "the bucket file ends before it"
                            : "its bytes fail their CRC32C");
                    result[index] = -1;
                }
            }
            bucket.touch(accessClock.incrementAndGet());
            return true;
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.FILE_READ_FAIL, "reading " + (to - from) + " objects from "
                    + bucket.file() + " failed (" + e + "); the objects stay stored, retry or check the disk", e);
        } finally {
            bucket.release();
        }
    }

    private static int crc(MemorySegment segment, int length) {
        CRC32C crc = new CRC32C();
        crc.update(segment.asSlice(0, length).asByteBuffer());
        return (int) crc.getValue();
    }

    private void lost(String key, Location loc, String why) {
        corruptReads.increment();
        LOG.log(Level.WARNING, "Object \"{0}\" in {1} is corrupt: {2}; dropping it", key, loc, why);
        writeLock.lock();
        try {
            if (closed || !locations.remove(key, loc)) {
                return;
            }
            try {
                index.write(Map.of(), List.of(key));
            } catch (TiffinException e) {
                LOG.log(Level.WARNING, "Cannot drop corrupt \"" + key + "\" from the index; it is checked again "
                        + "when read", e);
            }
            forget(key, loc);
        } finally {
            writeLock.unlock();
        }
        try {
            listener.lost(List.of(key));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Storage listener failed on lost key " + key, e);
        }
    }

    private void directIoFailed(Bucket bucket, IOException cause) {
        directIoFallbacks.increment();
        LOG.log(Level.WARNING, "O_DIRECT cannot read " + bucket.file() + " (" + cause + "); reading this file "
                + "with buffered I/O from now on");
    }

    // ---------------------------------------------------------------- stamps

    @Override
    public boolean keepsStamps() {
        return true;
    }

    /** Rewrites the key's index entry (synced) with the new deadline; the bytes stay where they are. */
    @Override
    public boolean restamp(String key, long version, long expireAtMs) {
        ensureOpen();
        checkKey(key);
        if (version <= 0 || expireAtMs < 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "restamp of \"" + key + "\" with version " + version
                    + " and deadline " + expireAtMs + " (expected: a version > 0 and a deadline >= 0)");
        }
        writeLock.lock();
        try {
            ensureOpen();
            Location loc = locations.get(key);
            if (loc == null || loc.stamp().version() != version) {
                return false;
            }
            if (loc.stamp().expireAtMs() != expireAtMs) {
                Location stamped = loc.withStamp(loc.stamp().withExpireAtMs(expireAtMs));
                index.write(Map.of(key, stamped), List.of());
                locations.put(key, stamped);
            }
            return true;
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public ObjectStamp stamp(String key) {
        ensureOpen();
        checkKey(key);
        Location loc = locations.get(key);
        return loc == null ? null : loc.stamp();
    }

    // ---------------------------------------------------------------- the rest

    @Override
    public void scan(BiConsumer<String, Long> visitor) {
        scanStamped((key, size, stamp) -> visitor.accept(key, size));
    }

    @Override
    public void scanStamped(StampedVisitor visitor) {
        ensureOpen();
        for (Map.Entry<String, Location> e : locations.entrySet()) {
            Location loc = e.getValue();
            visitor.visit(e.getKey(), loc.length(), loc.stamp());
        }
    }

    @Override
    public long usedBytes() {
        return usedBytes.get();
    }

    @Override
    public long capacityBytes() {
        return room.capacity();
    }

    @Override
    public void listener(StorageListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    @Override
    public StorageStats stats() {
        return new StorageStats(locations.size(), usedBytes.get(), diskBytes.get(), room.capacity(),
                corruptReads.sum(), directIoFallbacks.sum(), evictedObjects.sum());
    }

    /** The O_DIRECT alignment in use (the file system's block size). */
    public int alignment() {
        return alignment;
    }

    /** The configuration this backend was opened with. */
    public BucketStorageConfig config() {
        return config;
    }

    @Override
    public void close() {
        writeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            buckets.values().forEach(Bucket::detach);
            buckets.clear();
            locations.clear();
            index.close();
        } finally {
            writeLock.unlock();
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "bucket storage " + config.path()
                    + " is closed (expected: calls before close(); open a new backend)");
        }
    }

    private static void checkKey(String key) {
        if (key == null || key.isEmpty()) {
            throw new TiffinException(ErrorCode.INVALID_KEY,
                    "key = " + (key == null ? "null" : "\"\"") + " (expected: a non-empty string)");
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "Cannot delete " + file + " after a failed write (" + e + "); it is removed at "
                    + "the next start");
        }
    }
}
