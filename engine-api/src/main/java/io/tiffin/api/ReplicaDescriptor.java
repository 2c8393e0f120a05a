package io.tiffin.api;

import java.util.Objects;

/**
 * Where one replica of an object lives, as the master hands it out.
 *
 * <p>Thread-safe (immutable).
 *
 * @param replicaId id of the replica, unique within the master's lifetime
 * @param type memory or SSD
 * @param status {@link ReplicaStatus#COMPLETE} for readable replicas
 * @param segment name of the memory segment (for {@link ReplicaType#MEMORY}); for an SSD replica the
 *     owning node's id
 * @param nodeId id of the node that owns the bytes
 * @param endpoint {@code host:port} of that node's data plane
 * @param offset byte offset inside the segment (memory replicas only)
 * @param size object size in bytes
 * @param mountEpoch for a memory replica, the mount of its segment under which the master issued this
 *     descriptor (chosen by the node at every mount); the node refuses data-plane requests of another
 *     mount with {@link ErrorCode#REPLICA_IS_GONE}, so a descriptor that outlived the master's knowledge
 *     of the segment (a master restart, the node's TTL passing) never reaches newer bytes. 0 = unchecked
 * @param grant for a memory replica, the master's signed permission to read or write it on its node (null:
 *     none; a node that checks grants refuses the data-plane requests)
 */
public record ReplicaDescriptor(long replicaId, ReplicaType type, ReplicaStatus status, String segment,
                                String nodeId, String endpoint, long offset, long size, long mountEpoch,
                                DataGrant grant) {
    /** A descriptor without a grant. */
    public ReplicaDescriptor(long replicaId, ReplicaType type, ReplicaStatus status, String segment,
                             String nodeId, String endpoint, long offset, long size, long mountEpoch) {
        this(replicaId, type, status, segment, nodeId, endpoint, offset, size, mountEpoch, null);
    }

    /** A descriptor whose mount epoch is unknown (0: the node does not check it). */
    public ReplicaDescriptor(long replicaId, ReplicaType type, ReplicaStatus status, String segment,
                             String nodeId, String endpoint, long offset, long size) {
        this(replicaId, type, status, segment, nodeId, endpoint, offset, size, 0, null);
    }

    public ReplicaDescriptor {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(segment, "segment");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(endpoint, "endpoint");
    }
}
