package io.tiffin.plugin.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The RocksDB index of a bucket backend: key (UTF-8) → {@link Location} ({@link Location#encode()}), and for an object
 * with a stamp, a second entry under the key's stamp key (a 0xFF byte, which no UTF-8 string holds, then the key) →
 * the stamp ({@link Location#encodeStamp()}). A build that predates stamps reads the first kind as before and drops
 * the second as malformed, keeping the objects. Every change is one {@link WriteBatch} written with {@code sync=true},
 * so it is durable when the call returns; an object's entry and its stamp change together.
 *
 * <p><b>Threads</b>: thread-safe (RocksDB is); the backend serialises changes anyway.
 *
 * <p><b>Ownership</b>: owns the {@link RocksDB}, {@link Options} and {@link WriteOptions} native handles;
 * {@link #close()} releases them once. No call may run concurrently with or after {@link #close()}.
 */
final class BucketIndex implements AutoCloseable {
    /** The first byte of a stamp key: 0xFF begins no UTF-8 string, so no object key. */
    private static final byte STAMP_PREFIX = (byte) 0xFF;

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

    /**
     * Calls {@code visitor} for every object entry, in key order, with its stamp (a value that does not decode is
     * passed as null). Object entries and stamp entries are both in key order (a stamp key is its object's key behind
     * one byte), so the two are read side by side, holding nothing per entry. Stamps whose object has no entry (left
     * by a build that does not know stamps) are deleted.
     */
    void forEach(BiConsumer<String, Location> visitor) {
        List<byte[]> orphans = new ArrayList<>();
        try (RocksIterator objects = db.newIterator(); RocksIterator stamps = db.newIterator()) {
            stamps.seek(new byte[] {STAMP_PREFIX});
            for (objects.seekToFirst(); objects.isValid() && !isStampKey(objects.key()); objects.next()) {
                byte[] key = objects.key();
                byte[] stamp = null;
                while (stamps.isValid()) {
                    byte[] s = stamps.key();
                    int order = Arrays.compareUnsigned(s, 1, s.length, key, 0, key.length);
                    if (order > 0) {
                        break;
                    }
                    if (order == 0) {
                        stamp = stamps.value();
                    } else {
                        orphans.add(s);
                    }
                    stamps.next();
                }
                Location loc = Location.decode(objects.value());
                visitor.accept(new String(key, StandardCharsets.UTF_8), loc == null ? null : loc.withStampEntry(stamp));
            }
            for (; stamps.isValid(); stamps.next()) {
                orphans.add(stamps.key());
            }
            objects.status();
            stamps.status();
        } catch (RocksDBException e) {
            throw new TiffinException(ErrorCode.FILE_READ_FAIL, "cannot read bucket index " + dir + " ("
                    + e.getMessage() + "); the index may be damaged: move the storage path away to start empty", e);
        }
        if (!orphans.isEmpty()) {
            try (WriteBatch batch = new WriteBatch()) {
                for (byte[] key : orphans) {
                    batch.delete(key);
                }
                db.write(syncWrites, batch);
            } catch (RocksDBException e) {
                throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "cannot update bucket index " + dir + " ("
                        + e.getMessage() + "); check free disk space", e);
            }
        }
    }

    private static boolean isStampKey(byte[] key) {
        return key.length > 0 && key[0] == STAMP_PREFIX;
    }

    /**
     * Puts {@code puts} (each object's entry, and its stamp's, or no stamp entry for {@link ObjectStamp#NONE}) and
     * deletes {@code deletes} (both entries) in one synced batch.
     */
    void write(Map<String, Location> puts, Collection<String> deletes) {
        try (WriteBatch batch = new WriteBatch()) {
            for (String key : deletes) {
                batch.delete(key.getBytes(StandardCharsets.UTF_8));
                batch.delete(stampKey(key));
            }
            for (Map.Entry<String, Location> e : puts.entrySet()) {
                Location loc = e.getValue();
                batch.put(e.getKey().getBytes(StandardCharsets.UTF_8), loc.encode());
                if (loc.stamp().equals(ObjectStamp.NONE)) {
                    batch.delete(stampKey(e.getKey()));
                } else {
                    batch.put(stampKey(e.getKey()), loc.encodeStamp());
                }
            }
            db.write(syncWrites, batch);
        } catch (RocksDBException e) {
            throw new TiffinException(ErrorCode.FILE_WRITE_FAIL, "cannot update bucket index " + dir + " ("
                    + e.getMessage() + "); check free disk space", e);
        }
    }

    private static byte[] stampKey(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[k.length + 1];
        out[0] = STAMP_PREFIX;
        System.arraycopy(k, 0, out, 1, k.length);
        return out;
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
