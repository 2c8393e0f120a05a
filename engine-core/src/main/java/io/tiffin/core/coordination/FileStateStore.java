package io.tiffin.core.coordination;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A {@link StateStore} in a directory ({@code master.state-dir}) for a single master without a coordination
 * service: the facts in {@code cluster-state.pb}, replaced atomically (written to a temporary file, forced to disk,
 * renamed, the directory forced), so a crash at any moment leaves the old or the new facts. A lock on {@code
 * .lock} keeps a second master from using the directory at the same time. The version counts writes since this
 * store opened (a single process: the compare-and-set guards against nothing else).
 *
 * <p>Thread-safe: reads and writes are synchronized. Owns the lock's channel; {@link #close()} releases it.
 */
public final class FileStateStore implements StateStore {
    private final Path dir;
    private final Path file;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private long version;

    /**
     * Opens (creating) {@code dir} and locks it.
     *
     * @throws io.tiffin.api.TiffinException {@code FILE_LOCK_FAIL} when another process holds the directory, {@code
     *     FILE_OPEN_FAIL} when it cannot be created or locked (both naming master.state-dir)
     */
    public FileStateStore(Path dir) {
        this.dir = dir;
        this.file = dir.resolve("cluster-state.pb");
        try {
            Files.createDirectories(dir);
            lockChannel = FileChannel.open(dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l;
            try {
                l = lockChannel.tryLock();
            } catch (java.nio.channels.OverlappingFileLockException e) {
                l = null; // this JVM holds it
            }
            if (l == null) {
                lockChannel.close();
                throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.FILE_LOCK_FAIL, "master.state-dir = "
                        + dir + " is in use by another master process; give each master its own directory, or stop"
                        + " the other");
            }
            lock = l;
            version = Files.exists(file) ? 0 : -1;
        } catch (IOException e) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.FILE_OPEN_FAIL, "master.state-dir = " + dir
                    + " cannot be the master's state directory (" + e + "); expected a directory this process can"
                    + " create or write", e);
        }
    }

    @Override
    public synchronized Snapshot read() {
        try {
            return new Snapshot(Files.exists(file) ? Files.readAllBytes(file) : new byte[0], version);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized long write(byte[] data, long expectedVersion) {
        if (expectedVersion != version) {
            throw new StateConflictException(file + " is at version " + version + ", not " + expectedVersion);
        }
        Path tmp = dir.resolve("cluster-state.pb.tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer b = ByteBuffer.wrap(data);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + tmp + ": " + e.getMessage(), e);
        }
        try {
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            } catch (IOException ignored) {
                // some file systems cannot sync a directory; the rename is still atomic
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot replace " + file + ": " + e.getMessage(), e);
        }
        return ++version;
    }

    @Override
    public synchronized void close() {
        try {
            lock.release();
            lockChannel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
