package io.tiffin.plugin.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * What a restart finds in a bucket storage directory, made consistent: index entries whose bucket file
 * is missing or too short are dropped from the index, bucket files no entry points to are deleted, and
 * the rest is handed to the backend ({@link Recovered}).
 *
 * Also the two facts about the disk that opening needs ({@link #blockSize}, {@link #bucketFileBytes}).
 *
 * <p>Not thread-safe: {@link BucketStorageBackend#open} runs it once, before the backend serves.
 */
final class BucketRecovery {
    private static final System.Logger LOG = System.getLogger(BucketStorageBackend.class.getName());

    private BucketRecovery() {
    }

    /**
     * The objects and buckets that survived a restart.
     *
     * @param locations each readable key's location
     * @param buckets the buckets they lie in, by id, each with its keys added
     * @param nextBucketId the id for the next bucket file: above every file found, kept or deleted
     */
    record Recovered(Map<String, Location> locations, Map<Long, Bucket> buckets, long nextBucketId) {
    }

    /**
     * Checks {@code index} against the files in {@code bucketsDir} and cleans up both.
     *
     * @param storagePath the storage path, for log messages
     * @param createdTick the access clock: one tick per bucket opened, oldest id first
     * @param directIo whether the buckets read with O_DIRECT
     * @param fallback told when a bucket's O_DIRECT read fails
     * @throws TiffinException {@code FILE_OPEN_FAIL} if the bucket files cannot be listed
     */
    static Recovered recover(Path storagePath, Path bucketsDir, BucketIndex index, LongSupplier createdTick,
            boolean directIo, Bucket.DirectIoListener fallback) {
        Map<Long, Long> files = new HashMap<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(bucketsDir)) {
            for (Path p : dir) {
                long id = Bucket.idOf(p.getFileName().toString());
                if (id >= 0) {
                    files.put(id, Files.size(p));
                }
            }
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "cannot list bucket files in " + bucketsDir + " ("
                    + e + "); check the directory's permissions", e);
        }
        Map<String, Location> valid = new HashMap<>();
        List<String> dropped = new ArrayList<>();
        index.forEach((key, loc) -> {
            Long fileBytes = loc == null ? null : files.get(loc.bucketId());
            if (fileBytes == null || loc.offset() + loc.length() > fileBytes) {
                dropped.add(key);
            } else {
                valid.put(key, loc);
            }
        });
        if (!dropped.isEmpty()) {
            index.write(Map.of(), dropped);
            LOG.log(Level.WARNING, "Dropped {0} index entries of {1} whose bucket file is missing or too short",
                    dropped.size(), storagePath);
        }
        TreeMap<Long, Bucket> live = new TreeMap<>();
        for (long id : valid.values().stream().mapToLong(Location::bucketId).sorted().distinct().toArray()) {
            live.put(id, new Bucket(id, bucketsDir.resolve(Bucket.fileName(id)), files.get(id),
                    createdTick.getAsLong(), directIo, fallback));
        }
        int orphans = 0;
        for (Map.Entry<Long, Long> f : files.entrySet()) {
            if (!live.containsKey(f.getKey())) {
                try {
                    Files.deleteIfExists(bucketsDir.resolve(Bucket.fileName(f.getKey())));
                    orphans++;
                } catch (IOException e) {
                    LOG.log(Level.WARNING, "Cannot delete orphan bucket file {0}: {1}", f.getKey(), e);
                }
            }
        }
        if (orphans > 0) {
            LOG.log(Level.WARNING, "Deleted {0} bucket files of {1} that no index entry points to", orphans,
                    storagePath);
        }
        valid.forEach((key, loc) -> live.get(loc.bucketId()).addKey(key, loc.length()));
        long nextBucketId = files.keySet().stream().mapToLong(Long::longValue).max().orElse(0) + 1;
        return new Recovered(valid, live, nextBucketId);
    }

    /** The block size of {@code store} for O_DIRECT alignment, or {@link Bucket#ALIGN} if it gives none that fits. */
    static int blockSize(FileStore store) {
        try {
            long b = store.getBlockSize();
            if (b >= 512 && b <= (1 << 20) && Long.bitCount(b) == 1) {
                return (int) b;
            }
        } catch (IOException | UnsupportedOperationException e) {
            // Fall through to the common block size.
        }
        return Bucket.ALIGN;
    }

    /** Bytes of the bucket files already in {@code bucketsDir}. */
    static long bucketFileBytes(Path bucketsDir) throws IOException {
        long total = 0;
        try (var files = Files.list(bucketsDir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f)) {
                    total += Files.size(f);
                }
            }
        }
        return total;
    }
}
