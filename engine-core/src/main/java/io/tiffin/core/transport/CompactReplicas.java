package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Replica;
import io.tiffin.core.transport.proto.SegmentNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Replicas of a batch reply in compact form: a replica names its segment by reference ({@code Replica.segment_ref},
 * 1-based) to the reply's list of {@link SegmentNames}, which gives each segment's name, node id and endpoint once,
 * instead of repeating the three strings in every replica (most of a replica's bytes). Batch lookups
 * ({@link BatchLocations}) and batch PutStarts answer so when the request asks ({@code compact}).
 *
 * <p>A {@link Writer} serves one reply: not thread-safe. {@link #read} is stateless and thread-safe.
 */
public final class CompactReplicas {
    private CompactReplicas() {
    }

    /** The replica {@code r} of a reply whose segment list is {@code segments} (either form). */
    public static ReplicaDescriptor read(Replica r, List<SegmentNames> segments) {
        int ref = r.getSegmentRef();
        if (ref == 0) {
            return Messages.fromMsg(r);
        }
        if (ref > segments.size()) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "a replica refers to segment " + ref + " of the "
                    + segments.size() + " its batch reply names");
        }
        SegmentNames n = segments.get(ref - 1);
        return new ReplicaDescriptor(r.getReplicaId(), ReplicaType.fromValue(r.getType()),
                ReplicaStatus.fromValue(r.getStatus()), n.getSegment(), n.getNodeId(), n.getEndpoint(), r.getOffset(),
                r.getSize(), r.getMountEpoch(), Messages.grantOf(r));
    }

    /** The replicas {@code rs} of a reply whose segment list is {@code segments}. */
    public static List<ReplicaDescriptor> read(List<Replica> rs, List<SegmentNames> segments) {
        List<ReplicaDescriptor> out = new ArrayList<>(rs.size());
        for (Replica r : rs) {
            out.add(read(r, segments));
        }
        return out;
    }

    /** Writes the replicas of one reply, numbering each segment at its first use. Not thread-safe. */
    public static final class Writer {
        private final Map<String, Integer> refs = new HashMap<>();
        private final List<ReplicaDescriptor> named = new ArrayList<>();
        private final List<SegmentNames> segments = new ArrayList<>();

        /** {@code d} as a replica message naming its segment by reference (in full if its names differ). */
        public Replica.Builder replica(ReplicaDescriptor d) {
            Replica.Builder r = Messages.replicaWithoutNames(d);
            int ref = refOf(d);
            return ref == 0 ? Messages.setNames(r, d) : r.setSegmentRef(ref);
        }

        /** The segments referred to so far, in the order of their references: the reply's segment list. */
        public List<SegmentNames> segments() {
            return segments;
        }

        private int refOf(ReplicaDescriptor d) {
            Integer ref = refs.get(d.segment());
            if (ref == null) {
                ref = named.size() + 1;
                refs.put(d.segment(), ref);
                named.add(d);
                segments.add(SegmentNames.newBuilder().setSegmentBytes(Messages.NAMES.utf8(d.segment()))
                        .setNodeIdBytes(Messages.NAMES.utf8(d.nodeId()))
                        .setEndpointBytes(Messages.NAMES.utf8(d.endpoint())).build());
                return ref;
            }
            ReplicaDescriptor first = named.get(ref - 1);
            // one segment name, other names (a disk replica's, a re-mount's): in full rather than wrong
            return first.nodeId().equals(d.nodeId()) && first.endpoint().equals(d.endpoint()) ? ref : 0;
        }
    }
}
