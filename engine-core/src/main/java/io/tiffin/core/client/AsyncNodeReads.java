package io.tiffin.core.client;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.hotcache.LocalHotCache;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.SsdReadReply;
import io.tiffin.core.transport.proto.SsdReadRequest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads over the asynchronous Netty client ({@link TransportClientPool}): a remote memory replica, falling
 * back to the object's next replicas, and SSD reads ({@code DATA_READ_SSD}, many keys per request). Bytes a
 * read received under its lease are offered to the hot cache when it keeps such objects, after they passed
 * the object's CRC32C ({@link Checksums}; a replica that fails it counts as a failed read, the next is tried);
 * the answers complete on Netty threads, which only copy and checksum, and never block.
 *
 * <p>Thread-safe. Uses, but does not own, the client's Netty connection pool and hot cache.
 */
final class AsyncNodeReads {
    private final TransportClientPool pool;
    private final long sliceSize;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    private final LeaseClock clock;
    private final Checksums checks;

    AsyncNodeReads(TransportClientPool pool, long sliceSize, LocalHotCache hotCache, LeaseClock clock,
                   Checksums checks) {
        this.checks = checks;
        this.pool = pool;
        this.sliceSize = sliceSize;
        this.hotCache = hotCache;
        this.clock = clock;
    }

    /** Most bytes of SSD objects asked of one node in one request: what fits a frame, with room to spare. */
    long ssdRequestBudget() {
        return Math.max(1, pool.settings().maxFrameSize() - (1L << 20));
    }

    /**
     * Reads replica {@code index} of {@code loc} (falling back to the next ones) into {@code dst}. With
     * {@code fill}, the received buffers are kept (retained slices, no copy on this path) and
     * handed to the hot cache once the whole object has arrived, passed its checksum, within the lease counted
     * from {@code startNanos}.
     */
    CompletableFuture<Void> readRemote(List<ReplicaDescriptor> replicas, int index, MemorySegment dst,
                                       ObjectLocation loc, boolean fill, long startNanos) {
        ObjectLocation fillFor = fill ? loc : null;
        ReplicaDescriptor d = replicas.get(index);
        CompletableFuture<Void> attempt;
        int slices = (int) ((d.size() + sliceSize - 1) / sliceSize);
        ByteBuf[] kept = fillFor == null ? null : new ByteBuf[slices];
        try {
            TransportClient node = pool.get(d.endpoint());
            List<CompletableFuture<?>> parts = new ArrayList<>(slices);
            for (int i = 0; i < slices; i++) {
                long off = i * sliceSize;
                long len = Math.min(sliceSize, d.size() - off);
                MemorySegment target = dst.asSlice(off, len);
                int slice = i;
                DataRequest req = Messages.withGrant(DataRequest.newBuilder().setSegment(d.segment())
                        .setOffset(d.offset() + off).setLength(len).setMountEpoch(d.mountEpoch()), d).build();
                parts.add(node.call(Opcode.DATA_READ, req, null).thenAccept(frame -> {
                    try {
                        ByteBuf bulk = frame.bulk();
                        if (bulk.readableBytes() != len) {
                            throw new TiffinException(ErrorCode.TRANSFER_FAIL, "node " + d.endpoint() + " sent "
                                    + bulk.readableBytes() + " bytes, expected " + len);
                        }
                        bulk.getBytes(bulk.readerIndex(), target.asByteBuffer());
                        if (kept != null) {
                            kept[slice] = bulk.retainedSlice();
                        }
                    } finally {
                        frame.release();
                    }
                }));
            }
            attempt = CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenRun(() -> {
                TiffinException bad = checks.mismatch(loc, d, dst.asSlice(0, d.size()));
                if (bad != null) {
                    throw bad;
                }
            });
        } catch (RuntimeException e) {
            attempt = CompletableFuture.failedFuture(e);
        }
        if (kept != null) {
            attempt = attempt.whenComplete((v, err) -> {
                if (err == null && clock.withinLease(fillFor, startNanos)) {
                    hotCache.offerFill(fillFor.key(), fillFor.version(), fillFor.size(), Arrays.asList(kept));
                } else {
                    for (ByteBuf b : kept) {
                        if (b != null) {
                            b.release();
                        }
                    }
                }
            });
        }
        if (index + 1 >= replicas.size()) {
            return attempt;
        }
        return attempt.handle((v, err) -> err == null ? CompletableFuture.<Void>completedFuture(null)
                : readRemote(replicas, index + 1, dst, loc, fill, startNanos)).thenCompose(f -> f);
    }

