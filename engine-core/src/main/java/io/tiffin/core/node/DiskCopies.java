package io.tiffin.core.node;

import io.tiffin.api.spi.storage.ObjectStamp;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * What a node knows of the objects of its SSD copies: their versions and expiry deadlines, reported with the copies
 * (so a master that takes over keeps them) and checked before a copy is deleted (so a later put's copy stays).
 *
 * <p>With a backend that {@linkplain StorageBackend#keepsStamps() keeps stamps}, the backend holds both on disk with
 * each copy (so they survive a restart of the node) and this class keeps nothing per copy: new deadlines are written
 * into the stamps ({@link StorageBackend#restamp}). With one that does not, it keeps them in memory for the copies
 * this process wrote; copies of an earlier run report neither.
 *
 * <p>Thread-safe. Stamp writes run on the tier's I/O pool, one batch after the other in the order they were asked
 * for, so a deadline that moved twice is never left at its earlier value.
 */
final class DiskCopies {
    private final StorageBackend backend;
    private final boolean onDisk;
    /** Without stamps on disk: this process's copies, by key. Null with them. */
    private final ConcurrentHashMap<String, DiskObject> inMemory;
    private final Executor io;
    /** Throttles the warning of failed stamp writes. */
    private final FailedDiskChanges stampFailures;
    private final Ticker ticker;
    /** The last stamp write asked for; the next runs after it. Guarded by this. */
    private CompletableFuture<FailedDiskChanges.Batch> stampWrites = CompletableFuture.completedFuture(
            FailedDiskChanges.Batch.NONE);

    /**
     * Keeps track of {@code backend}'s copies; {@code io} writes their stamps (never the caller's thread), and failed
     * writes are logged through {@code stampFailures} (at {@code ticker}'s time).
     */
    DiskCopies(StorageBackend backend, Executor io, FailedDiskChanges stampFailures, Ticker ticker) {
        this.backend = backend;
        this.onDisk = backend.keepsStamps();
        this.inMemory = onDisk ? null : new ConcurrentHashMap<>();
        this.io = io;
        this.stampFailures = stampFailures;
        this.ticker = ticker;
    }

    /** A copy the offload worker wrote, with its task's version and deadline (already in its stamp, if kept). */
    void written(DiskObject copy) {
        if (!onDisk) {
            inMemory.put(copy.getKey(), copy);
        }
    }

    /** Copies that are gone (evicted, deleted). */
    void gone(Collection<String> keys) {
        if (!onDisk) {
            inMemory.keySet().removeAll(keys);
        }
    }

    /** What to report of a copy that the backend's scan found, {@code size} bytes with {@code stamp}. */
    DiskObject report(String key, long size, ObjectStamp stamp) {
        if (!onDisk) {
            DiskObject known = inMemory.get(key);
            if (known != null && known.getSize() == size) {
                return known;
            }
        }
        return DiskObject.newBuilder().setKey(key).setSize(size).setVersion(stamp.version())
                .setExpireAtMs(stamp.expireAtMs()).build();
    }

    /** The version of the object of {@code key}'s copy: &gt; 0, 0 when unknown, -1 when no copy is known. */
    long version(String key) {
        if (onDisk) {
            ObjectStamp stamp = backend.stamp(key);
            return stamp == null ? -1 : stamp.version();
        }
        DiskObject known = inMemory.get(key);
        return known == null ? -1 : known.getVersion();
    }

    /**
     * The objects of the copies of {@code keys} have new expiry deadlines ({@code deadlines}, 0 = none), if their
     * copies are of {@code versions} (0 = whichever version the copy is of); the three lists are parallel. Never
     * blocks.
     *
     * @return completes once the deadlines are in the copies' stamps (at once without stamps on disk), with the
     *     copies whose stamps the backend failed to write (logged; each keeps its old deadline on disk)
     */
    CompletableFuture<FailedDiskChanges.Batch> setDeadlines(List<String> keys, List<Long> versions,
                                                            List<Long> deadlines) {
        if (!onDisk) {
            for (int i = 0; i < keys.size(); i++) {
                long version = versions.get(i);
                long deadline = Math.max(0, deadlines.get(i));
                inMemory.computeIfPresent(keys.get(i), (k, o) -> (version == 0 || o.getVersion() == version)
                        && o.getExpireAtMs() != deadline ? o.toBuilder().setExpireAtMs(deadline).build() : o);
            }
            return CompletableFuture.completedFuture(FailedDiskChanges.Batch.NONE);
        }
        List<String> ks = List.copyOf(keys);
        List<Long> vs = List.copyOf(versions);
        List<Long> ds = List.copyOf(deadlines);
        synchronized (this) {
            stampWrites = stampWrites.handle((done, failed) -> null).thenApplyAsync(v -> restamp(ks, vs, ds), io);
            return stampWrites;
        }
    }

    /** Writes the deadlines into the stamps; returns the copies whose stamps the backend failed to write. */
    private FailedDiskChanges.Batch restamp(List<String> keys, List<Long> versions, List<Long> deadlines) {
        List<String> failed = new ArrayList<>();
        List<Long> failedVersions = new ArrayList<>();
        RuntimeException cause = null;
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            try {
                long version = versions.get(i);
                if (version == 0) {
                    ObjectStamp now = backend.stamp(key);
                    version = now == null ? 0 : now.version();
                }
                if (version > 0) {
                    backend.restamp(key, version, Math.max(0, deadlines.get(i))); // another version's copy stays
                }
            } catch (RuntimeException e) {
                cause = cause == null ? e : cause;
                failed.add(key);
                failedVersions.add(versions.get(i));
            }
        }
        if (cause == null) {
            return FailedDiskChanges.Batch.NONE;
        }
        stampFailures.warn(failed.size(), cause, ticker.nanos());
        return new FailedDiskChanges.Batch(failed, failedVersions);
    }
}
