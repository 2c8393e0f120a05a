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
     * Reads up to {@code length} bytes at {@code offset} into {@code destination} at 0 and returns how
     * many it placed there: fewer than {@code length} only if the file ends first. While this bucket is in
     * direct mode the read uses O_DIRECT: straight into {@code destination} when it, {@code offset} and
     * {@code length} are all aligned, otherwise through an aligned off-heap scratch buffer covering the
     * block-aligned range (allocated and freed by this call). If O_DIRECT cannot open or read the file,
     * the bucket switches to buffered reads for good (telling the listener once) and the read is retried
     * buffered. The caller holds a reference.
     *
     * @throws IOException if the buffered read fails too
     */
    long read(long offset, int length, MemorySegment destination, int alignment) throws IOException {
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
        return readFully(false, offset, destination.asSlice(0, length).asByteBuffer());
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

    private long readDirect(long offset, int length, MemorySegment destination, int alignment) throws IOException {
        long mask = alignment - 1L;
        if ((offset & mask) == 0 && (length & mask) == 0 && destination.isNative()
                && (destination.address() & mask) == 0) {
            return readFully(true, offset, destination.asSlice(0, length).asByteBuffer());
        }
        long start = offset & ~mask;
        long end = (offset + length + mask) & ~mask;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment scratch = arena.allocate(end - start, alignment);
            long got = readFully(true, start, scratch.asByteBuffer()) - (offset - start);
            long n = Math.max(0, Math.min(length, got));
            MemorySegment.copy(scratch, offset - start, destination, 0, n);
            return n;
        }
    }

    /** Positional reads until {@code buffer} is full or the file ends; returns the bytes read. */
    private long readFully(boolean directMode, long position, ByteBuffer buffer) throws IOException {
        long start = position;
        int attempts = 0;
        while (buffer.hasRemaining()) {
            int wanted = buffer.remaining();
            int n;
            try {
                n = channel(directMode).read(buffer, position);
            } catch (ClosedChannelException e) {
                // Another reader's interrupt closed the shared channel; reopen unless we were interrupted.
                if (e instanceof ClosedByInterruptException || ++attempts > 2) {
                    throw e;
                }
                continue;
            }
            if (n <= 0) {
                break;
            }
            position += n;
            if (directMode && n < wanted) {
                break; // end of file: O_DIRECT would refuse the next, unaligned position
            }
        }
        return position - start;
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
