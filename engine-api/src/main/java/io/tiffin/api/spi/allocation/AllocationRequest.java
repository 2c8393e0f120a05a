package io.tiffin.api.spi.allocation;

import java.util.List;
import java.util.Objects;

/**
 * What is to be placed: {@code replicas} buffers of {@code size} bytes, each on a distinct segment.
 *
 * <p>Thread-safe (immutable).
 *
 * @param size bytes per replica, &gt; 0
 * @param replicas replicas wanted, &gt;= 1
 * @param preferredSegments segment names to try first, in order (may be empty)
 * @param writerNodeId the node that will write the replica: a node promoting an object from its SSD
 *     tier; empty for a client's put (clients are not nodes; a client that wants its own host's segment
 *     names it in {@code preferredSegments})
 */
public record AllocationRequest(long size, int replicas, List<String> preferredSegments, String writerNodeId) {
    public AllocationRequest {
        if (size <= 0) {
            throw new IllegalArgumentException("size = " + size + " (expected: > 0)");
        }
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas = " + replicas + " (expected: >= 1)");
        }
        preferredSegments = List.copyOf(preferredSegments);
        Objects.requireNonNull(writerNodeId, "writerNodeId");
    }

    public static AllocationRequest of(long size, int replicas) {
        return new AllocationRequest(size, replicas, List.of(), "");
    }
}
