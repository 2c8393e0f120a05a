package io.tiffin.core.master;

import io.tiffin.api.ReplicaDescriptor;
import java.util.List;

/**
 * What a PutStart grants: where to write the object's replicas, the version the object gets (assigned at PutStart,
 * so the writer can record it on the nodes with the object), and whether the put was granted while the master
 * recovered objects from its nodes ({@code yields}: its records yield to any other record of the key at a later
 * takeover, see {@link SegmentAttachment}), and the object's expiry deadline ({@code expireAtMillis}, the master's
 * clock; 0 = none), which the writer records with the object too.
 *
 * <p>Thread-safe (immutable).
 */
public record PutGrant(List<ReplicaDescriptor> replicas, long version, boolean yields, long expireAtMillis) {
    public PutGrant {
        replicas = List.copyOf(replicas);
    }

    /** A grant made outside a recovery, of an object without a deadline. */
    public PutGrant(List<ReplicaDescriptor> replicas, long version) {
        this(replicas, version, false, 0);
    }
}