    /** One object to read from a node's SSD into {@code dst}; {@code done} completes when it is there. */
    record SsdRead(ObjectLocation loc, MemorySegment dst, CompletableFuture<Void> done) {
    }

    /**
     * Sends one {@code DATA_READ_SSD} for {@code chunk} to {@code endpoint}; each read completes when its
     * bytes are in its destination (answered asynchronously). A copy of another size than the location's
     * is not this version: that read fails {@code OBJECT_NOT_FOUND}. Bytes read within the lease counted
     * from {@code startNanos} are offered to the hot cache.
     */
    void readSsd(String endpoint, List<SsdRead> chunk, long startNanos) {
        SsdReadRequest.Builder req = SsdReadRequest.newBuilder();
        for (SsdRead p : chunk) {
            req.addKeys(p.loc().key());
        }
        CompletableFuture<Frame> call;
        try {
            call = pool.get(endpoint).call(Opcode.DATA_READ_SSD, req.build(), null);
        } catch (RuntimeException ex) {
            chunk.forEach(p -> p.done().completeExceptionally(ex));
            return;
        }
        call.whenComplete((frame, err) -> {
            if (err != null) {
                chunk.forEach(p -> p.done().completeExceptionally(err));
                return;
            }
            try {
                SsdReadReply reply = frame.parseControl(SsdReadReply.parser());
                ByteBuf bulk = frame.bulk();
                checkSsdReply(endpoint, chunk.size(), reply.getSizesList(), bulk.readableBytes());
                int at = bulk.readerIndex();
                for (int i = 0; i < chunk.size(); i++) {
                    SsdRead p = chunk.get(i);
                    long size = reply.getSizes(i);
                    if (size != p.loc().size()) {
                        // the node's copy has another size: not this version; its bytes are skipped
                        at += (int) Math.max(0, size);
                        p.done().completeExceptionally(new TiffinException(ErrorCode.OBJECT_NOT_FOUND,
                                p.loc().key() + ": its SSD copy on " + endpoint + " is gone or corrupt"));
                        continue;
                    }
                    bulk.getBytes(at, p.dst().asByteBuffer());
                    TiffinException bad = checks.mismatch(p.loc(), ssdDescriptor(p.loc(), endpoint), p.dst());
                    if (bad != null) {
                        at += (int) size;
                        p.done().completeExceptionally(bad);
                        continue;
                    }
                    if (hotCache != null && hotCache.accepts(size) && clock.withinLease(p.loc(), startNanos)) {
                        hotCache.offerFill(p.loc().key(), p.loc().version(), size,
                                List.of(bulk.retainedSlice(at, (int) size)));
                    }
                    at += (int) size;
                    p.done().complete(null);
                }
            } catch (RuntimeException ex) {
                chunk.forEach(p -> p.done().completeExceptionally(ex));
            } finally {
                frame.release();
            }
        });
    }

    /** The SSD copy on the node at {@code endpoint} that {@code loc} names (for an error message). */
    private static ReplicaDescriptor ssdDescriptor(ObjectLocation loc, String endpoint) {
        for (ReplicaDescriptor d : loc.replicas()) {
            if (d.type() == io.tiffin.api.ReplicaType.LOCAL_DISK && d.endpoint().equals(endpoint)) {
                return d;
            }
        }
        return loc.replicas().getLast();
    }

    /**
     * Checks a {@code DATA_READ_SSD} answer before any of its bytes is used: one size per key asked for
     * (-1 = not read, taking no room) and the bulk exactly the sum of the others, so every key's bytes are
     * where the sizes say.
     *
     * @throws TiffinException {@code TRANSFER_FAIL} naming the node, when the answer does not add up
     */
    static void checkSsdReply(String endpoint, int keys, List<Long> sizes, long bulkBytes) {
        long sum = 0;
        for (long size : sizes) {
            sum += Math.max(0, size);
        }
        if (sizes.size() != keys || sum != bulkBytes) {
            throw new TiffinException(ErrorCode.TRANSFER_FAIL, "node " + endpoint + " answered an SSD read of " + keys
                    + " keys with " + sizes.size() + " sizes adding up to " + sum + " bytes and " + bulkBytes
                    + " bytes of data; is it running the same Tiffin version?");
        }
    }
}
