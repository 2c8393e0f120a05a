package io.tiffin.core.master;

import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;

/**
 * A copy of an object on a node's SSD tier, served by that node.
 *
 * <p>Thread-safe (immutable).
 */
record DiskReplica(long id, String nodeId, String endpoint, long size) {
    ReplicaDescriptor toDescriptor() {
        return new ReplicaDescriptor(id, ReplicaType.LOCAL_DISK, ReplicaStatus.COMPLETE, nodeId, nodeId, endpoint, 0, size);
    }
}
