package io.tiffin.core.client;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The bytes of one object returned by {@link TiffinClient#getPinned}: read-only views, valid until
 * {@link #close()}. Served from the client's hot cache, the views are the cache's own blocks, pinned
 * (no byte was copied; the blocks are not reused until this value is closed); otherwise they cover one
 * buffer that this value owns and frees on close.
 *
 * <p>Close it promptly (try-with-resources): pinned cache blocks cannot hold other objects meanwhile.
 * Access after {@link #close()}, or after the client was closed, throws {@link IllegalStateException}
 * for owned buffers and must not be attempted for cache blocks (whose bytes may then belong to another
 * object).
 *
 * <p>Thread-safe: the views may be read from any thread; {@link #close()} is idempotent.
 */
public final class PinnedValue implements AutoCloseable {
    private final List<MemorySegment> segments;
    private final long size;
    private final boolean fromCache;
    private final AutoCloseable owner;
    private final AtomicBoolean closed = new AtomicBoolean();

    PinnedValue(List<MemorySegment> segments, long size, boolean fromCache, AutoCloseable owner) {
        this.segments = List.copyOf(segments);
        this.size = size;
        this.fromCache = fromCache;
        this.owner = owner;
    }

    /** The object's bytes in order, as one or more read-only segments. */
    public List<MemorySegment> segments() {
        checkOpen();
        return segments;
    }

    /** Size of the object, bytes. */
    public long size() {
        return size;
    }

    /** Whether the bytes are pinned hot-cache blocks (served without a network transfer or a copy). */
    public boolean fromCache() {
        return fromCache;
    }

    /** Copies the object into {@code destination}, which must hold {@link #size()} bytes. */
    public void copyTo(MemorySegment destination) {
        checkOpen();
        long off = 0;
        for (MemorySegment s : segments) {
            MemorySegment.copy(s, 0, destination, off, s.byteSize());
            off += s.byteSize();
        }
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("this PinnedValue was closed; its bytes may belong to another object now");
        }
    }

    /** Unpins the cache blocks or frees the owned buffer; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                owner.close();
            } catch (Exception e) {
                throw new IllegalStateException("releasing a pinned value failed", e);
            }
        }
    }
}
