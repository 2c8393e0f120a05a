package io.tiffin.core.master;

import io.tiffin.api.ReplicaDescriptor;
import java.util.List;

/**
 * What a PutStart grants: where to write the object's replicas, and the version the object gets (assigned at
 * PutStart, so the writer can record it on the nodes with the object).
 *
 * <p>Thread-safe (immutable).
 */
public record PutGrant(List<ReplicaDescriptor> replicas, long version) {
    public PutGrant {
        replicas = List.copyOf(replicas);
    }
}
