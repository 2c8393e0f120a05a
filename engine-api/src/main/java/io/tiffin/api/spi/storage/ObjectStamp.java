package io.tiffin.api.spi.storage;

/**
 * What the store knows of an object besides its bytes, kept with its SSD copy so that a restart of the whole
 * cluster brings the object back as it was: its version (which tells one put of a key from another) and its
 * expiry deadline. A backend that {@linkplain StorageBackend#keepsStamps() keeps stamps} stores the stamp in the
 * same durable step as the bytes and gives it back in {@link StorageBackend#scanStamped}.
 *
 * <p>Thread-safe (immutable).
 *
 * @param version the object's version as its master numbered it (&gt; 0), or 0 when unknown
 * @param expireAtMs when the object expires, in milliseconds since the epoch, or 0 when it never does
 */
public record ObjectStamp(long version, long expireAtMs) {
    /** No version and no deadline: what a backend that keeps no stamps reports. */
    public static final ObjectStamp NONE = new ObjectStamp(0, 0);

    /**
     * @throws IllegalArgumentException if {@code version} or {@code expireAtMs} is negative
     */
    public ObjectStamp {
        if (version < 0 || expireAtMs < 0) {
            throw new IllegalArgumentException("version = " + version + ", expireAtMs = " + expireAtMs
                    + " (expected: both >= 0; 0 = unknown version, no deadline)");
        }
    }

    /** This stamp with another deadline (0 = none). */
    public ObjectStamp withExpireAtMs(long deadline) {
        return new ObjectStamp(version, deadline);
    }
}
