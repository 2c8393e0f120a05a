package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The bytes of one object returned by {@link TiffinClient#getPinned} or {@link TiffinClient#pinLocal}:
 * read-only views, valid until {@link #close()}. Served from the client's hot cache, the views are the
 * cache's own blocks, pinned (no byte was copied; the blocks are not reused until this value is closed);
 * from {@link TiffinClient#pinLocal} they may also be the replica itself in a segment of this JVM
 * ({@link #inPlace()}), valid only until the read lease ends ({@link #validForNanos()}): the master keeps
 * the bytes the object's until then, not longer; otherwise they cover one buffer that this value owns and
 * frees on close.
 *
 * <p>Close it promptly (try-with-resources): pinned cache blocks cannot hold other objects meanwhile.
 * {@link #copyTo} after {@link #close()} throws {@link IllegalStateException}; the views must not be read after it
 * (cache blocks may then hold another object's bytes, an owned buffer is freed). Closing the client closes none of
 * the values it gave out; an owned buffer stays readable until its value is closed, but cache blocks belong to the
 * client's hot cache and must not be read after the client is closed.
 *
 * <p>Thread-safe: the views may be read from any thread; {@link #close()} is idempotent.
 */
public final class PinnedValue implements AutoCloseable {
    private final List<MemorySegment> segments;
    private final long size;
    /** The object's version (the master's, from the lookup the bytes were read under). */
    private final long version;
    private final boolean fromCache;
    private final AutoCloseable owner;
    /** The client's clock; null when the views stay valid until close. */
    private final LeaseClock clock;
    /** With a clock: the moment ({@link LeaseClock#now()}) the lease protecting the views ends. */
    private final long validUntilNanos;
    private final AtomicBoolean closed = new AtomicBoolean();

    PinnedValue(List<MemorySegment> segments, long size, long version, boolean fromCache, AutoCloseable owner) {
        this(segments, size, version, fromCache, owner, null, 0);
    }

    private PinnedValue(List<MemorySegment> segments, long size, long version, boolean fromCache, AutoCloseable owner,
                        LeaseClock clock, long validUntilNanos) {
        this.segments = List.copyOf(segments);
        this.size = size;
        this.version = version;
        this.fromCache = fromCache;
        this.owner = owner;
        this.clock = clock;
        this.validUntilNanos = validUntilNanos;
    }

    /**
     * A view of a replica in a segment of this JVM, valid until {@code validUntilNanos} of {@code clock} (the
     * end of the read lease); nothing to release.
     */
    static PinnedValue inPlace(MemorySegment replica, long version, LeaseClock clock, long validUntilNanos) {
        return new PinnedValue(List.of(replica.asReadOnly()), replica.byteSize(), version, false, () -> { }, clock,
                validUntilNanos);
    }

    /**
     * Whether the views are the replica's own memory in this JVM (not a copy, not the hot cache): valid
     * only for {@link #validForNanos()} more.
     */
    public boolean inPlace() {
        return clock != null;
    }

    /**
     * How much longer the views hold this object's bytes, in nanoseconds of the client's clock: what is
     * left of the read lease for {@link #inPlace()} views (0 once it ended: the bytes may belong to another
     * object then), {@link Long#MAX_VALUE} for pinned cache blocks and owned buffers (valid until close).
     */
    public long validForNanos() {
        return clock == null ? Long.MAX_VALUE : Math.max(0, validUntilNanos - clock.now());
    }

    /** The object's bytes in order, as one or more read-only segments. */
    public List<MemorySegment> segments() {
        checkOpen();
        return segments;
    }

    /** Size of the object, bytes. */
    /**
     * The object's version, as the master numbers objects: a later object of the key has a higher one (for a
     * conditional replacement, {@code PutOptions.withExpectedVersion}).
     */
    public long version() {
        return version;
    }

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
        KeyChecks.checkSegment(destination, true, "the destination", "");
        if (destination.byteSize() < size) {
            throw new TiffinException(ErrorCode.BUFFER_OVERFLOW, "the object is " + size + " bytes but the destination"
                    + " holds " + destination.byteSize());
        }
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
