package io.tiffin.plugin.storage;

import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where one object lies and what it is: bucket id, offset and length inside the bucket file, the CRC32C of its
 * bytes, and its {@link ObjectStamp}. The value of the key's RocksDB index entry ({@link #encode()}, 44 bytes,
 * little-endian; entries of 28 bytes, written before stamps were kept, decode with {@link ObjectStamp#NONE}).
 * Thread-safe (immutable); compared by identity on purpose, so a reader can tell whether the index still holds the
 * very entry it looked up.
 */
final class Location {
    static final int ENCODED_BYTES = 44;
    private static final int UNSTAMPED_BYTES = 28;

    private final long bucketId;
    private final long offset;
    private final int length;
    private final int crc;
    private final ObjectStamp stamp;

    Location(long bucketId, long offset, int length, int crc, ObjectStamp stamp) {
        this.bucketId = bucketId;
        this.offset = offset;
        this.length = length;
        this.crc = crc;
        this.stamp = stamp;
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

    ObjectStamp stamp() {
        return stamp;
    }

    /** The same bytes with another stamp (a new entry, so readers holding this one see it was replaced). */
    Location withStamp(ObjectStamp newStamp) {
        return new Location(bucketId, offset, length, crc, newStamp);
    }

    byte[] encode() {
        return ByteBuffer.allocate(ENCODED_BYTES).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(bucketId).putLong(offset).putLong(length).putInt(crc)
                .putLong(stamp.version()).putLong(stamp.expireAtMs()).array();
    }

    /** Decodes an index value; returns null if it is not a valid entry (wrong size or negative fields). */
    static Location decode(byte[] bytes) {
        if (bytes == null || (bytes.length != ENCODED_BYTES && bytes.length != UNSTAMPED_BYTES)) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long bucketId = b.getLong();
        long offset = b.getLong();
        long length = b.getLong();
        int crc = b.getInt();
        long version = b.hasRemaining() ? b.getLong() : 0;
        long expireAtMs = b.hasRemaining() ? b.getLong() : 0;
        if (bucketId < 0 || offset < 0 || length <= 0 || length > Integer.MAX_VALUE || version < 0
                || expireAtMs < 0) {
            return null;
        }
        ObjectStamp stamp = version == 0 && expireAtMs == 0 ? ObjectStamp.NONE : new ObjectStamp(version, expireAtMs);
        return new Location(bucketId, offset, (int) length, crc, stamp);
    }

    @Override
    public String toString() {
        return "bucket " + bucketId + " @" + offset + "+" + length;
    }
}
