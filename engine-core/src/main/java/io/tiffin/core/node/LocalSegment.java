package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A node's contribution to the pool: one block of off-heap memory that the master hands out in
 * (offset, length) pieces. The bytes are read and written by clients, remotely through the node's data
 * plane or, in the same JVM, directly through {@link LocalSegmentDirectory}.
 *
 * <p>The memory is anonymous, or, with a shared-memory directory, a file there mapped into this
 * process ({@link SharedMemoryFiles}) that clients on the same host map too. The node remains the
 * file's owner: it creates it, and deletes it in {@link #close()} after unmapping.
 *
 * <p><b>Ownership</b>: this object owns its shared {@link Arena} and closes it exactly once in
 * {@link #close()}. The owning node closes it only after its data-plane server has stopped (so no
 * Netty write still points into the memory) and after unregistering it from the
 * {@link LocalSegmentDirectory}. A same-JVM reader racing with close gets an
 * {@link IllegalStateException} from the closed arena, which callers map to TRANSFER_FAIL; it never
 * reads freed memory.
 *
 * <p>Thread-safe: slices may be read and written concurrently (the master guarantees that live
 * allocations do not overlap).
 */
public final class LocalSegment implements AutoCloseable {
    private final String name;
    private final long size;
    private final Arena arena;
    private final MemorySegment memory;
    private final Path file;
    private final long[] fileIdentity;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Reserves {@code size} bytes of off-heap memory. Throws {@link TiffinException} (INVALID_PARAMS) if
     * the machine cannot provide them.
     */
    public LocalSegment(String name, long size) {
        this(name, size, null);
    }

    /**
     * Reserves {@code size} bytes: anonymous memory when {@code sharedDir} is null, else a file created
     * in {@code sharedDir} and mapped. Throws {@link TiffinException} (INVALID_PARAMS) when the memory
     * cannot be had, naming the setting to change.
     */
    public LocalSegment(String name, long size, Path sharedDir) {
        if (size <= 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.segment-size = " + size + " (expected: > 0)");
        }
        this.name = name;
        this.size = size;
        this.arena = Arena.ofShared();
        if (sharedDir != null) {
            this.file = SharedMemoryFiles.fileFor(sharedDir, name);
            try {
                SharedMemoryFiles.create(file, size);
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    this.memory = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
                }
                this.fileIdentity = SharedMemoryFiles.identity(file);
            } catch (IOException | RuntimeException e) {
                arena.close();
                SharedMemoryFiles.deleteQuietly(file);
                if (e instanceof TiffinException t) {
                    throw t;
                }
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.shared-memory-dir = " + sharedDir
                        + ": cannot map " + file.getFileName() + " (" + e.getMessage() + ")", e);
            }
            return;
        }
        this.file = null;
        this.fileIdentity = null;
        try {
            this.memory = arena.allocate(size, 4096);
        } catch (OutOfMemoryError | IllegalArgumentException e) {
            arena.close();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.segment-size = " + size
                    + ": cannot reserve that much off-heap memory (" + e.getMessage() + "); lower it", e);
        }
    }

    public String name() {
        return name;
    }

    public long size() {
        return size;
    }

    /** The shared-memory file holding the bytes, or null for anonymous memory. */
    public Path sharedFile() {
        return file;
    }

    /** {device, inode} of {@link #sharedFile()}; null for anonymous memory. */
    public long[] sharedFileIdentity() {
        return fileIdentity == null ? null : fileIdentity.clone();
    }

    /**
     * The bytes at [offset, offset + length). Throws INVALID_PARAMS when the range leaves the segment.
     * The returned slice is valid until {@link #close()}.
     */
    public MemorySegment slice(long offset, long length) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "segment " + name + ": range [" + offset + ", "
                    + offset + "+" + length + ") is outside its " + size + " bytes");
        }
        if (closed.get()) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "segment " + name + " is closed");
        }
        return memory.asSlice(offset, length);
    }

    public boolean isClosed() {
        return closed.get();
    }

    /** Frees the memory; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            LocalSegmentDirectory.unregister(this);
            arena.close();
            if (file != null) {
                SharedMemoryFiles.deleteQuietly(file);
            }
        }
    }
}
