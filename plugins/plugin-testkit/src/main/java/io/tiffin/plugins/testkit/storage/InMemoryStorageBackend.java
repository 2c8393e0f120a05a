package io.tiffin.plugins.testkit.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;

/**
 * The reference {@link StorageBackend}: objects live as byte arrays in a map the caller supplies, which
 * plays the role of the disk (pass the same map to a new instance to "restart"). It never evicts: a write
 * that would take the stored bytes above the capacity fails with {@code FILE_WRITE_FAIL}. It stores no
 * checksums, so {@link StorageStats#corruptReads()} stays 0.
 *
 * <p><b>Threads</b>: thread-safe. Each stored array is immutable once put, so a read copies one whole
 * version; writes and removals are serialised by a lock, so capacity checks are exact; reads take no
 * lock.
 *
 * <p><b>Ownership</b>: owns no native handles or off-heap memory; the storage map stays the caller's and
 * outlives {@link #close()}, which only stops this instance from serving calls.
 */
public final class InMemoryStorageBackend implements StorageBackend {
    private final ConcurrentMap<String, byte[]> storage;
    private final long capacityBytes;
    private final Object writeLock = new Object();
    private volatile StorageListener listener = StorageListener.NONE;
    private volatile boolean closed;

    /**
     * @param storage the objects, shared with earlier and later instances over the same "disk"
     * @param capacityBytes the most bytes the objects may take together (> 0)
     */
    public InMemoryStorageBackend(ConcurrentMap<String, byte[]> storage, long capacityBytes) {
        this.storage = Objects.requireNonNull(storage, "storage");
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("capacityBytes = " + capacityBytes + " (expected: > 0)");
        }
        this.capacityBytes = capacityBytes;
    }

    @Override
    public void writeBatch(Map<String, MemorySegment> objects) {
        ensureOpen();
        Objects.requireNonNull(objects, "objects");
        Map<String, byte[]> copies = new LinkedHashMap<>();
        long added = 0;
        for (Map.Entry<String, MemorySegment> e : objects.entrySet()) {
            checkKey(e.getKey());
            MemorySegment value = Objects.requireNonNull(e.getValue(), () -> "object of key " + e.getKey());
            if (value.byteSize() == 0) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "object of key \"" + e.getKey()
                        + "\" has 0 bytes (expected: at least 1 byte; do not store empty objects)");
            }
            copies.put(e.getKey(), value.toArray(ValueLayout.JAVA_BYTE));
            added += value.byteSize();
        }
        synchronized (writeLock) {
            long freed = 0;
            for (String key : copies.keySet()) {
                byte[] old = storage.get(key);
                freed += old == null ? 0 : old.length;
            }
            long after = usedBytes() - freed + added;
            if (after > capacityBytes) {
                throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "writing " + copies.size() + " objects ("
                        + added + " bytes) would use " + after + " bytes, above the capacity of " + capacityBytes
                        + " bytes; nothing of the batch was stored (remove objects or raise the capacity)");
            }
            storage.putAll(copies);
        }
    }

    @Override
    public OptionalLong size(String key) {
        ensureOpen();
        checkKey(key);
        byte[] value = storage.get(key);
        return value == null ? OptionalLong.empty() : OptionalLong.of(value.length);
    }

    @Override
    public long read(String key, MemorySegment destination) {
        ensureOpen();
        checkKey(key);
        Objects.requireNonNull(destination, "destination");
        byte[] value = storage.get(key);
        if (value == null) {
            return -1;
        }
        if (destination.byteSize() < value.length) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, "destination of " + destination.byteSize()
                    + " bytes is too small for object \"" + key + "\" of " + value.length
                    + " bytes (expected: at least size(key) bytes)");
        }
        MemorySegment.copy(value, 0, destination, ValueLayout.JAVA_BYTE, 0, value.length);
        return value.length;
    }

    @Override
    public boolean remove(String key) {
        ensureOpen();
        checkKey(key);
        synchronized (writeLock) {
            return storage.remove(key) != null;
        }
    }

    @Override
    public void scan(BiConsumer<String, Long> visitor) {
        ensureOpen();
        List<Map.Entry<String, byte[]>> snapshot = new ArrayList<>(storage.entrySet());
        for (Map.Entry<String, byte[]> e : snapshot) {
            visitor.accept(e.getKey(), (long) e.getValue().length);
        }
    }

    @Override
    public long usedBytes() {
        long sum = 0;
        for (byte[] v : storage.values()) {
            sum += v.length;
        }
        return sum;
    }

    @Override
    public long capacityBytes() {
        return capacityBytes;
    }

    @Override
    public void listener(StorageListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** The listener set last; this backend never calls it, as it neither evicts nor finds corruption. */
    public StorageListener listener() {
        return listener;
    }

    @Override
    public StorageStats stats() {
        long used = usedBytes();
        return new StorageStats(storage.size(), used, used, capacityBytes, 0, 0, 0);
    }

    @Override
    public void close() {
        closed = true;
    }

    private void ensureOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS,
                    "the in-memory storage backend is closed (expected: calls before close())");
        }
    }

    static void checkKey(String key) {
        if (key == null || key.isEmpty()) {
            throw new TiffinException(ErrorCode.INVALID_KEY,
                    "key = " + (key == null ? "null" : "\"\"") + " (expected: a non-empty string)");
        }
    }
}
