package io.tiffin.api;

import java.util.List;
import java.util.Objects;

/**
 * An object's readable replicas and metadata, as returned with a read lease.
 *
 * <p>Thread-safe (immutable).
 *
 * @param key the key
 * @param size object size in bytes
 * @param version version assigned when the object was completed; a re-put of the key after a remove
 *     (or an upsert) yields a greater version, so cached copies can detect overwrites
 * @param leaseTtlMillis length of the read lease granted with this answer; a read that ends after it
 *     fails with {@link ErrorCode#LEASE_EXPIRED}
 * @param replicas readable replicas, memory replicas first
 * @param crc32c the CRC32C of the object's bytes as its writer computed them ({@link java.util.zip.CRC32C}),
 *     which readers verify; {@link #NO_CHECKSUM} (0) = none (a writer that sent none, or an object whose
 *     checksum is 0): not verified
 */
public record ObjectLocation(String key, long size, long version, long leaseTtlMillis,
                             List<ReplicaDescriptor> replicas, int crc32c) {
    /** The {@link #crc32c} of an object without a checksum. */
    public static final int NO_CHECKSUM = 0;

    /** A location without a checksum. */
    public ObjectLocation(String key, long size, long version, long leaseTtlMillis, List<ReplicaDescriptor> replicas) {
        this(key, size, version, leaseTtlMillis, replicas, NO_CHECKSUM);
    }

    public ObjectLocation {
        Objects.requireNonNull(key, "key");
        replicas = List.copyOf(replicas);
    }
}
