package io.tiffin.plugin.storage;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One bucket file: an immutable, fsynced run of objects, each starting at a multiple of {@link #ALIGN}.
 *
 * <p><b>Reference counting</b>: the backend holds one reference from creation until it retires the
 * bucket (all its keys removed, overwritten or evicted); each read holds one more between {@link
 * #acquire()} and {@link #release()}. When the count reaches zero the file's channels are closed and the
 * file is deleted, so a bucket being read is never deleted under its reader. {@link #acquire()} fails
 * once the count has reached zero.
 *
 * <p><b>Threads</b>: thread-safe. The key set and live-byte count change only under the backend's
 * write lock; the access tick and the I/O mode are volatile; channels are opened lazily under this
 * object's monitor and shared by readers (positional reads do not move a shared position).
 *
 * <p><b>Ownership</b>: owns its two file channels (O_DIRECT and buffered), closed once, by whoever drops
 * the last reference. Scratch buffers for O_DIRECT are off-heap, allocated per read from a confined arena
 * and freed before the read returns; nothing mutable is shared between reads.
 */
final class Bucket {
    /** Objects start at multiples of this inside a bucket file, so O_DIRECT reads need no extra block. */
    static final int ALIGN = 4096;

    /** How a read ended. */
    enum ReadStatus { OK, SHORT }

    private final long id;
    private final Path file;
    private final long fileBytes;
    private final Set<String> keys = ConcurrentHashMap.newKeySet();
    private final AtomicInteger refs = new AtomicInteger(1);
    private final AtomicBoolean retired = new AtomicBoolean();
    private final DirectIoListener directIoListener;
    private volatile long lastAccess;
    private volatile boolean direct;
    private long liveBytes;
    private volatile boolean deleteWhenUnused = true;
    private volatile FileChannel directChannel;
    private volatile FileChannel bufferedChannel;

    /** Told once per bucket when O_DIRECT fails and the bucket switches to buffered reads. */
    interface DirectIoListener {
        void fellBack(Bucket bucket, IOException cause);
    }

    Bucket(long id, Path file, long fileBytes, long createdTick, boolean direct, DirectIoListener directIoListener) {
        this.id = id;
        this.file = file;
        this.fileBytes = fileBytes;
        this.lastAccess = createdTick;
        this.direct = direct;
        this.directIoListener = directIoListener;
    }

    static String fileName(long id) {
        return id + ".bucket";
    }

    /** The bucket id a file name stands for, or -1 if it is not a bucket file name. */
    static long idOf(String fileName) {
        if (!fileName.endsWith(".bucket")) {
            return -1;
        }
        String digits = fileName.substring(0, fileName.length() - ".bucket".length());
        if (digits.isEmpty() || digits.length() > 18 || !digits.chars().allMatch(Character::isDigit)) {
            return -1;
        }
        return Long.parseLong(digits);
    }

    static long align(long n) {
        return (n + ALIGN - 1) & -ALIGN;
    }

    long id() {
        return id;
    }

    Path file() {
        return file;
    }

    long fileBytes() {
        return fileBytes;
    }

    long lastAccess() {
        return lastAccess;
    }

    void touch(long tick) {
        lastAccess = tick;
    }

    boolean directIo() {
        return direct;
    }

    /** Called under the backend's write lock. */
    void addKey(String key, int length) {
        keys.add(key);
        liveBytes += length;
    }

    /** Called under the backend's write lock; returns true if the bucket holds no key any more. */
    boolean removeKey(String key, int length) {
        if (keys.remove(key)) {
            liveBytes -= length;
        }
        return keys.isEmpty();
    }

    List<String> keys() {
        return List.copyOf(keys);
    }

    boolean isEmpty() {
        return keys.isEmpty();
    }

    long liveBytes() {
        return liveBytes;
    }

    boolean acquire() {
        while (true) {
            int r = refs.get();
            if (r == 0) {
                return false;
            }
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    void release() {
        if (refs.decrementAndGet() == 0) {
            destroy();
        }
    }

    /** Drops the backend's own reference (once); the file goes when the last reader releases. */
    void retire() {
        if (retired.compareAndSet(false, true)) {
            release();
        }
    }

    /**
     * Drops the backend's own reference (once) but keeps the file (backend close); the channels close
     * when the last reader releases.
     */
    void detach() {
        if (retired.compareAndSet(false, true)) {
            deleteWhenUnused = false;
            release();
        }
    }

    private void destroy() {
        synchronized (this) {
            closeQuietly(directChannel);
            closeQuietly(bufferedChannel);
            directChannel = null;
            bufferedChannel = null;
        }
        if (!deleteWhenUnused) {
            return;
        }
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            System.getLogger(Bucket.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot delete retired bucket file " + file + " (" + e + "); it is removed at the next start");
        }
    }

    /**
     * Reads {@code length} bytes at {@code offset} into {@code destination} at 0. Returns {@link
     * ReadStatus#SHORT} if the file ends before them. Uses O_DIRECT with an aligned scratch buffer of the
     * block-aligned range covering the object while this bucket is in direct mode; if O_DIRECT cannot
     * open or read the file, switches the bucket to buffered reads for good (telling the listener once)
     * and retries buffered. The caller holds a reference.
     *
     * @throws IOException if the buffered read fails too
     */
    ReadStatus read(long offset, int length, MemorySegment destination, int alignment) throws IOException {
        if (direct) {
            try {
                return readDirect(offset, length, destination, alignment);
            } catch (ClosedByInterruptException e) {
                throw e;
            } catch (IOException | UnsupportedOperationException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw e instanceof IOException io ? io : new IOException(e);
                }
                switchToBuffered(e instanceof IOException io ? io : new IOException(e));
            }
        }
        return readBuffered(offset, length, destination);
    }

    private void switchToBuffered(IOException cause) {
        boolean first;
        synchronized (this) {
            first = direct;
            direct = false;
        }
        if (first) {
            directIoListener.fellBack(this, cause);
        }
    }

    private ReadStatus readDirect(long offset, int length, MemorySegment destination, int alignment)
            throws IOException {
        long start = offset & -(long) alignment;
        long end = (offset + length + alignment - 1) & -(long) alignment;
        int span = Math.toIntExact(end - start);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(span, alignment);
            ByteBuffer buffer = scratch.asByteBuffer();
            long position = start;
            long needed = offset + length;
            for (int attempt = 0; position < needed; ) {
                int n;
                try {
                    n = channel(true).read(buffer, position);
                } catch (ClosedChannelException e) {
                    if (e instanceof ClosedByInterruptException || ++attempt > 2) {
                        throw e;
                    }
                    continue;
                }
                if (n <= 0) {
                    return ReadStatus.SHORT;
                }
                position += n;
            }
            MemorySegment.copy(scratch, offset - start, destination, 0, length);
            return ReadStatus.OK;
        }
    }

    private ReadStatus readBuffered(long offset, int length, MemorySegment destination) throws IOException {
        ByteBuffer buffer = destination.asSlice(0, length).asByteBuffer();
        long position = offset;
        for (int attempt = 0; buffer.hasRemaining(); ) {
            int n;
            try {
                n = channel(false).read(buffer, position);
            } catch (ClosedChannelException e) {
                // Another reader's interrupt closed the shared channel; reopen unless we were interrupted.
                if (e instanceof ClosedByInterruptException || ++attempt > 2) {
                    throw e;
                }
                continue;
            }
            if (n <= 0) {
                return ReadStatus.SHORT;
            }
            position += n;
        }
        return ReadStatus.OK;
    }

    private FileChannel channel(boolean directMode) throws IOException {
        FileChannel open = directMode ? directChannel : bufferedChannel;
        if (open != null && open.isOpen()) {
            return open;
        }
        return openChannel(directMode);
    }

    private synchronized FileChannel openChannel(boolean directMode) throws IOException {
        if (refs.get() == 0) {
            throw new ClosedChannelException();
        }
        if (directMode) {
            if (directChannel == null || !directChannel.isOpen()) {
                directChannel = FileChannel.open(file, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
            }
            return directChannel;
        }
        if (bufferedChannel == null || !bufferedChannel.isOpen()) {
            bufferedChannel = FileChannel.open(file, StandardOpenOption.READ);
        }
        return bufferedChannel;
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // Read-only channel: nothing buffered to lose.
            }
        }
    }

    @Override
    public String toString() {
        return "bucket " + id + " (" + file + ")";
    }
}
