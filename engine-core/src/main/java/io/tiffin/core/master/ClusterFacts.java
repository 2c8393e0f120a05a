package io.tiffin.core.master;

import com.google.protobuf.InvalidProtocolBufferException;
import io.tiffin.core.coordination.StateConflictException;
import io.tiffin.core.coordination.StateStore;
import io.tiffin.core.transport.proto.ClusterStateMsg;
import io.tiffin.core.transport.proto.DiskFloor;
import io.tiffin.core.transport.proto.SegmentFact;
import java.util.Collection;
import java.util.List;

/**
 * The few facts a master that takes over (or restarts with {@code master.state-dir}) needs and cannot learn from
 * the nodes: the leader's term, the segments mounted (so it knows which nodes to wait for, and that a node it does
 * not list must re-mount empty), and where versions and replica ids continue. Kept in a {@link StateStore} (a
 * znode, or a file), every write a compare-and-set: the first write of a new leader (its term) makes every later
 * write of its predecessor fail, and a master whose write fails learns it was deposed ({@code onDeposed}).
 * Written on mounts, unmounts and node expiry (rare), when a block of ids is used up ({@link #ID_BLOCK}), and when a
 * node's SSD copies could not be deleted ({@link DiskFloors}), never on the put or get path.
 *
 * <p>Thread-safe: writes are serialized on this object.
 */
final class ClusterFacts {
    /** Versions and replica ids reserved at a time: a successor starts above them. */
    static final long ID_BLOCK = 1L << 26;
    /**
     * Bytes of keys the facts list, over all nodes, as removed while their node's SSD copies could not be deleted;
     * past it a node's list becomes a floor (the facts stay small: a znode, rewritten whole on every write).
     */
    static final int MAX_LISTED_KEY_BYTES = 64 * 1024;

    private final StateStore store;
    private final Runnable onDeposed;
    private ClusterStateMsg current = ClusterStateMsg.getDefaultInstance();
    private long version = -1;

    ClusterFacts(StateStore store, Runnable onDeposed) {
        this.store = store;
        this.onDeposed = onDeposed;
    }

    /**
     * Takes over as {@code self}: reads the facts, moves to the next term and reserves ids above {@code versionsFrom}
     * / {@code replicaIdsFrom} (this master's clock-based starts) and above the previous leader's reservations.
     * Returns the facts as the previous leader left them.
     */
    synchronized ClusterStateMsg claim(String self, long versionsFrom, long replicaIdsFrom) {
        StateStore.Snapshot s = store.read();
        ClusterStateMsg previous;
        try {
            previous = s.data().length == 0 ? ClusterStateMsg.getDefaultInstance() : ClusterStateMsg.parseFrom(s.data());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("the cluster facts do not decode (" + e.getMessage() + ")", e);
        }
        version = s.version();
        current = previous;
        long versionFloor = Math.max(versionsFrom, previous.getVersionFloor()) + ID_BLOCK;
        long replicaFloor = Math.max(replicaIdsFrom, previous.getReplicaIdFloor()) + ID_BLOCK;
        write(previous.toBuilder().setTerm(previous.getTerm() + 1).setLeader(self).setVersionFloor(versionFloor)
                .setReplicaIdFloor(replicaFloor).build());
        return previous;
    }

    synchronized long term() {
        return current.getTerm();
    }

    synchronized ClusterStateMsg current() {
        return current;
    }

    /** A segment was mounted (or mounted again by a new incarnation); durable when this returns. */
    synchronized void segmentMounted(SegmentFact fact) {
        ClusterStateMsg.Builder b = current.toBuilder().clearSegments();
        for (SegmentFact f : current.getSegmentsList()) {
            if (!f.getName().equals(fact.getName())) {
                b.addSegments(f);
            }
        }
        write(b.addSegments(fact).build());
    }

    /** Segments were unmounted (a graceful stop, node expiry, a restart of the node); durable when this returns. */
    synchronized void segmentsGone(Collection<String> names) {
        if (names.isEmpty() || current.getSegmentsList().stream().noneMatch(f -> names.contains(f.getName()))) {
            return;
        }
        ClusterStateMsg.Builder b = current.toBuilder().clearSegments();
        for (SegmentFact f : current.getSegmentsList()) {
            if (!names.contains(f.getName())) {
                b.addSegments(f);
            }
        }
        write(b.build());
    }

    /** Reserves the next block when {@code version} or {@code replicaId} reaches the end of the reserved ones. */
    synchronized void ensureReserved(long version, long replicaId) {
        if (version < current.getVersionFloor() && replicaId < current.getReplicaIdFloor()) {
            return;
        }
        write(current.toBuilder().setVersionFloor(Math.max(version, current.getVersionFloor()) + ID_BLOCK)
                .setReplicaIdFloor(Math.max(replicaId, current.getReplicaIdFloor()) + ID_BLOCK).build());
    }

