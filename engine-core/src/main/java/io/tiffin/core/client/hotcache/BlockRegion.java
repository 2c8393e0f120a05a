package io.tiffin.core.client.hotcache;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.local.AnonymousMemory;
import io.tiffin.core.util.Crc32c;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The hot cache's off-heap memory: one region of {@link #blockCount()} blocks of {@link #blockSize()}
 * bytes, numbered from 0, and the copies into and out of a list of blocks holding one object.
 *
 * <p>Copies between blocks and a caller's memory ({@link #copyOut}, {@link #copyIn(int[], MemorySegment, long)})
 * are shared with a pool task when large ({@link SplitCopy}).
 *
 * <p>Owns its shared {@link Arena} (the region is mapped into it, {@link AnonymousMemory});
 * {@link LocalHotCache#close()} closes it exactly once, through {@link #close()}, after the maintenance thread has
 * stopped, which unmaps the region.
 * Which blocks hold what is not this class's business ({@link BlockPool}, {@link EntryIndex}); it only moves bytes.
 *
 * <p>Thread-safe: the region is shared; callers touch only blocks they own or have pinned, so no two
 * threads write the same block and none reads a block while it is written.
 */
final class BlockRegion implements AutoCloseable {
    private final long blockSize;
    private final int blockCount;
    private final Arena arena;
    private final MemorySegment region;
    private final SplitCopy copier;

    /** As {@link #BlockRegion(long, long, SplitCopy)}, copies shared with a pool task when the machine has more than one core. */
    BlockRegion(long sizeBytes, long blockSize) {
        this(sizeBytes, blockSize, SplitCopy.forThisMachine());
    }

    /**
     * Reserves {@code sizeBytes / blockSize} blocks.
     *
     * @param sizeBytes total cache size; at least one block
     * @param blockSize bytes per block, &gt; 0
     * @param copier shares large copies with a pool task (or not)
     * @throws IllegalArgumentException if the sizes are out of range
     * @throws TiffinException INVALID_PARAMS if the memory cannot be reserved
     */
    BlockRegion(long sizeBytes, long blockSize, SplitCopy copier) {
        this.copier = copier;
        if (blockSize <= 0 || sizeBytes < blockSize) {
            throw new IllegalArgumentException("hotcache.size = " + sizeBytes + ", hotcache.block-size = " + blockSize
                    + " (expected: block size > 0 and size >= one block)");
        }
        long blocks = sizeBytes / blockSize;
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("hotcache.size / hotcache.block-size = " + blocks
                    + " blocks (expected: at most " + Integer.MAX_VALUE + "); use larger blocks");
        }
        this.blockSize = blockSize;
        this.blockCount = (int) blocks;
        this.arena = Arena.ofShared();
        try {
            // Mapped, then backed now (one pass of the kernel's over the pages), not page by page under the first
            // fills: a fill's copy then runs at memory speed. Arena.allocate cleared every byte itself instead.
            this.region = AnonymousMemory.map(blockCount * blockSize, arena, "hotcache.size");
            if (AnonymousMemory.mapsLazily()) {
                AnonymousMemory.populate(region, "hotcache.size");
            }
        } catch (TiffinException | OutOfMemoryError | IllegalArgumentException e) {
            arena.close();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "hotcache.size = " + sizeBytes
                    + ": cannot reserve that much memory for the hot cache (" + e.getMessage()
                    + "); lower hotcache.size", e);
        }
    }

    long blockSize() {
        return blockSize;
    }

    int blockCount() {
        return blockCount;
    }

    /** Blocks an object of {@code size} bytes takes. */
    int blocksFor(long size) {
        return (int) ((size + blockSize - 1) / blockSize);
    }

    /** Writable views of {@code blocks}, in order, holding together exactly {@code size} bytes. */
    List<MemorySegment> slices(int[] blocks, long size) {
        List<MemorySegment> parts = new ArrayList<>(blocks.length);
        long off = 0;
        for (int block : blocks) {
            long len = Math.min(blockSize, size - off);
            parts.add(region.asSlice((long) block * blockSize, len));
            off += len;
        }
        return parts;
    }

    /**
     * Copies the {@code size} bytes held in {@code blocks} to the start of {@code destination}; {@code aroundCaches}:
     * the destination is out of the CPU's caches ({@link SplitCopy#job}).
     */
    void copyOut(int[] blocks, long size, MemorySegment destination, boolean aroundCaches) {
        SplitCopy.Job job = copier.job(region, destination, blocks.length, aroundCaches);
        long off = 0;
        for (int block : blocks) {
            long len = Math.min(blockSize, size - off);
            job.add((long) block * blockSize, off, len);
            off += len;
        }
        copier.run(job);
    }

    /** Copies the first {@code size} bytes of {@code source} into {@code blocks}. */
    void copyIn(int[] blocks, MemorySegment source, long size) {
        copier.run(copyInJob(copier.job(source, region, blocks.length, false), blocks, size));
    }

    /**
     * As {@link #copyIn(int[], MemorySegment, long)}, and returns the CRC32C of the bytes copied, taken in the same
     * pass (each chunk checksummed right after it is copied, shared with a pool task like the copy).
     */
    int copyInChecksummed(int[] blocks, MemorySegment source, long size) {
        SplitCopy.Job job = copyInJob(copier.checksumJob(source, region, blocks.length), blocks, size);
        copier.run(job);
        return job.crc32c();
    }

    /** The CRC32C of the {@code size} bytes held in {@code blocks}; a large block's on two threads ({@link Crc32c#ofLarge}). */
    int crc32c(int[] blocks, long size) {
        int crc = 0; // the CRC32C of no bytes
        long off = 0;
        for (int block : blocks) {
            long len = Math.min(blockSize, size - off);
            crc = Crc32c.combine(crc, Crc32c.ofLarge(region.asSlice((long) block * blockSize, len)), len);
            off += len;
        }
        return crc;
    }

    private SplitCopy.Job copyInJob(SplitCopy.Job job, int[] blocks, long size) {
        long off = 0;
        for (int block : blocks) {
            long len = Math.min(blockSize, size - off);
            job.add(off, (long) block * blockSize, len);
            off += len;
        }
        return job;
    }

    /**
     * Copies {@code parts} (received buffers, in order, read from their reader index on; not consumed
     * or released) into {@code blocks}, up to {@code size} bytes.
     *
     * @throws IllegalStateException if the parts hold fewer than {@code size} bytes
     */
    void copyIn(int[] blocks, List<ByteBuf> parts, long size) {
        int blockIndex = 0;
        long inBlock = 0;
        long copied = 0;
        for (ByteBuf part : parts) {
            int readerIndex = part.readerIndex();
            int remaining = part.readableBytes();
            while (remaining > 0 && copied < size) {
                int n = (int) Math.min(remaining, blockSize - inBlock);
                MemorySegment dst = region.asSlice((long) blocks[blockIndex] * blockSize + inBlock, n);
                part.getBytes(readerIndex, dst.asByteBuffer());
                readerIndex += n;
                remaining -= n;
                inBlock += n;
                copied += n;
                if (inBlock == blockSize) {
                    blockIndex++;
                    inBlock = 0;
                }
            }
        }
        if (copied != size) {
            throw new IllegalStateException("fill carried " + copied + " bytes for an object of " + size);
        }
    }

    /** Frees the memory (unmaps the region); views handed out fail from now on. Called once, by the cache's close. */
    @Override
    public void close() {
        arena.close();
    }
}
