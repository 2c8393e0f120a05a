package io.tiffin.core.util;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;

/**
 * CRC32C of memory, heap or off-heap, of any length: the checksum writers give each object and readers, nodes'
 * SSD tiers and promotions check. {@link CRC32C} is a JIT intrinsic (SSE4.2 / ARMv8 CRC instructions).
 *
 * <p>Thread-safe (stateless).
 */
public final class Crc32c {
    /** Largest piece handed to {@link CRC32C#update(java.nio.ByteBuffer)} (a ByteBuffer holds at most 2 GiB). */
    private static final long PIECE = 1L << 30;

    /** The Castagnoli polynomial, bit-reflected. */
    private static final int POLY = 0x82F63B78;
    /** X2N[k] = x^(2^k) mod P, reflected. */
    private static final int[] X2N = new int[32];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < 32; k++) {
            X2N[k] = p = multModP(p, p);
        }
    }

    private Crc32c() {
    }

    /** The CRC32C of {@code bytes}. */
    public static int of(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        update(crc, bytes);
        return (int) crc.getValue();
    }

    /**
     * The CRC32C of {@code bytes}, for large memory on two threads: from {@link #PARALLEL_MIN_BYTES} on, chunks of
     * {@link #CHUNK_BYTES} checksummed by the caller and the helper thread ({@link TwoThreadChunks}) and combined in
     * order ({@link #combine}). Smaller memory, memory only the caller's thread may read (a confined segment), a
     * one-core machine or an event loop's thread: on the caller alone.
     *
     * @throws RuntimeException what checksumming a chunk threw (e.g. {@link IllegalStateException}: memory freed)
     */
    public static int ofLarge(MemorySegment bytes) {
        long size = bytes.byteSize();
        if (size < PARALLEL_MIN_BYTES) {
            return of(bytes);
        }
        int[] crcs = new int[(int) ((size + CHUNK_BYTES - 1) / CHUNK_BYTES)];
        TwoThreadChunks.run(crcs.length, TwoThreadChunks.sharable(bytes),
                i -> crcs[i] = of(bytes.asSlice(i * CHUNK_BYTES, Math.min(CHUNK_BYTES, size - i * CHUNK_BYTES))));
        int crc = crcs[0];
        for (int i = 1; i < crcs.length; i++) {
            crc = combine(crc, crcs[i], Math.min(CHUNK_BYTES, size - i * CHUNK_BYTES));
        }
        return crc;
    }

    /**
     * Below this, {@link #ofLarge} checksums on the caller alone: a pool thread's wake-up costs more than it saves (on
     * 2 vCPUs, 4 MiB took 273-361 µs on two threads against 238-250 on one; 10 MB 551-635 against 886-910).
     */
    public static final long PARALLEL_MIN_BYTES = 8L << 20;
    /** What {@link #ofLarge}'s threads claim at a time. */
    static final long CHUNK_BYTES = 1L << 20;

    private static void update(CRC32C crc, MemorySegment bytes) {
        if (bytes.isNative() || bytes.heapBase().orElse(null) instanceof byte[]) {
            for (long off = 0; off < bytes.byteSize(); off += PIECE) {
                crc.update(bytes.asSlice(off, Math.min(PIECE, bytes.byteSize() - off)).asByteBuffer());
            }
            return;
        }
        // a heap segment over another primitive array (int[], long[]...): no byte buffer views it, so its bytes are
        // copied a piece at a time
        byte[] piece = new byte[(int) Math.min(PIECE, bytes.byteSize())];
        for (long off = 0; off < bytes.byteSize(); off += piece.length) {
            int n = (int) Math.min(piece.length, bytes.byteSize() - off);
            MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, off, piece, 0, n);
            crc.update(piece, 0, n);
        }
    }

    /**
     * The CRC32C of two pieces one after the other, from the CRC32C of each and the second's length: lets
     * several threads checksum parts of one object. zlib's {@code crc32_combine} (x^(8 * len2) mod P, then a
     * carry-less product), with the Castagnoli polynomial.
     *
     * @param crc1 CRC32C of the first piece
     * @param crc2 CRC32C of the second piece
     * @param len2 bytes of the second piece, &gt;= 0
     */
    public static int combine(int crc1, int crc2, long len2) {
        if (len2 < 0) {
            throw new IllegalArgumentException("len2 = " + len2 + " (expected: >= 0)");
        }
        return multModP(xPow8n(len2), crc1) ^ crc2;
    }

    /** a * b mod P, reflected (bit 31 is x^0). */
    private static int multModP(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    return p;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
    }

    /** x^(8n) mod P: n bytes of zeros shifted through the register. */
    private static int xPow8n(long n) {
        int p = 1 << 31; // x^0
        int k = 3;
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multModP(X2N[k & 31], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    /** {@code crc} as 8 hex digits, for messages. */
    public static String hex(int crc) {
        return String.format("0x%08x", crc);
    }
}
