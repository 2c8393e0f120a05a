package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.SegmentNames;
import java.util.ArrayList;
import java.util.List;

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
        CompactReplicas.Writer replicas = compact ? new CompactReplicas.Writer() : null;
        for (KeyResult<ObjectLocation> res : results) {
            LocationResult.Builder lr = LocationResult.newBuilder().setCode(res.code().value());
            if (res.isOk()) {
                lr.setLocation(compact ? compactMsg(res.value(), replicas) : Messages.toMsg(res.value()));
            }
            b.addResults(lr);
        }
        return compact ? b.addAllSegments(replicas.segments()).build() : b.build();
    }

    private static ObjectLocationMsg compactMsg(ObjectLocation l, CompactReplicas.Writer replicas) {
        ObjectLocationMsg.Builder m = ObjectLocationMsg.newBuilder().setSize(l.size()).setVersion(l.version())
                .setLeaseTtlMs(l.leaseTtlMillis()).setCrc32C(l.crc32c());
        for (ReplicaDescriptor d : l.replicas()) {
            m.addReplicas(replicas.replica(d));
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
        return new ObjectLocation(key, m.getSize(), m.getVersion(), m.getLeaseTtlMs(),
                CompactReplicas.read(m.getReplicasList(), segments), m.getCrc32C());
    }
}
