package io.tiffin.core.node;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.DiskEvicted;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.DiskObjectsReport;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.OffloadResult;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.transport.proto.PromotionEndRequest;
import io.tiffin.core.transport.proto.PromotionStartRequest;
import io.tiffin.core.transport.proto.PromotionTask;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.SsdReadReply;
import io.tiffin.core.transport.proto.SsdReadRequest;
import io.tiffin.core.transport.proto.StorageRegistration;
import io.tiffin.core.transport.proto.TaskPollReply;
import io.tiffin.core.transport.proto.TaskPollRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A node's SSD tier: its {@link StorageBackend} and the two rings that feed it.
 *
 * <ul>
 *   <li><b>offload ring</b>: offload tasks from the master; its worker writes each batch (up to
 *       {@value #OFFLOAD_BATCH} objects, straight from the memory segment) to the backend, reports the
 *       SSD copies and the failures.</li>
 *   <li><b>promotion ring</b>: promotion tasks (the master hands out the hottest first); its worker asks
 *       the master for a memory replica, loads the object from SSD into it and reports the outcome. A
 *       failed promotion leaves the SSD copy readable.</li>
 * </ul>
 * The heartbeat ring of {@link NodeServer} only exchanges task lists ({@link #pollTasks}) and never does
 * this I/O, so a backlog never delays a heartbeat. Reads of SSD-only objects ({@code DATA_READ_SSD}) run
 * on a small I/O pool, never on a Netty event loop.
 *
 * <p>Thread-safe. Owns the backend, the rings and the I/O pool; {@link #close()} stops the rings, then
 * closes the backend, once.
 */
final class NodeStorageTier implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeStorageTier.class);
    static final int OFFLOAD_BATCH = 32;
    private static final int RING_SIZE = 1024;

    /** A reusable ring slot. */
    private static final class TaskEvent {
        OffloadTask offload;
        PromotionTask promotion;
    }

    private final String nodeId;
    private final StorageBackend backend;
    private final LocalSegment segment;
    private final Supplier<TransportClient> master;
    private final TransportClientPool peers;
    private final Disruptor<TaskEvent> offloadDisruptor;
    private final Disruptor<TaskEvent> promotionDisruptor;
    private final RingBuffer<TaskEvent> offloadRing;
    private final RingBuffer<TaskEvent> promotionRing;
    private final ExecutorService io;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger offloadsInRing = new AtomicInteger();
    private final AtomicInteger promotionsInRing = new AtomicInteger();
    private final AtomicBoolean pollInFlight = new AtomicBoolean();
    private final List<OffloadTask> offloadBatch = new ArrayList<>();

    final LongAdder offloaded = new LongAdder();
    final LongAdder offloadFailures = new LongAdder();
    final LongAdder promoted = new LongAdder();
    final LongAdder promotionFailures = new LongAdder();
    final LongAdder ssdReads = new LongAdder();

    NodeStorageTier(String nodeId, StorageBackend backend, LocalSegment segment, Supplier<TransportClient> master,
                    TransportClientPool peers) {
        this.nodeId = nodeId;
        this.backend = backend;
        this.segment = segment;
        this.master = master;
        this.peers = peers;
        this.io = Executors.newFixedThreadPool(2, named("tiffin-node-ssd-io"));
        this.offloadDisruptor = ring("tiffin-node-offload", (ev, seq, end) -> onOffload(ev, end));
        this.promotionDisruptor = ring("tiffin-node-promotion", (ev, seq, end) -> onPromotion(ev));
        this.offloadRing = offloadDisruptor.start();
        this.promotionRing = promotionDisruptor.start();
        backend.listener(new StorageListener() {
            @Override
            public void evicting(List<String> keys) {
                // The master must stop handing out these copies before the files go.
                master.get().callSync(Opcode.EVICT_DISK_REPLICA,
                        DiskEvicted.newBuilder().setNodeId(nodeId).addAllKeys(keys).build(), Empty.parser());
            }

            @Override
            public void lost(List<String> keys) {
                evicting(keys);
            }
        });
    }

    private static java.util.concurrent.ThreadFactory named(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private Disruptor<TaskEvent> ring(String name, EventHandler<TaskEvent> handler) {
        Disruptor<TaskEvent> d = new Disruptor<>(TaskEvent::new, RING_SIZE, named(name), ProducerType.MULTI,
                new BlockingWaitStrategy());
        d.handleEventsWith(handler);
        d.setDefaultExceptionHandler(new ExceptionHandler<>() {
            @Override
            public void handleEventException(Throwable ex, long sequence, TaskEvent event) {
                LOG.error("{} failed on a task; the task is dropped (the master re-queues or times it out)", name, ex);
            }

            @Override
            public void handleOnStartException(Throwable ex) {
                LOG.error("{} failed to start", name, ex);
            }

            @Override
            public void handleOnShutdownException(Throwable ex) {
                LOG.warn("{} failed to stop cleanly", name, ex);
            }
        });
        return d;
    }

    StorageBackend backend() {
        return backend;
    }

    /** Registers the tier with the master and reports every object the backend holds (after a restart too). */
    void register() {
        master.get().callSync(Opcode.REGISTER_STORAGE, StorageRegistration.newBuilder().setNodeId(nodeId)
                .setCapacity(backend.capacityBytes()).build(), Empty.parser());
        List<DiskObject> batch = new ArrayList<>();
        int[] total = new int[1];
        backend.scan((key, size) -> {
            batch.add(DiskObject.newBuilder().setKey(key).setSize(size).build());
            if (batch.size() == 1000) {
                report(batch);
                total[0] += batch.size();
                batch.clear();
            }
        });
        report(batch);
        total[0] += batch.size();
        if (total[0] > 0) {
            LOG.info("Node {} re-registered {} objects from its SSD tier with the master", nodeId, total[0]);
        }
    }

    private void report(List<DiskObject> objects) {
        if (!objects.isEmpty()) {
            master.get().callSync(Opcode.REPORT_DISK_OBJECTS, DiskObjectsReport.newBuilder().setNodeId(nodeId)
                    .addAllObjects(objects).build(), Empty.parser());
        }
    }

    /**
     * Called by the heartbeat ring: asks the master for work for the free ring slots. The request is
     * asynchronous, so the heartbeat thread never waits for the master; the reply's tasks are published
     * to the rings from the connection's event loop (never blocking: only free slots were asked for).
     * At most one poll is in flight.
     */
    void pollTasks() {
        int freeOffloads = Math.max(0, RING_SIZE / 2 - offloadsInRing.get());
        int freePromotions = Math.max(0, 64 - promotionsInRing.get());
        if ((freeOffloads == 0 && freePromotions == 0) || !pollInFlight.compareAndSet(false, true)) {
            return;
        }
        java.util.concurrent.CompletableFuture<Frame> call;
        try {
            call = master.get().call(Opcode.POLL_TASKS, TaskPollRequest.newBuilder().setNodeId(nodeId)
                    .setMaxOffloads(freeOffloads).setMaxPromotions(freePromotions).build(), null);
        } catch (RuntimeException e) {
            pollInFlight.set(false);
            throw e;
        }
        call.whenComplete((frame, err) -> {
            try {
                if (err == null) {
                    accept(frame.parseControl(TaskPollReply.parser()));
                }
            } catch (RuntimeException e) {
                LOG.warn("Node {} could not take its task list: {}", nodeId, e.toString());
            } finally {
                if (frame != null) {
                    frame.release();
                }
                pollInFlight.set(false);
            }
        });
    }

    private void accept(TaskPollReply reply) {
        if (reply.getDeletesCount() > 0) {
            List<String> deletes = List.copyOf(reply.getDeletesList());
            io.execute(() -> {
                try {
                    backend.removeAll(deletes);
                } catch (RuntimeException e) {
                    LOG.warn("Node {} could not delete {} stale SSD copies: {}", nodeId, deletes.size(), e.toString());
                }
            });
        }
        for (OffloadTask t : reply.getOffloadsList()) {
            offloadsInRing.incrementAndGet();
            if (!offloadRing.tryPublishEvent((ev, seq, task) -> {
                ev.offload = task;
                ev.promotion = null;
            }, t)) {
                offloadsInRing.decrementAndGet();
                LOG.warn("Node {} offload ring full; dropped the offload of {}", nodeId, t.getKey());
            }
        }
        for (PromotionTask t : reply.getPromotionsList()) {
            promotionsInRing.incrementAndGet();
            if (!promotionRing.tryPublishEvent((ev, seq, task) -> {
                ev.promotion = task;
                ev.offload = null;
            }, t)) {
                promotionsInRing.decrementAndGet();
                LOG.warn("Node {} promotion ring full; dropped the promotion of {}", nodeId, t.getKey());
            }
        }
    }

    // ------------------------------------------------------------------ offload worker

    private void onOffload(TaskEvent ev, boolean endOfBatch) {
        OffloadTask task = ev.offload;
        ev.offload = null;
        offloadsInRing.decrementAndGet();
        offloadBatch.add(task);
        if (endOfBatch || offloadBatch.size() >= OFFLOAD_BATCH) {
            List<OffloadTask> batch = List.copyOf(offloadBatch);
            offloadBatch.clear();
            writeBatch(batch);
        }
    }

    private void writeBatch(List<OffloadTask> batch) {
        Map<String, MemorySegment> objects = new LinkedHashMap<>();
        List<String> failed = new ArrayList<>();
        for (OffloadTask t : batch) {
            if (!t.getSegment().equals(segment.name())) {
                failed.add(t.getKey());
                continue;
            }
            objects.put(t.getKey(), segment.slice(t.getOffset(), t.getSize()));
        }
        List<DiskObject> written = new ArrayList<>();
        try {
            if (!objects.isEmpty()) {
                backend.writeBatch(objects);
                for (OffloadTask t : batch) {
                    if (objects.containsKey(t.getKey())) {
                        written.add(DiskObject.newBuilder().setKey(t.getKey()).setSize(t.getSize()).build());
                    }
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("Node {} could not offload {} objects to SSD ({}); their memory copies stay", nodeId,
                    objects.size(), e.getMessage());
            failed.addAll(objects.keySet());
        }
        offloaded.add(written.size());
        offloadFailures.add(failed.size());
        report(written);
        if (!failed.isEmpty()) {
            master.get().callSync(Opcode.OFFLOAD_DONE, OffloadResult.newBuilder().setNodeId(nodeId)
                    .addAllFailed(failed).build(), Empty.parser());
        }
    }

    // ------------------------------------------------------------------ promotion worker

    private void onPromotion(TaskEvent ev) {
        PromotionTask task = ev.promotion;
        ev.promotion = null;
        promotionsInRing.decrementAndGet();
        io.tiffin.api.ReplicaDescriptor target;
        try {
            PutStartReply reply = master.get().callSync(Opcode.PROMOTION_START, PromotionStartRequest.newBuilder()
                    .setNodeId(nodeId).setKey(task.getKey()).build(), PutStartReply.parser());
            target = Messages.fromMsg(reply.getReplicas(0));
        } catch (TiffinException e) {
            LOG.debug("promotion of {} not started: {}", task.getKey(), e.getMessage());
            return;
        }
        boolean ok = false;
        try {
            if (target.segment().equals(segment.name())) {
                ok = backend.read(task.getKey(), segment.slice(target.offset(), target.size())) == target.size();
            } else {
                ok = promoteToRemote(task.getKey(), target);
            }
        } catch (RuntimeException e) {
            LOG.warn("Node {} failed to promote {} ({}); the SSD copy stays readable", nodeId, task.getKey(),
                    e.getMessage());
        }
        (ok ? promoted : promotionFailures).increment();
        try {
            master.get().callSync(Opcode.PROMOTION_END, PromotionEndRequest.newBuilder().setNodeId(nodeId)
                    .setKey(task.getKey()).setReplicaId(target.replicaId()).setSuccess(ok).build(), Empty.parser());
        } catch (TiffinException e) {
            LOG.debug("promotion end of {} not accepted: {}", task.getKey(), e.getMessage());
        }
    }

    private boolean promoteToRemote(String key, io.tiffin.api.ReplicaDescriptor target) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment tmp = arena.allocate(target.size());
            if (backend.read(key, tmp) != target.size()) {
                return false;
            }
            ByteBuf bulk = Unpooled.copiedBuffer(tmp.asByteBuffer());
            Frame f = peers.get(target.endpoint()).call(Opcode.DATA_WRITE, DataRequest.newBuilder()
                    .setSegment(target.segment()).setOffset(target.offset()).setLength(target.size())
                    .setMountEpoch(target.mountEpoch()).build(), bulk)
                    .get(30, TimeUnit.SECONDS);
            f.release();
            return true;
        } catch (Exception e) {
            LOG.debug("remote promotion write of {} failed", key, e);
            return false;
        }
    }

    // ------------------------------------------------------------------ reads for clients

    /** {@code DATA_READ_SSD}: reads the objects on the I/O pool and answers them back to back. */
    void serveRead(Frame request, Responder responder) {
        SsdReadRequest req = request.parseControl(SsdReadRequest.parser());
        io.execute(() -> {
            try {
                List<String> keys = req.getKeysList();
                long[] sizes = new long[keys.size()];
                long total = 0;
                for (int i = 0; i < keys.size(); i++) {
                    OptionalLong s = backend.size(keys.get(i));
                    sizes[i] = s.isPresent() ? s.getAsLong() : -1;
                    total += Math.max(0, sizes[i]);
                }
                if (total > Integer.MAX_VALUE - 1024) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, "SSD read of " + total
                            + " bytes in one request; ask for fewer keys");
                }
                ByteBuf out = Unpooled.directBuffer((int) total);
                SsdReadReply.Builder reply = SsdReadReply.newBuilder();
                try {
                    List<String> present = new ArrayList<>();
                    List<MemorySegment> dsts = new ArrayList<>();
                    MemorySegment whole = MemorySegment.ofBuffer(out.nioBuffer(0, (int) total));
                    int off = 0;
                    for (int i = 0; i < keys.size(); i++) {
                        if (sizes[i] > 0) {
                            present.add(keys.get(i));
                            dsts.add(whole.asSlice(off, sizes[i]));
                            off += (int) sizes[i];
                        }
                    }
                    long[] read = backend.readBatch(present, dsts);
                    // Only what was read goes out, back to back. A key whose read failed (a bad checksum, a
                    // file cut short, removed or replaced since its size was taken) answers -1 and takes no
                    // room: the keys after it stay where the client looks for them, and no byte of `out`
                    // that nothing wrote (native memory, not zeroed) is sent.
                    int end = 0;
                    int p = 0;
                    for (int i = 0; i < keys.size(); i++) {
                        if (sizes[i] <= 0) {
                            reply.addSizes(sizes[i]);
                            continue;
                        }
                        MemorySegment slot = dsts.get(p);
                        long r = read[p++];
                        if (r != sizes[i]) {
                            reply.addSizes(-1);
                            continue;
                        }
                        long at = slot.address() - whole.address();
                        if (at != end) {
                            MemorySegment.copy(whole, at, whole, end, r);  // overlap-safe
                        }
                        end += (int) r;
                        reply.addSizes(r);
                    }
                    out.writerIndex(end);
                } catch (RuntimeException e) {
                    out.release();
                    throw e;
                }
                ssdReads.add(keys.size());
                responder.ok(reply.build(), out);
            } catch (TiffinException e) {
                responder.fail(e.code(), e.getMessage());
            } catch (RuntimeException e) {
                LOG.warn("SSD read failed", e);
                responder.fail(ErrorCode.FILE_READ_FAIL, "SSD read failed: " + e.getMessage());
            }
        });
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (Disruptor<TaskEvent> d : List.of(offloadDisruptor, promotionDisruptor)) {
            try {
                d.shutdown(5, TimeUnit.SECONDS);
            } catch (com.lmax.disruptor.TimeoutException e) {
                d.halt();
            }
        }
        io.shutdown();
        try {
            io.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        backend.close();
    }
}
