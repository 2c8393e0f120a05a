package io.tiffin.core.transport;

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
 * Conversions between the API's value types and their wire messages. Stateless; thread-safe.
 */
public final class Messages {
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
                .build();
    }

    /** Decodes put options; a replica count of 0 (field absent) means 1. */
    public static PutOptions fromMsg(PutOptionsMsg m) {
        int replicas = m.getReplicas() == 0 ? 1 : m.getReplicas();
        Optional<String> preferred = m.getPreferredSegment().isEmpty() ? Optional.empty()
                : Optional.of(m.getPreferredSegment());
        PutOptions.Condition[] conditions = PutOptions.Condition.values();
        if (m.getCondition() >= conditions.length) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "put condition "
                    + m.getCondition() + " is none of 0 (always), 1 (if absent), 2 (if present)");
        }
        try {
            return new PutOptions(replicas, preferred, m.getSoftPin(), m.getHardPin(), m.getUpsert(),
                    m.getReplaceLeased(), m.getTtlMs(), m.getKeepTtl(), conditions[m.getCondition()]);
        } catch (IllegalArgumentException e) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "put options: "
                    + e.getMessage());
        }
    }

    public static Replica toMsg(ReplicaDescriptor d) {
        return Replica.newBuilder()
                .setReplicaId(d.replicaId())
                .setType(d.type().value())
                .setStatus(d.status().ordinal())
                .setSegment(d.segment())
                .setNodeId(d.nodeId())
                .setEndpoint(d.endpoint())
                .setOffset(d.offset())
                .setSize(d.size())
                .setMountEpoch(d.mountEpoch())
                .build();
    }

    public static ReplicaDescriptor fromMsg(Replica r) {
        return new ReplicaDescriptor(r.getReplicaId(), ReplicaType.fromValue(r.getType()),
                ReplicaStatus.fromValue(r.getStatus()), r.getSegment(), r.getNodeId(), r.getEndpoint(),
                r.getOffset(), r.getSize(), r.getMountEpoch());
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