    /** What copies {@code nodeId} reports may be of removed objects ({@link DiskFloors}); null for none. */
    synchronized DiskFloor diskFloor(String nodeId) {
        for (DiskFloor f : current.getDiskFloorsList()) {
            if (f.getNodeId().equals(nodeId)) {
                return f;
            }
        }
        return null;
    }

    /**
     * Deletions of these SSD copies on {@code nodeId} were counted as done without the node: lists their keys with
     * their versions, or, once the listed keys of all nodes would pass {@link #MAX_LISTED_KEY_BYTES}, sets the node's
     * floor to every version handed out so far (the node, gone, can hold none later) instead. Durable when this
     * returns; writes only what is not covered yet.
     */
    synchronized void recordLostDeletions(String nodeId, List<String> keys, List<Long> versions) {
        DiskFloor existing = diskFloor(nodeId);
        if (existing != null && existing.getVersion() > 0) {
            return; // a floor covers every copy the node can hold
        }
        java.util.LinkedHashMap<String, Long> listed = new java.util.LinkedHashMap<>();
        if (existing != null) {
            for (int i = 0; i < existing.getKeysCount(); i++) {
                listed.put(existing.getKeys(i), existing.getKeyVersions(i));
            }
        }
        boolean changed = false;
        for (int i = 0; i < keys.size(); i++) {
            long v = versions.get(i);
            Long before = listed.get(keys.get(i));
            if (before == null || (before != 0 && (v == 0 || v > before))) {
                listed.put(keys.get(i), v);
                changed = true;
            }
        }
        if (!changed) {
            return;
        }
        long bytes = 0;
        for (DiskFloor f : current.getDiskFloorsList()) {
            if (!f.getNodeId().equals(nodeId)) {
                for (String k : f.getKeysList()) {
                    bytes += k.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
                }
            }
        }
        for (String k : listed.keySet()) {
            bytes += k.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        }
        DiskFloor.Builder next = DiskFloor.newBuilder().setNodeId(nodeId);
        if (existing != null) {
            next.setAwayFloor(existing.getAwayFloor()).setAwayTerm(existing.getAwayTerm());
        }
        if (bytes > MAX_LISTED_KEY_BYTES) {
            next.setVersion(current.getVersionFloor());
        } else {
            listed.forEach((k, v) -> next.addKeys(k).addKeyVersions(v));
        }
        write(withDiskFloor(nodeId, next.build()));
    }

    /**
     * {@code nodeId} left while this master, of {@code term}, forgot its SSD-only objects and kept their keys in its
     * memory only ({@code AwayCopies}): a master of another term is to take every copy the node holds now (every
     * version handed out so far) for maybe removed ({@code DiskFloor.away_floor}). An away floor of an earlier term
     * stays as it is (this master has no keys from before its term either). Durable when this returns.
     */
    synchronized void recordAwayFloor(String nodeId, long term) {
        DiskFloor existing = diskFloor(nodeId);
        if (existing != null && existing.getAwayFloor() > 0 && existing.getAwayTerm() != term) {
            return;
        }
        DiskFloor.Builder b = existing == null ? DiskFloor.newBuilder().setNodeId(nodeId) : existing.toBuilder();
        write(withDiskFloor(nodeId, b.setAwayFloor(current.getVersionFloor()).setAwayTerm(term).build()));
    }

    /** Drops {@code nodeId}'s entry if it is still {@code seen} (nothing added since); durable when this returns. */
    synchronized void clearDiskFloor(String nodeId, DiskFloor seen) {
        DiskFloor now = diskFloor(nodeId);
        if (now != null && now.equals(seen)) {
            write(withDiskFloor(nodeId, null));
        }
    }

    private ClusterStateMsg withDiskFloor(String nodeId, DiskFloor entry) {
        ClusterStateMsg.Builder b = current.toBuilder().clearDiskFloors();
        for (DiskFloor f : current.getDiskFloorsList()) {
            if (!f.getNodeId().equals(nodeId)) {
                b.addDiskFloors(f);
            }
        }
        if (entry != null) {
            b.addDiskFloors(entry);
        }
        return b.build();
    }

    /** The segments as the facts list them. */
    synchronized List<SegmentFact> segments() {
        return current.getSegmentsList();
    }

    private void write(ClusterStateMsg next) {
        try {
            version = store.write(next.toByteArray(), version);
            current = next;
        } catch (StateConflictException e) {
            onDeposed.run();
            throw e;
        }
    }
}
