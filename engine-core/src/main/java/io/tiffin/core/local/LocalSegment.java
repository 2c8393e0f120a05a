package io.tiffin.core.local;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A node's contribution to the pool: one block of off-heap memory that the master hands out in
 * (offset, length) pieces. The bytes are read and written by clients, remotely through the node's data
 * plane or, in the same JVM, directly through {@link LocalSegmentDirectory}.
 *
 * <p>The memory is anonymous ({@link AnonymousMemory}: mapped, its pages backed as they are first written unless
 * the node asks for all of them at start-up), or, with a shared-memory directory, a file there mapped into this
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
 * <p><b>Mount epoch</b>: next to the bytes the segment holds one 8-byte word, the node's current mount
 * epoch (see {@code NodeServer}). In a shared-memory file it lies in a page after the segment's bytes
 * ({@link #mountEpochOffset()}), so same-host clients read it through their mapping and can tell that a
 * descriptor belongs to an earlier mount without asking the node.
 *
 * <p>Thread-safe: slices may be read and written concurrently (the master guarantees that live
 * allocations do not overlap); the mount epoch is written with release and read with acquire semantics.
 */
public final class LocalSegment implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(LocalSegment.class);
    private final String name;
    private final long size;
    private final Arena arena;
    private final MemorySegment memory;
    /** The mount epoch word (8 bytes). */
    private final MemorySegment epochWord;
    private final Path file;
    private final long[] fileIdentity;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SegmentLedger ledger = new SegmentLedger();

    /**
     * Reserves {@code size} bytes of off-heap memory. Throws {@link TiffinException} (INVALID_PARAMS) if
     * the machine cannot provide them.
     */
    public LocalSegment(String name, long size) {
        this(name, size, null, false);
    }

    /**
     * Reserves {@code size} bytes: anonymous memory when {@code sharedDir} is null ({@link AnonymousMemory}: its
     * pages backed as they are first written, or all of them now when {@code prefault}), else a file created in
     * {@code sharedDir} (its memory reserved now) and mapped. Throws {@link TiffinException} (INVALID_PARAMS) when
     * the memory cannot be had, naming the setting to change.
     */
    public LocalSegment(String name, long size, Path sharedDir, boolean prefault) {
        if (size <= 0) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.segment-size = " + size + " (expected: > 0)");
        }
        this.name = name;
        this.size = size;
        this.arena = Arena.ofShared();
        if (sharedDir != null) {
            this.file = SharedMemoryFiles.fileFor(sharedDir, name);
            try {
                long epochAt = mountEpochOffset(size);
                SharedMemoryFiles.create(file, epochAt + PAGE);
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    MemorySegment whole = ch.map(FileChannel.MapMode.READ_WRITE, 0, epochAt + PAGE, arena);
                    this.memory = whole.asSlice(0, size);
                    this.epochWord = whole.asSlice(epochAt, Long.BYTES);
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
            this.memory = AnonymousMemory.map(size, arena);
            this.epochWord = arena.allocate(Long.BYTES, Long.BYTES);
            if (prefault) {
                long nanos = AnonymousMemory.populate(memory);
                LOG.info("Segment {}: {} bytes of memory backed in {} ms (node.segment-prefault)", name, size,
                        nanos / 1_000_000);
            } else {
                String warning = beyondAvailableMemory(name, size, AnonymousMemory.availableBytes());
                if (warning != null) {
                    LOG.warn(warning);
                }
            }
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The warning for a segment of {@code size} bytes mapped lazily while {@code available} bytes are available
     * (MemAvailable; -1 = unknown), or null when it fits.
     */
    static String beyondAvailableMemory(String name, long size, long available) {
        if (available < 0 || size <= available) {
            return null;
        }
        return "Segment " + name + ": node.segment-size = " + size + " is more than the memory available now ("
                + available + " bytes, MemAvailable): its pages are backed as they are written, and the kernel may"
                + " stop this node when it fills; lower node.segment-size or set node.segment-prefault=true to have"
                + " it all at start-up";
    }

    private static final long PAGE = 4096;
    private static final java.lang.invoke.VarHandle LONG = java.lang.foreign.ValueLayout.JAVA_LONG.varHandle();

    /** Where a shared-memory file of a segment of {@code size} bytes keeps the mount epoch: the next page. */
    static long mountEpochOffset(long size) {
        return (size + PAGE - 1) / PAGE * PAGE;
    }

    /** Offset of the mount epoch word in {@link #sharedFile()}; 0 for anonymous memory. */
    public long mountEpochOffset() {
        return file == null ? 0 : mountEpochOffset(size);
    }

    /** Length of {@link #sharedFile()}: the segment's bytes and the page holding the mount epoch; 0 without a file. */
    public long sharedFileSize() {
        return file == null ? 0 : mountEpochOffset(size) + PAGE;
    }

    /** The node's current mount epoch of this segment (0 before the first mount). */
    public long mountEpoch() {
        return (long) LONG.getAcquire(epochWord, 0L);
    }

    /** Sets the mount epoch; called by the owning node only, before it sends the (re-)mount. */
    public void setMountEpoch(long epoch) {
        LONG.setRelease(epochWord, 0L, epoch);
    }

    /** The records of the objects committed here (failover); see {@link SegmentLedger}. */
    public SegmentLedger ledger() {
        return ledger;
    }

    /**
     * Records a committed object written under the descriptor's {@code descriptorEpoch} (0 = unchecked), atomically
     * with respect to {@link #moveMountEpoch}: a commit of a descriptor of an earlier mount is refused.
     *
     * @throws TiffinException {@code REPLICA_IS_GONE} when the segment was re-mounted since the descriptor
     */
    public void commit(long descriptorEpoch, SegmentLedger.Entry entry) {
        synchronized (ledger) {
            long epoch = mountEpoch();
            if (descriptorEpoch != 0 && descriptorEpoch != epoch) {
                throw new TiffinException(ErrorCode.REPLICA_IS_GONE, "segment " + name + " was re-mounted (mount "
                        + epoch + ") after the master handed out this replica (mount " + descriptorEpoch
                        + "); repeat the put");
            }
            ledger.commit(entry);
        }
    }

    /**
     * Moves the mount epoch to {@code epoch} and returns the records at that instant ({@code keep}) or drops them
     * (a master that forgot the segment): no commit of an earlier mount lands after it.
     */
    public java.util.List<SegmentLedger.Entry> moveMountEpoch(long epoch, boolean keep) {
        synchronized (ledger) {
            setMountEpoch(epoch);
            if (keep) {
                return ledger.snapshot();
            }
            ledger.clear();
            return java.util.List.of();
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
