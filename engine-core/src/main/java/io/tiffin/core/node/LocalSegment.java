package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A node's contribution to the pool: one block of off-heap memory that the master hands out in
 * (offset, length) pieces. The bytes are read and written by clients, remotely through the node's data
 * plane or, in the same JVM, directly through {@link LocalSegmentDirectory}.
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
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Reserves {@code size} bytes of off-heap memory. Throws {@link TiffinException} (INVALID_PARAMS) if
     * the machine cannot provide them.
     */
    public LocalSegment(String name, long size) {
        if (size <= 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.segment-size = " + size + " (expected: > 0)");
        }
        this.name = name;
        this.size = size;
        this.arena = Arena.ofShared();
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
        }
    }
}
