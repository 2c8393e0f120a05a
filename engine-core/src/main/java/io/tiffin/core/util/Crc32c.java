package io.tiffin.core.util;

import java.lang.foreign.MemorySegment;
import java.util.List;
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

    private Crc32c() {
    }

    /** The CRC32C of {@code bytes}. */
    public static int of(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        update(crc, bytes);
        return (int) crc.getValue();
    }

    /** The CRC32C of {@code pieces}, one after the other. */
    public static int of(List<MemorySegment> pieces) {
        CRC32C crc = new CRC32C();
        for (MemorySegment piece : pieces) {
            update(crc, piece);
        }
        return (int) crc.getValue();
    }

    private static void update(CRC32C crc, MemorySegment bytes) {
        for (long off = 0; off < bytes.byteSize(); off += PIECE) {
            crc.update(bytes.asSlice(off, Math.min(PIECE, bytes.byteSize() - off)).asByteBuffer());
        }
    }

    /** {@code crc} as 8 hex digits, for messages. */
    public static String hex(int crc) {
        return String.format("0x%08x", crc);
    }
}
