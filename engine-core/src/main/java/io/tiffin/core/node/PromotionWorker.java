package io.tiffin.core.node;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PromotionEndRequest;
import io.tiffin.core.transport.proto.PromotionStartRequest;
import io.tiffin.core.transport.proto.PromotionTask;
import io.tiffin.core.transport.proto.PutStartReply;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Loads SSD-only objects back into memory, as the master asks (promotion tasks, hottest first): for
 * each, its thread asks the master for a memory replica ({@code PROMOTION_START}), reads the object from
 * the backend into it (this node's segment, or another node's over {@code DATA_WRITE}) and reports the
 * outcome ({@code PROMOTION_END}). A failed promotion leaves the SSD copy readable.
 *
 * <p>Thread-safe: {@link #offer} from any thread (never blocking); the tasks run on the ring's thread.
 * Owns its ring, stopped by {@link #close()}; borrows the backend and the segment from its {@link
 * NodeStorageTier}, and the connections from the node.
 */
final class PromotionWorker implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(PromotionWorker.class);
    private static final int RING_SIZE = 1024;
    /** Promotions queued at most: each poll asks the master for no more than the room left below it. */
    private static final int MAX_QUEUED = 64;

    /** A reusable ring slot. */
    private static final class Slot {
        PromotionTask task;
    }

    private final String nodeId;
    private final StorageBackend backend;
    private final LocalSegment segment;
    private final Supplier<TransportClient> master;
    private final TransportClientPool peers;
    private final TaskRing<Slot> ring;
    private final AtomicInteger inRing = new AtomicInteger();

    final LongAdder promoted = new LongAdder();
    final LongAdder failures = new LongAdder();
    private final LongAdder refusedCorrupt = new LongAdder();

    PromotionWorker(String nodeId, StorageBackend backend, LocalSegment segment, Supplier<TransportClient> master,
                    TransportClientPool peers) {
        this.nodeId = nodeId;
        this.backend = backend;
        this.segment = segment;
        this.master = master;
        this.peers = peers;
        this.ring = new TaskRing<>("tiffin-node-promotion", RING_SIZE, Slot::new, (slot, seq, end) -> onSlot(slot));
    }

    /** How many more promotions to ask the master for. */
    int room() {
        return Math.max(0, MAX_QUEUED - inRing.get());
    }

    /** Queues {@code task}; drops it with a WARN line when the ring is full (the master times it out). */
    void offer(PromotionTask task) {
        inRing.incrementAndGet();
        if (!ring.tryPublish((slot, seq, t) -> slot.task = t, task)) {
            inRing.decrementAndGet();
            LOG.warn("Node {} promotion ring full; dropped the promotion of {}", nodeId, task.getKey());
        }
    }

    private void onSlot(Slot slot) {
        PromotionTask task = slot.task;
        slot.task = null;
        inRing.decrementAndGet();
        ReplicaDescriptor target;
        int crc32c;
        try {
            PutStartReply reply = master.get().callSync(Opcode.PROMOTION_START, PromotionStartRequest.newBuilder()
                    .setNodeId(nodeId).setKey(task.getKey()).build(), PutStartReply.parser());
            target = Messages.fromMsg(reply.getReplicas(0));
            crc32c = reply.getCrc32C();
        } catch (TiffinException e) {
            LOG.debug("promotion of {} not started: {}", task.getKey(), e.getMessage());
            return;
        }
        boolean ok = false;
        try {
            if (target.segment().equals(segment.name())) {
                MemorySegment dst = segment.slice(target.offset(), target.size());
                ok = backend.read(task.getKey(), dst) == target.size() && verified(task.getKey(), dst, crc32c);
            } else {
                ok = promoteToRemote(task.getKey(), target, crc32c);
            }
        } catch (RuntimeException e) {
            LOG.warn("Node {} failed to promote {} ({}); the SSD copy stays readable", nodeId, task.getKey(),
                    e.getMessage());
        }
        (ok ? promoted : failures).increment();
        try {
            master.get().callSync(Opcode.PROMOTION_END, PromotionEndRequest.newBuilder().setNodeId(nodeId)
                    .setKey(task.getKey()).setReplicaId(target.replicaId()).setSuccess(ok).build(), Empty.parser());
        } catch (TiffinException e) {
            LOG.debug("promotion end of {} not accepted: {}", task.getKey(), e.getMessage());
        }
    }

    /**
     * Whether the SSD copy of {@code key} just read into {@code bytes} has the object's checksum ({@code crc32c};
     * 0 = none: not checked). A copy that fails it is not promoted: the promotion ends unsuccessful and the
     * memory replica the master allocated for it is freed.
     */
    private boolean verified(String key, MemorySegment bytes, int crc32c) {
        if (crc32c == 0) {
            return true;
        }
        int actual = io.tiffin.core.util.Crc32c.of(bytes);
        if (actual == crc32c) {
            return true;
        }
        refusedCorrupt.increment();
        LOG.warn("Node {} refuses to promote {}: its SSD copy has CRC32C {}, the object's is {}; the copy is corrupt",
                nodeId, key, io.tiffin.core.util.Crc32c.hex(actual), io.tiffin.core.util.Crc32c.hex(crc32c));
        return false;
    }

    /** Promotions refused because the SSD copy failed the object's checksum. */
    long refusedCorrupt() {
        return refusedCorrupt.sum();
    }

    private boolean promoteToRemote(String key, ReplicaDescriptor target, int crc32c) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tmp = arena.allocate(target.size());
            if (backend.read(key, tmp) != target.size() || !verified(key, tmp, crc32c)) {
                return false;
            }
            ByteBuf bulk = Unpooled.copiedBuffer(tmp.asByteBuffer());
            Frame f = peers.get(target.endpoint()).call(Opcode.DATA_WRITE, io.tiffin.core.transport.Messages.withGrant(
                    DataRequest.newBuilder().setSegment(target.segment()).setOffset(target.offset())
                    .setLength(target.size()).setMountEpoch(target.mountEpoch()), target).build(), bulk)
                    .get(30, TimeUnit.SECONDS);
            f.release();
            return true;
        } catch (Exception e) {
            LOG.debug("remote promotion write of {} failed", key, e);
            return false;
        }
    }

    /** Lets the thread finish the promotion it has taken (up to 5 s), then stops it. */
    @Override
    public void close() {
        ring.close();
    }
}
