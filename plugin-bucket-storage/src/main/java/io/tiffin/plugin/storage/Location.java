package io.tiffin.plugin.storage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where one object lies: bucket id, offset and length inside the bucket file, and the CRC32C of its
 * bytes. The value of the key's RocksDB index entry ({@link #encode()}, 28 bytes, little-endian).
 * Thread-safe (immutable); compared by identity on purpose, so a reader can tell whether the index
 * still holds the very entry it looked up.
 */
final class Location {
    static final int ENCODED_BYTES = 28;

    private final long bucketId;
    private final long offset;
    private final int length;
    private final int crc;

    Location(long bucketId, long offset, int length, int crc) {
        this.bucketId = bucketId;
        this.offset = offset;
        this.length = length;
        this.crc = crc;
    }

    long bucketId() {
        return bucketId;
    }

    long offset() {
        return offset;
    }

    int length() {
        return length;
    }

    int crc() {
        return crc;
    }

    byte[] encode() {
        return ByteBuffer.allocate(ENCODED_BYTES).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(bucketId).putLong(offset).putLong(length).putInt(crc).array();
    }

    /** Decodes an index value; returns null if it is not a valid entry (wrong size or negative fields). */
    static Location decode(byte[] bytes) {
        if (bytes == null || bytes.length != ENCODED_BYTES) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long bucketId = b.getLong();
        long offset = b.getLong();
        long length = b.getLong();
        int crc = b.getInt();
        if (bucketId < 0 || offset < 0 || length <= 0 || length > Integer.MAX_VALUE) {
            return null;
        }
        return new Location(bucketId, offset, (int) length, crc);
    }

    @Override
    public String toString() {
        return "bucket " + bucketId + " @" + offset + "+" + length;
    }
}
