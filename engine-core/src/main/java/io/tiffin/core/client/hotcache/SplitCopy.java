package io.tiffin.core.client.hotcache;

import io.tiffin.core.util.Crc32c;
import io.tiffin.core.util.TwoThreadChunks;
import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * Large copies between the cache's blocks and a caller's memory, shared by the calling thread and a helper thread
 * ({@link TwoThreadChunks}): one core copies a 10 MiB value at about 9 GB/s, two cores copy it faster, because one
 * core alone cannot keep enough cache-line transfers in flight to fill the memory bus. A copy is cut into chunks that
 * either thread claims; the caller starts at once and never waits for the helper to start (it claims what is left),
 * only for the chunk the helper is copying when none is left. Copies smaller than {@link #MIN_SPLIT_BYTES} (a
 * helper's wake-up would cost more than it saves), copies into memory another thread may not touch (a
 * thread-confined segment) and copies of a splitter made without sharing run on the caller alone.
 *
 * <p>A plain copy whose destination is out of the CPU's caches ({@link #job}'s {@code aroundCaches}) is cut into
 * chunks of at least {@link #LARGE_COPY_BYTES} where the pieces allow it: the JDK writes a copy that large with
 * non-temporal stores (x86 with AVX-512), which write around the caches and skip reading the destination's lines
 * before writing them. Into memory out of the caches, a 10 MB copy ran at about 10 GB/s on one core in 1 MiB chunks
 * and at about 14 in one piece; into a buffer still in the caches (one reused buffer, a just-zeroed array) the
 * non-temporal stores were the slower, as they push to memory what would have stayed cached.
 *
 * <p>A job may also checksum what it copies: each chunk's CRC32C is taken right after the chunk is copied, while its
 * bytes are still in the core's cache, and the chunks' checksums are combined in order ({@link Crc32c#combine}); a
 * fill then reads the received bytes once instead of once for the check and once for the copy, on two cores.
 *
 * <p>Thread-safe: any thread copies; a failure of a chunk (the region closed under a copy) is rethrown to the caller.
 */
final class SplitCopy {
    /** What each thread claims at a time. */
    static final long CHUNK_BYTES = 1L << 20;
    /** Smaller copies run on the caller alone. */
    static final long MIN_SPLIT_BYTES = 4L << 20;
    /** Within a checksummed chunk, the bytes copied and then checksummed at a time (well inside a core's L2). */
    static final long CHECKSUM_STEP_BYTES = 256L << 10;
    /**
     * The smallest copy HotSpot's disjoint copy stub writes with non-temporal stores on x86 with 64-byte vectors
     * (AVX-512): 2.5 MiB (on this project's machines one such copy into cold memory ran about 1.3 times faster than
     * one of 2.4 MB); copies cut in chunks smaller than this never reach that path.
     */
    static final long LARGE_COPY_BYTES = 5L << 19;

    private final boolean split;

    /** @param split whether copies are shared with a pool task at all (false: every copy on its caller) */
    SplitCopy(boolean split) {
        this.split = split;
    }

    /** Sharing when the machine has more than one core. */
    static SplitCopy forThisMachine() {
        return new SplitCopy(Runtime.getRuntime().availableProcessors() > 1);
    }

    /**
     * A copy from {@code from} to {@code to} in pieces; add every piece, then {@link #run(Job)} it.
     *
     * @param aroundCaches whether {@code to} is out of the CPU's caches (its pieces are then copied in chunks large
     *                     enough for non-temporal stores)
     */
    Job job(MemorySegment from, MemorySegment to, int pieces, boolean aroundCaches) {
        return new Job(from, to, pieces, false, aroundCaches);
    }

    /** As {@link #job} and also the CRC32C of the bytes copied, in the order the pieces were added ({@link Job#crc32c()} once run). */
    Job checksumJob(MemorySegment from, MemorySegment to, int pieces) {
        return new Job(from, to, pieces, true, false);
    }

    /**
     * Copies every piece of {@code job}, sharing the chunks with a pool task when the job is large enough; returns
     * once all are copied.
     *
     * @throws RuntimeException what a copy threw (e.g. {@link IllegalStateException} when the memory was freed)
     */
    void run(Job job) {
        job.start();
        boolean share = split && job.bytes >= MIN_SPLIT_BYTES && TwoThreadChunks.sharable(job.from)
                && TwoThreadChunks.sharable(job.to);
        TwoThreadChunks.run(job.count, share, job::copy);
        job.ran = true;
    }

    /**
     * One copy: pieces of {@code from} to places in {@code to}, cut into chunks of at most {@link #CHUNK_BYTES} (of
     * {@link #chunkAroundCaches} for a copy around the caches); with a checksum, each chunk's CRC32C too.
     *
     * <p>Not thread-safe while pieces are added (its caller's); once run, chunks are copied by two threads.
     */
    static final class Job {
        private final MemorySegment from;
        private final MemorySegment to;
        private final boolean checksum;
        private final boolean aroundCaches;
        /** Per chunk, its CRC32C (checksum jobs); written by whoever copies the chunk, read once all are done. */
        private int[] crcs;
        /** Set by the caller once every chunk is copied (without failure). */
        private boolean ran;
        private long[] fromOffsets;
        private long[] toOffsets;
        private long[] lengths;
        private int count;
        private long bytes;

        private Job(MemorySegment from, MemorySegment to, int pieces, boolean checksum, boolean aroundCaches) {
            this.from = from;
            this.to = to;
            this.checksum = checksum;
            this.aroundCaches = aroundCaches;
            int chunks = Math.max(1, pieces) * 2;
            this.fromOffsets = new long[chunks];
            this.toOffsets = new long[chunks];
            this.lengths = new long[chunks];
        }

        /** Adds {@code length} bytes at {@code fromOffset} of the source, to {@code toOffset} of the target. */
        Job add(long fromOffset, long toOffset, long length) {
            long chunkBytes = aroundCaches ? chunkAroundCaches(length) : CHUNK_BYTES;
            for (long off = 0; off < length; off += chunkBytes) {
                if (count == lengths.length) {
                    fromOffsets = java.util.Arrays.copyOf(fromOffsets, count * 2);
                    toOffsets = java.util.Arrays.copyOf(toOffsets, count * 2);
                    lengths = java.util.Arrays.copyOf(lengths, count * 2);
                }
                fromOffsets[count] = fromOffset + off;
                toOffsets[count] = toOffset + off;
                lengths[count] = Math.min(chunkBytes, length - off);
                count++;
            }
            bytes += length;
            return this;
        }

        /**
         * The chunk of a copy around the caches for a piece of {@code length} bytes: an even number of equal chunks
         * of at least {@link #LARGE_COPY_BYTES} (one for each thread, or several pairs), or {@link #CHUNK_BYTES} when
         * the piece is too small for two of those.
         */
        static long chunkAroundCaches(long length) {
            long pairs = length / (2 * LARGE_COPY_BYTES);
            return pairs == 0 ? CHUNK_BYTES : (length + 2 * pairs - 1) / (2 * pairs);
        }

        /** Called once all pieces are added, before any chunk is copied. */
        private void start() {
            if (checksum) {
                crcs = new int[count];
            }
        }

        private void copy(int i) {
            if (!checksum) {
                MemorySegment.copy(from, fromOffsets[i], to, toOffsets[i], lengths[i]);
                return;
            }
            CRC32C crc = new CRC32C();
            for (long off = 0; off < lengths[i]; off += CHECKSUM_STEP_BYTES) {
                long len = Math.min(CHECKSUM_STEP_BYTES, lengths[i] - off);
                MemorySegment.copy(from, fromOffsets[i] + off, to, toOffsets[i] + off, len);
                crc.update(from.asSlice(fromOffsets[i] + off, len).asByteBuffer()); // just read: still cached
            }
            crcs[i] = (int) crc.getValue();
        }

        /**
         * The CRC32C of the bytes, pieces in the order added; for a checksum job that {@link SplitCopy#run} ran
         * without failure.
         */
        int crc32c() {
            if (!checksum || !ran) {
                throw new IllegalStateException("not a checksum job that has run");
            }
            int crc = count == 0 ? 0 : crcs[0]; // 0: the CRC32C of no bytes
            for (int i = 1; i < count; i++) {
                crc = Crc32c.combine(crc, crcs[i], lengths[i]);
            }
            return crc;
        }
    }
}
