package io.tiffin.plugin.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collection;
import java.util.Map;
import java.util.function.BiConsumer;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The RocksDB index of a bucket backend: key (UTF-8) → {@link Location}. Every change is one
 * {@link WriteBatch} written with {@code sync=true}, so it is durable when the call returns.
 *
 * <p><b>Threads</b>: thread-safe (RocksDB is); the backend serialises changes anyway.
 *
 * <p><b>Ownership</b>: owns the {@link RocksDB}, {@link Options} and {@link WriteOptions} native handles;
 * {@link #close()} releases them once. No call may run concurrently with or after {@link #close()}.
 */
final class BucketIndex implements AutoCloseable {
    private final Path dir;
    private final Options options;
    private final WriteOptions syncWrites;
    private final RocksDB db;
    private boolean closed;

    private BucketIndex(Path dir, Options options, WriteOptions syncWrites, RocksDB db) {
        this.dir = dir;
        this.options = options;
        this.syncWrites = syncWrites;
        this.db = db;
    }

    /**
     * Opens or creates the index in {@code dir}.
     *
     * @throws TiffinException {@link ErrorCode#FILE_LOCK_FAIL} if another backend holds the directory,
     *     {@link ErrorCode#FILE_OPEN_FAIL} for any other failure
     */
    static BucketIndex open(Path dir) {
        RocksDB.loadLibrary();
        Options options = new Options().setCreateIfMissing(true).setKeepLogFileNum(2);
        WriteOptions sync = new WriteOptions().setSync(true);
        try {
            return new BucketIndex(dir, options, sync, RocksDB.open(options, dir.toString()));
        } catch (RocksDBException e) {
            sync.close();
            options.close();
            String msg = String.valueOf(e.getMessage());
            if (msg.contains("lock")) {
                throw new TiffinException(ErrorCode.FILE_LOCK_FAIL, "bucket index " + dir + " is in use by another "
                        + "backend or process (" + msg + "); give each backend its own storage path", e);
            }
            throw new TiffinException(ErrorCode.FILE_OPEN_FAIL, "cannot open bucket index " + dir + " (" + msg
                    + "); check the path, its permissions and free space", e);
        }
    }

    /** Calls {@code visitor} for every entry; a value that does not decode is passed as null. */
    void forEach(BiConsumer<String, Location> visitor) {
        try (RocksIterator it = db.newIterator()) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                visitor.accept(new String(it.key(), StandardCharsets.UTF_8), Location.decode(it.value()));
            }
            it.status();
        } catch (RocksDBException e) {
            throw new TiffinException(ErrorCode.FILE_READ_FAIL, "cannot read bucket index " + dir + " ("
                    + e.getMessage() + "); the index may be damaged: move the storage path away to start empty", e);
        }
    }

    /** Puts {@code puts} and deletes {@code deletes} in one synced batch. */
    void write(Map<String, Location> puts, Collection<String> deletes) {
        try (WriteBatch batch = new WriteBatch()) {
            for (String key : deletes) {
                batch.delete(key.getBytes(StandardCharsets.UTF_8));
            }
            for (Map.Entry<String, Location> e : puts.entrySet()) {
                batch.put(e.getKey().getBytes(StandardCharsets.UTF_8), e.getValue().encode());
            }
            db.write(syncWrites, batch);
        } catch (RocksDBException e) {
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "cannot update bucket index " + dir + " ("
                    + e.getMessage() + "); check free disk space", e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        db.close();
        syncWrites.close();
        options.close();
    }
}
