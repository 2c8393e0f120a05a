package io.tiffin.core.client;

import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.DataRequest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Memory reads and writes on nodes' data planes, cut in slices of at most {@code client.transfer-slice-size}
 * and gathered per node ({@link NodeRequests}), sent over pooled blocking connections driven by the calling
 * thread ({@link BlockingConnectionPool#exchange}): every request to every node is written before any answer
 * is read, and answers are received straight into the caller's memory.
 *
 * <p>Thread-safe. Uses, but does not own, the client's connection pool.
 */
final class SliceExchange {
    private final BlockingConnectionPool connections;
    private final long sliceSize;
    private final LeaseClock clock;
    private final ClientLifecycle lifecycle;

    SliceExchange(BlockingConnectionPool connections, long sliceSize, LeaseClock clock, ClientLifecycle lifecycle) {
        this.connections = connections;
        this.sliceSize = sliceSize;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    long sliceSize() {
        return sliceSize;
    }

    /**
     * Data-plane requests for one node gathered during one call, each tagged with the object it serves.
     *
     * <p>Not thread-safe: used by the calling thread only.
     */
    static final class NodeRequests {
        final String endpoint;
        final List<DataRequest> requests = new ArrayList<>();
        final List<MemorySegment> bulks = new ArrayList<>();
        final List<Integer> owners = new ArrayList<>();

        NodeRequests(String endpoint) {
            this.endpoint = endpoint;
        }

        void add(int owner, DataRequest request, MemorySegment bulk) {
            owners.add(owner);
            requests.add(request);
            bulks.add(bulk);
        }
    }

    /**
     * Adds the slices writing {@code src} (the object {@code owner}) to replica {@code d}; the last carries
     * {@code commit} (null = none): the node records the object once all its slices are written (they arrive in
     * order on one connection).
     */
    void addWrite(Map<String, NodeRequests> byNode, int owner, ReplicaDescriptor d, MemorySegment src,
                  io.tiffin.core.transport.proto.CommitRecord commit) {
        if (d.size() == 0) {
            if (commit != null) {
                addCommit(byNode, owner, d, commit); // a 0-byte object: its record alone
            }
            return;
        }
        NodeRequests batch = byNode.computeIfAbsent(d.endpoint(), NodeRequests::new);
        io.tiffin.core.transport.proto.DataGrant grant = Messages.grantOf(d);
        for (long off = 0; off < d.size(); off += sliceSize) {
            long len = Math.min(sliceSize, d.size() - off);
            DataRequest.Builder req = DataRequest.newBuilder().setSegment(d.segment()).setOffset(d.offset() + off)
                    .setLength(len).setMountEpoch(d.mountEpoch());
            if (grant != null) {
                req.setGrant(grant);
            }
            if (commit != null && off + len >= d.size()) {
                req.setCommit(commit);
            }
            batch.add(owner, req.build(), src.asSlice(off, len));
        }
    }

    /** Adds a write of no bytes carrying {@code commit} for replica {@code d}, copied into its node's memory directly. */
    void addCommit(Map<String, NodeRequests> byNode, int owner, ReplicaDescriptor d,
                   io.tiffin.core.transport.proto.CommitRecord commit) {
        byNode.computeIfAbsent(d.endpoint(), NodeRequests::new).add(owner, Messages.withGrant(DataRequest.newBuilder()
                .setSegment(d.segment()).setOffset(d.offset()).setLength(0).setMountEpoch(d.mountEpoch())
                .setCommit(commit), d).build(), null);
    }

    /** Sends the writes gathered in {@code byNode}; per object (0 to {@code objects} - 1) null or its first failure. */
    TiffinException[] write(Collection<NodeRequests> byNode, int objects) {
        return exchange(Opcode.DATA_WRITE, byNode, objects, 0);
    }

    /**
     * Reads object k from {@code replicas.get(k)} into the pieces {@code targets.get(k)} (in order, together
     * the object's size), pipelined per node; waits for answers until {@code leaseEndNanos} (of the client's
     * clock) at most: the end of the reads' leases, after which the bytes may be another object's anyway.
     * Returns per object null or its failure.
     */
    TiffinException[] readScattered(List<ReplicaDescriptor> replicas, List<List<MemorySegment>> targets,
                                    long leaseEndNanos) {
        return readScattered(replicas, null, targets, leaseEndNanos);
    }

    /**
     * As {@link #readScattered(List, List, long)}, the pieces of object k receiving its bytes from offset
     * {@code from[k]} of the object on ({@code from} null: from its start): a range of it, the rest not moved.
     */
    TiffinException[] readScattered(List<ReplicaDescriptor> replicas, long[] from, List<List<MemorySegment>> targets,
                                    long leaseEndNanos) {
        Map<String, NodeRequests> byNode = new LinkedHashMap<>();
        for (int k = 0; k < replicas.size(); k++) {
            ReplicaDescriptor d = replicas.get(k);
            NodeRequests batch = byNode.computeIfAbsent(d.endpoint(), NodeRequests::new);
            io.tiffin.core.transport.proto.DataGrant grant = Messages.grantOf(d);
            long objectOffset = from == null ? 0 : from[k];
            for (MemorySegment piece : targets.get(k)) {
                for (long off = 0; off < piece.byteSize(); off += sliceSize) {
                    long len = Math.min(sliceSize, piece.byteSize() - off);
                    DataRequest.Builder req = DataRequest.newBuilder().setSegment(d.segment())
                            .setMountEpoch(d.mountEpoch()).setOffset(d.offset() + objectOffset + off).setLength(len);
                    if (grant != null) {
                        req.setGrant(grant);
                    }
                    batch.add(k, req.build(), piece.asSlice(off, len));
                }
                objectOffset += piece.byteSize();
            }
        }
        long end = leaseEndNanos;
        return exchange(Opcode.DATA_READ, byNode.values(), replicas.size(), end == 0 ? 1 : end);
    }

    /**
     * Sends the data-plane requests of {@code batches} (one per node) with {@link
     * BlockingConnectionPool#exchange}: DATA_WRITE carries each request's bulk out, DATA_READ receives
     * each answer into it; {@code endNanos} is the transport's deadline (0 = only the RPC timeout). Returns
     * per object (the requests' owners, 0 to {@code objects} - 1) null or its first failure.
     */
    private TiffinException[] exchange(Opcode opcode, Collection<NodeRequests> batches, int objects, long endNanos) {
        TiffinException[] failed = new TiffinException[objects];
        List<NodeRequests> list = new ArrayList<>(batches);
        boolean write = opcode == Opcode.DATA_WRITE;
        try {
            TiffinException[][] outcome = connections.exchange(opcode, list.stream().map(b ->
                    new BlockingConnectionPool.Batch(b.endpoint, b.requests, write ? b.bulks : null,
                            write ? null : b.bulks)).toList(), endNanos);
            for (int b = 0; b < list.size(); b++) {
                for (int i = 0; i < outcome[b].length; i++) {
                    int k = list.get(b).owners.get(i);
                    if (outcome[b][i] != null && failed[k] == null) {
                        failed[k] = outcome[b][i];
                    }
                }
            }
        } catch (RuntimeException e) {
            Arrays.fill(failed, e instanceof TiffinException t ? t : lifecycle.transferFailure(opcode.name(), e));
        }
        return failed;
    }
}
