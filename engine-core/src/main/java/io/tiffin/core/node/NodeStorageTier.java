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
import io.tiffin.core.local.LocalSegment;
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
import java.util.concurrent.locks.ReentrantLock;
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
 * <p><b>Eviction notices</b>: copies the backend evicts or finds corrupt ({@link StorageListener}) must
 * leave the master's listing. The listener runs on the backend's writer or reader thread (the bucket
 * backend evicts under its write lock), so it only records the keys, coalesced (each key queued at most
 * once, none ever dropped). The offload worker sends them ({@code EVICT_DISK_REPLICA}, up to
 * {@value #NOTICE_BATCH} keys a call) right after each write batch and whenever the heartbeat ring's
 * POLL tick asks ({@link #queueNoticeDelivery}); a failed send puts its keys back and is retried with a
 * back-off of {@value #NOTICE_RETRY_MIN_MILLIS} ms doubling to {@value #NOTICE_RETRY_MAX_MILLIS} ms until
 * the master takes them, or until {@link #close()}. The master ignores keys it no longer knows.
 *
 * <p><b>Order of what the master hears about the SSD</b>: the master knows a copy only by node and key,
 * so a notice that arrives after a newer copy of the key was reported would drop the new copy from its
 * listing. Hence: write batches with their reports, notice sends and {@link #register} scans with their
 * reports run one at a time ({@code diskReports}), each message answered before the next is sent; a
 * write of a key drops the notices queued for it (they were about copies the write replaced: backends
 * evict before they write); a notice of a <i>lost</i> copy (sent by the backend after the drop) whose
 * key the backend holds again when it is sent is dropped too (a newer copy came after the loss).
 *
 * <p>Thread-safe. Owns the backend, the rings and the I/O pool; {@link #close()} stops the rings, then
 * closes the backend, once.
 */
final class NodeStorageTier implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeStorageTier.class);
    static final int OFFLOAD_BATCH = 32;
    private static final int RING_SIZE = 1024;
    static final int NOTICE_BATCH = 1000;
    static final long NOTICE_RETRY_MIN_MILLIS = 100;
    static final long NOTICE_RETRY_MAX_MILLIS = 5_000;

    /** A reusable ring slot: an offload, a promotion, or (offload ring) "send the eviction notices". */
    private static final class TaskEvent {
        OffloadTask offload;
        PromotionTask promotion;
        boolean deliverNotices;
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
    /**
     * Keys whose SSD copies went and the master has not taken yet, in queue order; the value is true when
     * every notice of the key was a loss (sent by the backend after the copy was dropped). Guarded by itself.
     */
    private final LinkedHashMap<String, Boolean> notices = new LinkedHashMap<>();
    /** Whether a "send the notices" event is in the offload ring. */
    private final AtomicBoolean noticeDeliveryQueued = new AtomicBoolean();
    /** Serialises what the node tells the master about its SSD copies (see the class comment). */
    private final ReentrantLock diskReports = new ReentrantLock();
    /** System.nanoTime() before which no notice is sent (back-off after a failure); written by the offload worker. */
    private volatile long noticeRetryAtNanos = System.nanoTime();
    /** Offload worker only: the current back-off and how many sends failed in a row. */
    private long noticeBackoffMillis = NOTICE_RETRY_MIN_MILLIS;
    private long noticeFailures;

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
                // Called under the backend's write lock: only queue; the offload worker tells the master.
                queueNotices(keys, false);
            }

            @Override
            public void lost(List<String> keys) {
                queueNotices(keys, true);
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
        int[] total = new int[1];
        // Not while a write may evict what the scan has seen: its notice would reach the master first.
        diskReports.lock();
        try {
            master.get().callSync(Opcode.REGISTER_STORAGE, StorageRegistration.newBuilder().setNodeId(nodeId)
                    .setCapacity(backend.capacityBytes()).build(), Empty.parser());
            List<DiskObject> batch = new ArrayList<>();
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
        } finally {
            diskReports.unlock();
        }
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
                ev.deliverNotices = false;
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
                ev.deliverNotices = false;
            }, t)) {
                promotionsInRing.decrementAndGet();
                LOG.warn("Node {} promotion ring full; dropped the promotion of {}", nodeId, t.getKey());
            }
        }
    }

    // ------------------------------------------------------------------ offload worker

    private void onOffload(TaskEvent ev, boolean endOfBatch) {
        if (ev.deliverNotices) {
            ev.deliverNotices = false;
            noticeDeliveryQueued.set(false);
            writeCollected(); // offloads taken before this event go first
            deliverNotices();
            return;
        }
        OffloadTask task = ev.offload;
        ev.offload = null;
        offloadsInRing.decrementAndGet();
        offloadBatch.add(task);
        if (endOfBatch || offloadBatch.size() >= OFFLOAD_BATCH) {
            writeCollected();
            deliverNotices(); // the write may have evicted: tell the master now, not at the next tick
        }
    }

    private void writeCollected() {
        if (!offloadBatch.isEmpty()) {
            List<OffloadTask> batch = List.copyOf(offloadBatch);
            offloadBatch.clear();
            writeBatch(batch);
        }
    }

    private void writeBatch(List<OffloadTask> batch) {
        diskReports.lock();
        try {
            writeAndReport(batch);
        } finally {
            diskReports.unlock();
        }
    }

    private void writeAndReport(List<OffloadTask> batch) {
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
                // The backend now holds these keys: notices queued for them were about the copies this
                // write replaced (evicted or lost before it), and must not reach the master after the
                // report of the new copies below.
                forgetNotices(objects.keySet());
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

    // ------------------------------------------------------------------ eviction notices

    /** The listener's side: records the keys and returns; never blocks on I/O. */
    private void queueNotices(List<String> keys, boolean lost) {
        synchronized (notices) {
            for (String key : keys) {
                notices.merge(key, lost, Boolean::logicalAnd);
            }
        }
    }

    /** Forgets queued notices of keys the node has just written; offload worker, under {@code diskReports}. */
    private void forgetNotices(java.util.Collection<String> keys) {
        synchronized (notices) {
            if (!notices.isEmpty()) {
                notices.keySet().removeAll(keys);
            }
        }
    }

    /** How many keys wait for the master to take their eviction notice. */
    int pendingNotices() {
        synchronized (notices) {
            return notices.size();
        }
    }

    /**
     * Called by the heartbeat ring's POLL tick: if notices wait and no back-off runs, asks the offload
     * worker to send them. Never blocks and never throws.
     */
    void queueNoticeDelivery() {
        if (closed.get() || System.nanoTime() - noticeRetryAtNanos < 0 || pendingNotices() == 0
                || !noticeDeliveryQueued.compareAndSet(false, true)) {
            return;
        }
        if (!offloadRing.tryPublishEvent((ev, seq) -> {
            ev.deliverNotices = true;
            ev.offload = null;
            ev.promotion = null;
        })) {
            noticeDeliveryQueued.set(false); // the ring is full; the next tick asks again
        }
    }

    /** Sends the queued notices until none is left or a send fails; offload worker only. */
    private void deliverNotices() {
        if (closed.get() || System.nanoTime() - noticeRetryAtNanos < 0 || pendingNotices() == 0) {
            return;
        }
        diskReports.lock();
        try {
            while (!closed.get()) {
                Map<String, Boolean> taken = takeNotices();
                if (taken.isEmpty()) {
                    return;
                }
                List<String> keys = new ArrayList<>(taken.size());
                taken.forEach((key, lost) -> {
                    if (!lost || !heldByBackend(key)) {
                        keys.add(key);
                    }
                });
                if (keys.isEmpty()) {
                    continue;
                }
                try {
                    master.get().callSync(Opcode.EVICT_DISK_REPLICA,
                            DiskEvicted.newBuilder().setNodeId(nodeId).addAllKeys(keys).build(), Empty.parser());
                } catch (RuntimeException e) {
                    synchronized (notices) {
                        // Back in the queue (a notice queued meanwhile for a key merges with it).
                        taken.forEach((key, lost) -> notices.merge(key, lost, Boolean::logicalAnd));
                    }
                    noticeFailed(e);
                    return;
                }
                if (noticeFailures > 0) {
                    LOG.info("Node {} told the master about {} gone SSD copies after {} failed attempts", nodeId,
                            keys.size(), noticeFailures);
                }
                noticeFailures = 0;
                noticeBackoffMillis = NOTICE_RETRY_MIN_MILLIS;
            }
        } finally {
            diskReports.unlock();
        }
    }

    /** Removes up to {@value #NOTICE_BATCH} queued notices, in queue order. */
    private Map<String, Boolean> takeNotices() {
        Map<String, Boolean> taken = new LinkedHashMap<>();
        synchronized (notices) {
            var it = notices.entrySet().iterator();
            while (it.hasNext() && taken.size() < NOTICE_BATCH) {
                var e = it.next();
                taken.put(e.getKey(), e.getValue());
                it.remove();
            }
        }
        return taken;
    }

    /**
     * Whether the backend holds {@code key}. A lost copy is dropped before its notice is queued, so a
     * held key is a newer copy written since. If the backend cannot answer, the notice goes out.
     */
    private boolean heldByBackend(String key) {
        try {
            return backend.size(key).isPresent();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void noticeFailed(RuntimeException e) {
        noticeFailures++;
        noticeBackoffMillis = noticeFailures == 1 ? NOTICE_RETRY_MIN_MILLIS
                : Math.min(NOTICE_RETRY_MAX_MILLIS, noticeBackoffMillis * 2);
        noticeRetryAtNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(noticeBackoffMillis);
        if (noticeFailures == 1 || noticeFailures % 20 == 0) {
            LOG.warn("Node {} could not tell the master that {} SSD copies are gone ({} attempts failed, last: {});"
                    + " it keeps the notices and retries, at most {} ms apart. Until the master hears, it lists"
                    + " these copies and reads of them fail: check that the master is reachable", nodeId,
                    pendingNotices(), noticeFailures, e.getMessage(), NOTICE_RETRY_MAX_MILLIS);
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
                List<String> missing = null;
                for (int i = 0; i < keys.size(); i++) {
                    OptionalLong s = backend.size(keys.get(i));
                    sizes[i] = s.isPresent() ? s.getAsLong() : -1;
                    total += Math.max(0, sizes[i]);
                    if (s.isEmpty()) {
                        if (missing == null) {
                            missing = new ArrayList<>();
                        }
                        missing.add(keys.get(i));
                    }
                }
                if (missing != null) {
                    // The master sent a client here for copies this node does not hold: a notice it never
                    // got (a crash before it went out) or one still on its way. Tell it (again), as a loss:
                    // skipped if the key is written again before it goes.
                    queueNotices(missing, true);
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
        int untold = pendingNotices();
        if (untold > 0) {
            LOG.warn("Node {} stops with {} gone SSD copies the master was not told about. A clean stop unmounts"
                    + " the node and the master forgets all its SSD copies; after a crash the master lists them"
                    + " until the node expires (master.node-ttl), and reads of them fail meanwhile", nodeId, untold);
        }
        backend.close();
    }
}
