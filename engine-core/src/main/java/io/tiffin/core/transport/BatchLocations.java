package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.Replica;
import io.tiffin.core.transport.proto.SegmentNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The answer of a batch lookup ({@code BATCH_GET_REPLICA_LIST}) both ways: the master's results as a {@link
 * BatchLocationsReply}, and such a reply as results again.
 *
 * <p><b>Compact form</b> ({@code BatchKeysRequest.compact}, which the Java client asks for): a location leaves out
 * its key (the request's at the same index) and a replica its segment name, node id and endpoint, which the reply
 * gives once per segment ({@code BatchLocationsReply.segments}, {@code Replica.segment_ref}). Those four strings
 * were most of a location's bytes: 128 locations of one replica each take 14.8 KB in full and 5.1 KB compact, which
 * the master spends less on encoding and the client on decoding. Clients that do not ask (the Python client, older
 * Java clients) get the full form.
 *
 * <p>Thread-safe (stateless).
 */
public final class BatchLocations {
    private BatchLocations() {
    }

    /** The reply for {@code results}, in order; {@code compact} as the request asked. */
    public static BatchLocationsReply toReply(List<KeyResult<ObjectLocation>> results, boolean compact) {
        BatchLocationsReply.Builder b = BatchLocationsReply.newBuilder();
        SegmentTable table = compact ? new SegmentTable(b) : null;
        for (KeyResult<ObjectLocation> res : results) {
            LocationResult.Builder lr = LocationResult.newBuilder().setCode(res.code().value());
            if (res.isOk()) {
                lr.setLocation(compact ? compactMsg(res.value(), table) : Messages.toMsg(res.value()));
            }
            b.addResults(lr);
        }
        return b.build();
    }

    private static ObjectLocationMsg compactMsg(ObjectLocation l, SegmentTable table) {
        ObjectLocationMsg.Builder m = ObjectLocationMsg.newBuilder().setSize(l.size()).setVersion(l.version())
                .setLeaseTtlMs(l.leaseTtlMillis()).setCrc32C(l.crc32c());
        for (ReplicaDescriptor d : l.replicas()) {
            Replica.Builder r = Messages.replicaWithoutNames(d);
            int ref = table.refOf(d);
            if (ref == 0) {
                Messages.setNames(r, d);
            } else {
                r.setSegmentRef(ref);
            }
            m.addReplicas(r);
        }
        return m.build();
    }

    /**
     * The results of {@code reply}, the answer to a lookup of {@code keys} (in either form).
     *
     * @throws TiffinException {@code DESERIALIZE_FAIL} for a reply that does not answer every key, or whose replica
     *                         refers to a segment the reply does not name
     */
    public static List<KeyResult<ObjectLocation>> fromReply(BatchLocationsReply reply, List<String> keys) {
        if (reply.getResultsCount() != keys.size()) {
            throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "the master answered " + reply.getResultsCount()
                    + " locations for a lookup of " + keys.size() + " keys");
        }
        List<SegmentNames> segments = reply.getSegmentsList();
        List<KeyResult<ObjectLocation>> out = new ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            LocationResult r = reply.getResults(i);
            ErrorCode code = ErrorCode.fromValue(r.getCode());
            out.add(code == ErrorCode.OK ? KeyResult.ok(keys.get(i), location(keys.get(i), r.getLocation(), segments))
                    : KeyResult.failed(keys.get(i), code));
        }
        return out;
    }

    private static ObjectLocation location(String key, ObjectLocationMsg m, List<SegmentNames> segments) {
        List<ReplicaDescriptor> replicas = new ArrayList<>(m.getReplicasCount());
        for (Replica r : m.getReplicasList()) {
            int ref = r.getSegmentRef();
            if (ref == 0) {
                replicas.add(Messages.fromMsg(r));
                continue;
            }
            if (ref > segments.size()) {
                throw new TiffinException(ErrorCode.DESERIALIZE_FAIL, "a location of " + key + " refers to segment "
                        + ref + " of the " + segments.size() + " its batch reply names");
            }
            SegmentNames n = segments.get(ref - 1);
            replicas.add(new ReplicaDescriptor(r.getReplicaId(), ReplicaType.fromValue(r.getType()),
                    ReplicaStatus.fromValue(r.getStatus()), n.getSegment(), n.getNodeId(), n.getEndpoint(),
                    r.getOffset(), r.getSize(), r.getMountEpoch(), Messages.grantOf(r)));
        }
        return new ObjectLocation(key, m.getSize(), m.getVersion(), m.getLeaseTtlMs(), replicas, m.getCrc32C());
    }

    /** The segments one compact reply names, each once, numbered from 1 in the order they first appear. */
    private static final class SegmentTable {
        private final BatchLocationsReply.Builder reply;
        private final Map<String, Integer> refs = new HashMap<>();
        private final List<ReplicaDescriptor> named = new ArrayList<>();

        SegmentTable(BatchLocationsReply.Builder reply) {
            this.reply = reply;
        }

        /** The reference of {@code d}'s names, adding them at their first use; 0: give them in full. */
        int refOf(ReplicaDescriptor d) {
            Integer ref = refs.get(d.segment());
            if (ref == null) {
                ref = named.size() + 1;
                refs.put(d.segment(), ref);
                named.add(d);
                reply.addSegments(SegmentNames.newBuilder().setSegmentBytes(Messages.NAMES.utf8(d.segment()))
                        .setNodeIdBytes(Messages.NAMES.utf8(d.nodeId()))
                        .setEndpointBytes(Messages.NAMES.utf8(d.endpoint())));
                return ref;
            }
            ReplicaDescriptor first = named.get(ref - 1);
            // one segment name, other names (a disk replica's, a re-mount's): in full rather than wrong
            return first.nodeId().equals(d.nodeId()) && first.endpoint().equals(d.endpoint()) ? ref : 0;
        }
    }
}
