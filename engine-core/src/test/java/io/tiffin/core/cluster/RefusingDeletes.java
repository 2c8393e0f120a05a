package io.tiffin.core.cluster;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.ObjectStamp;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * A storage backend factory around a real one (the bucket backend) whose backends fail every removal while {@link
 * #refuse} is set, and every new deadline of a stamp while {@link #refuseStamps} is, as a disk that refuses the
 * journal entry (full, or remounted read-only after an error) does, and hold every write while {@link #stallWrites}
 * is, as a disk that stalls, and start every scan {@link #delayScans late} (a large disk's scan); everything else
 * reaches the real backend. A test's stand-in for a disk fault it cannot
 * cause.
 *
 * <p>Thread-safe.
 */
final class RefusingDeletes implements StorageBackendFactory {
    private final StorageBackendFactory real;
    private final AtomicBoolean refusing = new AtomicBoolean();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicBoolean refusingStamps = new AtomicBoolean();
    /** Open (count 0) unless writes are stalled. */
    private volatile CountDownLatch writeGate = new CountDownLatch(0);
    private final AtomicInteger stalled = new AtomicInteger();
    private volatile long scanDelayMillis;

    RefusingDeletes(StorageBackendFactory real) {
        this.real = real;
    }

    /** Whether removals fail from now on. */
    void refuse(boolean on) {
        refusing.set(on);
    }

    /** Whether new deadlines of stamps ({@code restamp}) fail from now on. */
    void refuseStamps(boolean on) {
        refusingStamps.set(on);
    }

    /** Whether writes wait from now on (at most 30 s each); {@code false} lets the waiting ones through. */
    void stallWrites(boolean on) {
        if (on) {
            writeGate = new CountDownLatch(1);
        } else {
            writeGate.countDown();
        }
    }

    /** How long each scan waits before it starts, from now on. */
    void delayScans(java.time.Duration delay) {
        scanDelayMillis = delay.toMillis();
    }

    private void scanDelay() {
        try {
            Thread.sleep(scanDelayMillis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.FILE_READ_FAIL, "interrupted before a scan", e);
        }
    }

    /** How many writes are waiting now. */
    int stalledWrites() {
        return stalled.get();
    }

    private void passGate() {
        stalled.incrementAndGet();
        try {
            if (!writeGate.await(30, TimeUnit.SECONDS)) {
                throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "the disk stalled for 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "interrupted while the disk stalled", e);
        } finally {
            stalled.decrementAndGet();
        }
    }

    /** How many removals failed so far. */
    int refused() {
        return refused.get();
    }

    @Override
    public String name() {
        return "refusing-deletes";
    }

    @Override
    public StorageBackend create(PluginContext context) {
        StorageBackend b = real.create(context);
        return new StorageBackend() {
            private void check() {
                if (refusing.get()) {
                    refused.incrementAndGet();
                    throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "the removal's index entry: No space left"
                            + " on device");
                }
            }

            @Override
            public boolean remove(String key) {
                check();
                return b.remove(key);
            }

            @Override
            public List<String> removeAll(List<String> keys) {
                check();
                return b.removeAll(keys);
            }

            @Override
            public void writeBatch(Map<String, MemorySegment> objects) {
                passGate();
                b.writeBatch(objects);
            }

            @Override
            public void writeBatch(Map<String, MemorySegment> objects, Map<String, ObjectStamp> stamps) {
                passGate();
                b.writeBatch(objects, stamps);
            }

            @Override
            public boolean keepsStamps() {
                return b.keepsStamps();
            }

            @Override
            public boolean restamp(String key, long version, long expireAtMs) {
                if (refusingStamps.get()) {
                    throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "the stamp's index entry: No space left on"
                            + " device");
                }
                return b.restamp(key, version, expireAtMs);
            }

            @Override
            public ObjectStamp stamp(String key) {
                return b.stamp(key);
            }

            @Override
            public OptionalLong size(String key) {
                return b.size(key);
            }

            @Override
            public long read(String key, MemorySegment destination) {
                return b.read(key, destination);
            }

            @Override
            public long[] readBatch(List<String> keys, List<MemorySegment> destinations) {
                return b.readBatch(keys, destinations);
            }

            @Override
            public void scan(BiConsumer<String, Long> visitor) {
                scanDelay();
                b.scan(visitor);
            }

            @Override
            public void scanStamped(StampedVisitor visitor) {
                scanDelay();
                b.scanStamped(visitor);
            }

            @Override
            public long usedBytes() {
                return b.usedBytes();
            }

            @Override
            public long capacityBytes() {
                return b.capacityBytes();
            }

            @Override
            public void listener(StorageListener listener) {
                b.listener(listener);
            }

            @Override
            public StorageStats stats() {
                return b.stats();
            }

            @Override
            public void close() {
                b.close();
            }
        };
    }
}
