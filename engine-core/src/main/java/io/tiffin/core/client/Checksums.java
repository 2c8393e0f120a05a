package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Crc32c;
import java.lang.foreign.MemorySegment;

/**
 * End-to-end checksums: the CRC32C a writer computes of each object (sent with PutEnd and in the nodes'
 * commit records, kept by the master, handed to readers with every location), and the readers' check of
 * the bytes they received against it ({@code client.verify-checksums}), with {@link Crc32c}. A checksum of 0 means
 * none ({@link ObjectLocation#NO_CHECKSUM}: a writer that sent none, such as an older client): not verified.
 *
 * <p>Thread-safe (immutable).
 */
final class Checksums {
    private final boolean verify;

    /** @param verify whether reads check the bytes they received ({@code client.verify-checksums}) */
    Checksums(boolean verify) {
        this.verify = verify;
    }

    boolean verifies() {
        return verify;
    }

    /** The CRC32C of {@code bytes} (heap or off-heap); large memory on two threads ({@link Crc32c#ofLarge}). */
    static int crc32c(MemorySegment bytes) {
        return Crc32c.ofLarge(bytes);
    }

    /**
     * Checks the bytes of {@code loc} read from replica {@code from} into {@code bytes} (its size). Returns null
     * when they match, when the object has no checksum or when this client does not verify; else the mismatch,
     * naming the replica (node, segment, offset), for the caller to try another replica or fail with.
     */
    TiffinException mismatch(ObjectLocation loc, ReplicaDescriptor from, MemorySegment bytes) {
        if (!wants(loc)) {
            return null;
        }
        int actual = crc32c(bytes);
        if (actual == loc.crc32c()) {
            return null;
        }
        return new TiffinException(ErrorCode.CHECKSUM_MISMATCH, describe(loc, from, actual));
    }

    /** Whether reads of {@code loc} are checked: this client verifies and the object has a checksum. */
    boolean wants(ObjectLocation loc) {
        return verify && loc.crc32c() != ObjectLocation.NO_CHECKSUM;
    }

    /**
     * As {@link #mismatch(ObjectLocation, ReplicaDescriptor, MemorySegment)} for bytes whose CRC32C the caller took
     * ({@code actual}, e.g. while copying them; only meaningful when {@link #wants} the check).
     */
    TiffinException mismatch(ObjectLocation loc, ReplicaDescriptor from, int actual) {
        if (!wants(loc) || actual == loc.crc32c()) {
            return null;
        }
        return new TiffinException(ErrorCode.CHECKSUM_MISMATCH, describe(loc, from, actual));
    }

    static String describe(ObjectLocation loc, ReplicaDescriptor from, int actual) {
        String where = switch (from.type()) {
            case MEMORY -> "memory replica " + from.replicaId() + " on node " + from.nodeId() + " (" + from.endpoint()
                    + "), segment " + from.segment() + ", offset " + from.offset();
            default -> "SSD copy on node " + from.nodeId() + " (" + from.endpoint() + ")";
        };
        return "key " + loc.key() + " (version " + loc.version() + ", " + loc.size() + " bytes): the bytes read from "
                + where + " have CRC32C " + hex(actual) + ", the object's is " + hex(loc.crc32c())
                + "; that copy is corrupt";
    }

    static String hex(int crc) {
        return Crc32c.hex(crc);
    }
}
