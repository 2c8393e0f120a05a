package io.tiffin.plugin.storage;

import io.tiffin.api.spi.storage.ObjectStamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where one object lies and what it is: bucket id, offset and length inside the bucket file, the CRC32C of its
 * bytes, and its {@link ObjectStamp}. The key's RocksDB index entry holds the first four ({@link #encode()}, 28 bytes,
 * little-endian, the format of every release); the stamp has an entry of its own ({@link #encodeStamp()}, see {@link
 * BucketIndex}), so a build that predates stamps still reads the index. Entries of 44 bytes (stamp included, written
 * by 8e1d88f only) decode too. Thread-safe (immutable); compared by identity on purpose, so a reader can tell whether
 * the index still holds the very entry it looked up.
 */
final class Location {
    static final int ENCODED_BYTES = 28;
    private static final int STAMPED_BYTES = 44;
    static final int STAMP_BYTES = 32;

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
                .putLong(bucketId).putLong(offset).putLong(length).putInt(crc).array();
    }

    /**
     * The value of the stamp's entry: bucket id and offset (so a stamp outlived by its object, left by a build that
     * does not know stamps, is never taken for the stamp of new bytes), version and deadline; 32 bytes.
     */
    byte[] encodeStamp() {
        return ByteBuffer.allocate(STAMP_BYTES).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(bucketId).putLong(offset).putLong(stamp.version()).putLong(stamp.expireAtMs()).array();
    }

    /** Decodes an index value; returns null if it is not a valid entry (wrong size or negative fields). */
    static Location decode(byte[] bytes) {
        if (bytes == null || (bytes.length != ENCODED_BYTES && bytes.length != STAMPED_BYTES)) {
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
        return new Location(bucketId, offset, (int) length, crc, stamp(version, expireAtMs));
    }

    /** This location with the stamp of a stamp entry's value, if that value is valid and names this bucket and offset. */
    Location withStampEntry(byte[] value) {
        if (value == null || value.length != STAMP_BYTES) {
            return this;
        }
        ByteBuffer b = ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN);
        long stampBucket = b.getLong();
        long stampOffset = b.getLong();
        long version = b.getLong();
        long expireAtMs = b.getLong();
        if (stampBucket != bucketId || stampOffset != offset || version < 0 || expireAtMs < 0) {
            return this;
        }
        return withStamp(stamp(version, expireAtMs));
    }

    private static ObjectStamp stamp(long version, long expireAtMs) {
        return version == 0 && expireAtMs == 0 ? ObjectStamp.NONE : new ObjectStamp(version, expireAtMs);
    }

    @Override
    public String toString() {
        return "bucket " + bucketId + " @" + offset + "+" + length;
    }
}
