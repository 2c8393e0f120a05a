package io.tiffin.core.transport;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PutOptionsMsg;
import io.tiffin.core.transport.proto.Replica;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Conversions between the API's value types and their wire messages. Thread-safe: stateless but for the
 * {@link Utf8Cache} of the names every replica repeats.
 */
public final class Messages {
    /** Segment names, node ids and endpoints in UTF-8: {@link #toMsg(ReplicaDescriptor)}. */
    static final Utf8Cache NAMES = new Utf8Cache();

    private Messages() {
    }

    public static PutOptionsMsg toMsg(PutOptions o) {
        return PutOptionsMsg.newBuilder()
                .setReplicas(o.replicas())
                .setPreferredSegment(o.preferredSegment().orElse(""))
                .setSoftPin(o.softPin())
                .setHardPin(o.hardPin())
                .setUpsert(o.upsert())
                .setReplaceLeased(o.replaceLeased())
                .setTtlMs(o.ttlMillis())
                .setKeepTtl(o.keepTtl())
                .setCondition(o.condition().ordinal())
                .setIfVersion(o.expectedVersion())
                .build();
    }

    /** Decodes put options; a replica count of 0 (field absent) means 1. */
    public static PutOptions fromMsg(PutOptionsMsg m) {
        int replicas = m.getReplicas() == 0 ? 1 : m.getReplicas();
        Optional<String> preferred = m.getPreferredSegment().isEmpty() ? Optional.empty()
                : Optional.of(m.getPreferredSegment());
        PutOptions.Condition[] conditions = PutOptions.Condition.values();
        if (m.getCondition() < 0 || m.getCondition() >= conditions.length) { // an int32 on the wire: any sign
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "put condition "
                    + m.getCondition() + " is none of 0 (always), 1 (if absent), 2 (if present), 3 (if version)");
        }
        try {
            return new PutOptions(replicas, preferred, m.getSoftPin(), m.getHardPin(), m.getUpsert(),
                    m.getReplaceLeased(), m.getTtlMs(), m.getKeepTtl(), conditions[m.getCondition()], m.getIfVersion());
        } catch (IllegalArgumentException e) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "put options: "
                    + e.getMessage());
        }
    }

    public static Replica toMsg(ReplicaDescriptor d) {
        return setNames(replicaWithoutNames(d), d).build();
    }

    /** {@code d} as a message but for its segment name, node id and endpoint (a compact reply names them once). */
    static Replica.Builder replicaWithoutNames(ReplicaDescriptor d) {
        Replica.Builder r = Replica.newBuilder()
                .setReplicaId(d.replicaId())
                .setType(d.type().value())
                .setStatus(d.status().ordinal())
                .setOffset(d.offset())
                .setSize(d.size())
                .setMountEpoch(d.mountEpoch());
        if (d.grant() != null) {
            r.setGrant(grantMsg(d.grant()));
        }
        return r;
    }

    /** Sets {@code d}'s segment name, node id and endpoint on {@code r}, encoded once ({@link #NAMES}). */
    static Replica.Builder setNames(Replica.Builder r, ReplicaDescriptor d) {
        return r.setSegmentBytes(NAMES.utf8(d.segment()))
                .setNodeIdBytes(NAMES.utf8(d.nodeId()))
                .setEndpointBytes(NAMES.utf8(d.endpoint()));
    }

    private static io.tiffin.core.transport.proto.DataGrant.Builder grantMsg(DataGrant g) {
        return io.tiffin.core.transport.proto.DataGrant.newBuilder().setOps(g.ops()).setExpiresMs(g.expiresAtMillis())
                .setMacHigh(g.macHigh()).setMacLow(g.macLow());
    }

    /** The grant of a replica's descriptor as a data request carries it, with the replica's range (null: none). */
    public static io.tiffin.core.transport.proto.DataGrant grantOf(ReplicaDescriptor d) {
        return d.grant() == null ? null : grantMsg(d.grant()).setOffset(d.offset()).setLength(d.size()).build();
    }

    /** {@code b} with the grant of the replica {@code d} (unchanged when it has none). */
    public static io.tiffin.core.transport.proto.DataRequest.Builder withGrant(
            io.tiffin.core.transport.proto.DataRequest.Builder b, ReplicaDescriptor d) {
        return d.grant() == null ? b : b.setGrant(grantOf(d));
    }

    /** The grant of a replica message (null: none). */
    public static DataGrant grantOf(Replica r) {
        if (!r.hasGrant()) {
            return null;
        }
        io.tiffin.core.transport.proto.DataGrant g = r.getGrant();
        return new DataGrant(g.getOps(), g.getExpiresMs(), g.getMacHigh(), g.getMacLow());
    }

    public static ReplicaDescriptor fromMsg(Replica r) {
        return new ReplicaDescriptor(r.getReplicaId(), ReplicaType.fromValue(r.getType()),
                ReplicaStatus.fromValue(r.getStatus()), r.getSegment(), r.getNodeId(), r.getEndpoint(),
                r.getOffset(), r.getSize(), r.getMountEpoch(), grantOf(r));
    }

    public static List<Replica> toMsgs(List<ReplicaDescriptor> ds) {
        List<Replica> out = new ArrayList<>(ds.size());
        for (ReplicaDescriptor d : ds) {
            out.add(toMsg(d));
        }
        return out;
    }

    public static List<ReplicaDescriptor> fromMsgs(List<Replica> rs) {
        List<ReplicaDescriptor> out = new ArrayList<>(rs.size());
        for (Replica r : rs) {
            out.add(fromMsg(r));
        }
        return out;
    }

    public static ObjectLocationMsg toMsg(ObjectLocation l) {
        return ObjectLocationMsg.newBuilder()
                .setKey(l.key())
                .setSize(l.size())
                .setVersion(l.version())
                .setLeaseTtlMs(l.leaseTtlMillis())
                .addAllReplicas(toMsgs(l.replicas()))
                .setCrc32C(l.crc32c())
                .build();
    }

    public static ObjectLocation fromMsg(ObjectLocationMsg m) {
        return new ObjectLocation(m.getKey(), m.getSize(), m.getVersion(), m.getLeaseTtlMs(),
                fromMsgs(m.getReplicasList()), m.getCrc32C());
    }
}
