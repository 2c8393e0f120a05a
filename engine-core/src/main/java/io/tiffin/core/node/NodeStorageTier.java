package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.DiskObject;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.transport.proto.PromotionTask;
import io.tiffin.core.transport.proto.TaskPollReply;
import io.tiffin.core.transport.proto.TaskPollRequest;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A node's SSD tier: its {@link StorageBackend} and the workers around it, started and stopped here.
 *
 * <ul>
 *   <li>{@link OffloadWorker}: writes objects from memory to the backend as the master asks, reports
 *       the copies and sends the eviction notices;</li>
 *   <li>{@link PromotionWorker}: loads SSD-only objects back into memory as the master asks;</li>
 *   <li>{@link EvictionNotices}: the keys of copies the backend dropped, queued until the master takes
 *       them (the backend's {@link StorageListener} feeds it);</li>
 *   <li>{@link SsdReadService}: clients' reads of SSD-only objects ({@code DATA_READ_SSD}), on a small
 *       I/O pool, never on a Netty event loop.</li>
 * </ul>
 * A graceful stop first has the master offload what only this node's memory holds ({@link #drainBeforeStop}).
 * The heartbeat ring of {@link NodeServer} only exchanges task lists ({@link #pollTasks}) and asks for
 * notice deliveries ({@link #queueNoticeDelivery}); it never does this I/O, so a backlog never delays a
 * heartbeat. What the node tells the master about its SSD copies goes one step at a time ({@link
 * DiskReports}).
 *
 * <p><b>Ownership.</b> The tier owns the backend (the node hands it over at construction), the two
 * workers' rings and the I/O pool; {@link #close()} stops the notices, the workers and the pool, then
 * closes the backend, each exactly once. The memory segment belongs to the {@link NodeServer}, which
 * frees it only after this tier is closed; the workers borrow it.
 *
 * <p>Thread-safe.
 */
final class NodeStorageTier implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeStorageTier.class);
    /** {@link #drainRemaining} before the master's first count, and after a poll that asked for it failed. */
    private static final long NO_ANSWER = -1;
    private static final long REFUSED = -2;
    /** How long a drain waits for the master's first count before it takes the master for unreachable. */
    private static final long DRAIN_ANSWER_NANOS = 2_000_000_000L;

    private final String nodeId;
    /** The backend as messages name it: {@code node.storage-backend <name> of plugin <plugin>}. */
    private final String backendName;
    private final StorageBackend backend;
    private final Supplier<TransportClient> master;
    private final DiskReports reports;
    private final EvictionNotices notices;
    private final OffloadWorker offloads;
    private final PromotionWorker promotions;
    private final ExecutorService io;
    private final SsdReadService reads;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean pollInFlight = new AtomicBoolean();
    /** The versions and deadlines of the copies' objects (in the backend's stamps, or in memory). */
    private final DiskCopies copies;
    /** Deletions a poll's answer asked for that the backend failed, for the next poll. */
    private final FailedDiskChanges failedDeletes;
    /** New deadlines a poll's answer asked for that the backend failed to write into stamps, for the next poll. */
    private final FailedDiskChanges failedStamps;
    private final Ticker ticker;
    private final String segmentName;
    /** How long a graceful stop may spend on {@link #drainBeforeStop} ({@code node.stop-offload-timeout}). */
    private final Duration stopOffload;
    /** Set once the node stops: polls ask the master to offload what only this node's memory holds. */
    private volatile boolean draining;
    /**
     * The master's count of those objects without an SSD copy yet, from the last poll that asked; {@link #NO_ANSWER}
     * before one, {@link #REFUSED} after a poll that asked failed.
     */
    private volatile long drainRemaining = NO_ANSWER;
    /** The master's count, from the same poll, of those objects whose offload failed: not waited for, lost. */
    private volatile long drainFailed;

    /**
     * Starts the tier around {@code backend} (which it now owns, and names {@code backendName} in messages) and the
     * node's {@code segment}; {@code master} is the node's current master connection, {@code peers} its connections to
     * other nodes, and
     * {@code ticker} times the notices' back-off; {@code transport} bounds the SSD reads it serves (frame
     * size, {@code node.ssd-read-memory}, {@code node.ssd-read-queue}).
     */
    NodeStorageTier(String nodeId, String backendName, StorageBackend backend, LocalSegment segment,
                    Supplier<TransportClient> master, TransportClientPool peers, Ticker ticker,
                    io.tiffin.core.transport.TransportSettings transport, Duration stopOffload) {
        this.nodeId = nodeId;
        this.backendName = backendName;
        this.segmentName = segment.name();
        this.stopOffload = stopOffload;
        this.backend = backend;
        this.master = master;
        this.ticker = ticker;
        this.failedDeletes = new FailedDiskChanges(nodeId, FailedDiskChanges.Kind.DELETIONS);
        this.failedStamps = new FailedDiskChanges(nodeId, FailedDiskChanges.Kind.DEADLINES);
        this.reports = new DiskReports(nodeId, master);
        this.notices = new EvictionNotices(nodeId, backend, reports, ticker);
        this.io = Executors.newFixedThreadPool(2, TaskRing.daemonThreads("tiffin-node-ssd-io"));
        try {
            this.copies = new DiskCopies(backend, io, failedStamps, ticker); // asks the backend keepsStamps()
        } catch (RuntimeException | LinkageError | StackOverflowError e) { // plugin code
            io.shutdownNow();
            throw backendFailed("say whether it keeps stamps", e);
        }
        this.reads = new SsdReadService(backend, notices, io, transport.limits(), transport.maxFrameSize());
        this.offloads = new OffloadWorker(nodeId, backend, segment, reports, notices, copies);
        this.promotions = new PromotionWorker(nodeId, backend, segment, master, peers);
        try {
            backend.listener(new StorageListener() {
                @Override
                public void evicting(List<String> keys) {
                    // Called under the backend's write lock: only queue; the offload worker tells the master.
                    notices.queue(keys, false);
                    copies.gone(keys);
                }

                @Override
                public void lost(List<String> keys) {
                    notices.queue(keys, true);
                }
            });
        } catch (RuntimeException | LinkageError | StackOverflowError e) { // plugin code
            offloads.close();
            promotions.close();
            io.shutdownNow();
            throw backendFailed("take the node's listener", e);
        }
    }

    StorageBackend backend() {
        return backend;
    }

    /**
     * Registers the tier with the master and reports every object the backend holds (after a restart too).
     *
     * @throws TiffinException naming the backend and its plugin when the backend fails to tell its capacity or to list
     *     its objects (whatever it throws: plugin code, which a missing or corrupt jar of its may fail with an Error);
     *     as the master connection does when a report cannot be sent
     */
    void register() {
        int[] total = new int[1];
        // Not while a write may evict what the scan has seen: its notice would reach the master first.
        reports.lock();
        try {
            long capacity;
            try {
                capacity = backend.capacityBytes();
            } catch (RuntimeException | LinkageError | StackOverflowError e) {
                throw backendFailed("tell its capacity", e);
            }
            reports.register(capacity);
            List<DiskObject> batch = new ArrayList<>();
            RuntimeException[] reportFailed = new RuntimeException[1]; // ours, passed through the backend's scan
            try {
                backend.scanStamped((key, size, stamp) -> {
                    batch.add(copies.report(key, size, stamp));
                    if (batch.size() == 1000) {
                        try {
                            reports.held(batch);
                        } catch (RuntimeException e) {
                            reportFailed[0] = e;
                            throw e;
                        }
                        total[0] += batch.size();
                        batch.clear();
                    }
                });
            } catch (RuntimeException | LinkageError | StackOverflowError e) {
                if (reportFailed[0] != null) {
                    throw reportFailed[0]; // the master connection's failure, as the backend passed it on or not
                }
                throw backendFailed("list the objects it holds", e);
            }
            if (reportFailed[0] != null) {
                throw reportFailed[0]; // a backend that went on after it: its listing did not reach the master
            }
            reports.scanned(batch);
            total[0] += batch.size();
        } finally {
            reports.unlock();
        }
        if (total[0] > 0) {
            LOG.info("Node {} re-registered {} objects from its SSD tier with the master", nodeId, total[0]);
        }
    }

    /**
     * What the backend threw while the tier registers, as an error that names the backend, its plugin and the cause: a
     * {@link TiffinException} keeps its code, anything else is {@code FILE_READ_FAIL}.
     */
    private TiffinException backendFailed(String what, Throwable e) {
        ErrorCode code = e instanceof TiffinException t ? t.code() : ErrorCode.FILE_READ_FAIL;
        return new TiffinException(code, backendName + " failed to " + what + ", so node " + nodeId + " cannot"
                + " register its SSD tier with the master: " + PluginRegistry.describe(e)
                + ". Check the plugin's log lines and its jars (a LinkageError means one is missing, corrupt or built"
                + " for another Tiffin), or leave node.storage-backend empty to run the node without an SSD tier", e);
    }

    /**
     * Called by the heartbeat ring: asks the master for work for the workers' free room. The request is
     * asynchronous, so the heartbeat thread never waits for the master; the reply's tasks are handed to
     * the workers from the connection's event loop (never blocking: only free room was asked for). At
     * most one poll is in flight.
     */
    void pollTasks() {
        int freeOffloads = offloads.room();
        int freePromotions = promotions.room();
        if ((freeOffloads == 0 && freePromotions == 0) || !pollInFlight.compareAndSet(false, true)) {
            return;
        }
        FailedDiskChanges.Batch told = failedDeletes.take();
        FailedDiskChanges.Batch toldStamps = failedStamps.take();
        boolean drain = draining;
        CompletableFuture<Frame> call;
        try {
            call = master.get().call(Opcode.POLL_TASKS, TaskPollRequest.newBuilder().setNodeId(nodeId)
                    .setMaxOffloads(freeOffloads).setMaxPromotions(freePromotions).addAllUndeleted(told.keys())
                    .addAllUndeletedVersions(told.versions()).addAllUnstamped(toldStamps.keys())
                    .addAllUnstampedVersions(toldStamps.versions()).setDrainSegment(drain ? segmentName : "").build(),
                    null);
        } catch (RuntimeException e) {
            failedDeletes.putBack(told);
            failedStamps.putBack(toldStamps);
            pollInFlight.set(false);
            throw e;
        }
        call.whenComplete((frame, err) -> {
            CompletableFuture<Void> tried = CompletableFuture.completedFuture(null);
            try {
                if (err == null) {
                    TaskPollReply reply = frame.parseControl(TaskPollReply.parser());
                    tried = accept(reply);
                    if (drain) {
                        drainFailed = reply.getDrainFailed();
                        drainRemaining = reply.getDrainRemaining();
                    }
                } else {
                    failedDeletes.putBack(told); // told again with the next poll (a repeat is harmless)
                    failedStamps.putBack(toldStamps);
                    if (drain) {
                        drainRemaining = REFUSED;
                        LOG.warn("Node {} could not have the master copy its objects to SSD before it stops: {}",
                                nodeId, err.toString());
                    }
                }
            } catch (RuntimeException e) {
                LOG.warn("Node {} could not take its task list: {}", nodeId, e.toString());
            } finally {
                if (frame != null) {
                    frame.release();
                }
                // the next poll only once these deletes and deadlines were tried: it tells the master they are done
                tried.whenComplete((v, e) -> pollInFlight.set(false));
            }
        });
    }

    /**
     * Before a graceful stop, while the heartbeat ring still polls: has the master offload to this tier the objects
     * only this node's memory holds ({@code TaskPollRequest.drain_segment}; its segment takes no new puts meanwhile)
     * and waits until the master counts none left or {@code node.stop-offload-timeout} passes. Objects still without a
     * copy then are lost with the memory, as they were before; the log says how many. Blocks the caller.
     */
    void drainBeforeStop() {
        if (stopOffload.isZero() || closed.get()) {
            return;
        }
        long start = ticker.nanos();
        drainRemaining = NO_ANSWER;
        draining = true;
        long left;
        while ((left = drainRemaining) != 0 && left != REFUSED && ticker.nanos() - start < stopOffload.toNanos()
                && !(left == NO_ANSWER && ticker.nanos() - start > DRAIN_ANSWER_NANOS)) {
            try {
                Thread.sleep(20); // the polls of the heartbeat ring bring the count
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        long ms = (ticker.nanos() - start) / 1_000_000;
        long failed = drainFailed;
        if (left == 0 && failed == 0) {
            LOG.info("Node {} copied what only its memory held to its SSD tier before stopping ({} ms); it reads from"
                    + " there once the node starts again on the same storage path", nodeId, ms);
        } else if (left == 0) {
            LOG.warn("Node {} stops after {} ms with {} objects that only its memory held not copied to its SSD tier:"
                    + " their offloads failed (see the offload failures logged before: a full or failing disk), so"
                    + " they are lost; the rest is on its SSD tier", nodeId, ms, failed);
        } else if (left > 0) {
            LOG.warn("Node {} stops after {} ms (node.stop-offload-timeout) with {} objects that only its memory held"
                    + " not copied to its SSD tier, and {} whose offloads failed: they are lost", nodeId, ms, left, failed);
        } else if (left == NO_ANSWER) {
            LOG.warn("Node {} stops without copying what only its memory holds to its SSD tier: the master did not"
                    + " answer within {} ms", nodeId, ms);
        }
    }

    /**
     * The objects of these SSD copies ({@code keys}) have new expiry deadlines ({@code deadlines}, 0 = none) if the
     * copies are of {@code versions} (0 = whichever version they are of); the lists are parallel. See {@link
     * DiskCopies#setDeadlines}. Never blocks.
     */
    CompletableFuture<FailedDiskChanges.Batch> setDiskDeadlines(List<String> keys, List<Long> versions,
                                                                List<Long> deadlines) {
        return copies.setDeadlines(keys, versions, deadlines);
    }

    /**
     * Deletes the SSD copies of objects the master removed ({@code FORGET}, task polls): each key's copy unless this
     * node knows it to be of a later version than {@code versions} names (parallel; 0 = any), written since by
     * another put of the key. Runs on the I/O pool between offload batches (a batch being written cannot slip in
     * between the check and the deletion). Never blocks.
     *
     * @return completes once the copies are deleted, with those the backend failed to delete (which the caller tells
     *     the master: a broken disk must not hold up the segment's other forgets); exceptionally only when the tier
     *     is closing
     */
    CompletableFuture<FailedDiskChanges.Batch> deleteDiskCopies(List<String> keys, List<Long> versions) {
        List<String> ks = List.copyOf(keys);
        List<Long> vs = List.copyOf(versions);
        try {
            return CompletableFuture.supplyAsync(() -> {
                reports.lock();
                List<String> deletes = new ArrayList<>(ks.size());
                List<Long> deleteVersions = new ArrayList<>(ks.size());
                try {
                    for (int i = 0; i < ks.size(); i++) {
                        if (vs.get(i) > 0 && copies.version(ks.get(i)) > vs.get(i)) {
                            continue; // a later put's copy
                        }
                        deletes.add(ks.get(i));
                        deleteVersions.add(vs.get(i));
                    }
                    backend.removeAll(deletes);
                    copies.gone(deletes); // only once off the disk: a copy that stays keeps its version
                    return FailedDiskChanges.Batch.NONE;
                } catch (RuntimeException e) {
                    // any of them may remain: all are named (deleting one that is gone asks nothing of the disk)
                    failedDeletes.warn(deletes.size(), e, ticker.nanos());
                    return new FailedDiskChanges.Batch(deletes, deleteVersions);
                } finally {
                    reports.unlock();
                }
            }, io);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            return CompletableFuture.failedFuture(new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS,
                    "the node's SSD tier is closing"));
        }
    }

    /**
     * Hands out a poll's tasks; completes once its deletes and deadlines were tried (the failed ones kept for the next
     * poll).
     */
    private CompletableFuture<Void> accept(TaskPollReply reply) {
        CompletableFuture<Void> tried = CompletableFuture.completedFuture(null);
        if (reply.getDeletesCount() > 0) {
            if (reply.getDeleteVersionsCount() != 0 && reply.getDeleteVersionsCount() != reply.getDeletesCount()) {
                LOG.warn("Node {} ignores a task list with {} SSD copies to delete and {} versions", nodeId,
                        reply.getDeletesCount(), reply.getDeleteVersionsCount());
            } else {
                tried = deleteDiskCopies(reply.getDeletesList(),
                        ForgetRequests.versionsOrAny(reply.getDeleteVersionsList(), reply.getDeletesCount()))
                        .thenAccept(failedDeletes::add);
            }
        }
        if (reply.getDeadlinesCount() > 0) {
            List<String> keys = new ArrayList<>();
            List<Long> versions = new ArrayList<>();
            List<Long> deadlines = new ArrayList<>();
            for (DiskObject d : reply.getDeadlinesList()) {
                if (d.getVersion() > 0) { // a poll names the copy's version (0 would mean any)
                    keys.add(d.getKey());
                    versions.add(d.getVersion());
                    deadlines.add(d.getExpireAtMs());
                }
            }
            CompletableFuture<Void> stampsTried = copies.setDeadlines(keys, versions, deadlines)
                    .thenAccept(failedStamps::add);
            tried = CompletableFuture.allOf(tried, stampsTried);
        }
        for (OffloadTask t : reply.getOffloadsList()) {
            offloads.offer(t);
        }
        for (PromotionTask t : reply.getPromotionsList()) {
            promotions.offer(t);
        }
        return tried;
    }

    /**
     * Called by the heartbeat ring's POLL tick: if notices wait and no back-off runs, asks the offload
     * worker to send them. Never blocks and never throws.
     */
    void queueNoticeDelivery() {
        if (!closed.get() && notices.due()) {
            offloads.requestNoticeDelivery();
        }
    }

    /** {@code DATA_READ_SSD}; see {@link SsdReadService}. */
    void serveRead(Frame request, Responder responder) {
        reads.serve(request, responder);
    }

    /** Stops the notices, the workers and the I/O pool, then closes the backend. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        notices.stop();
        offloads.close();
        promotions.close();
        io.shutdown();
        try {
            io.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        int untold = notices.pending();
        if (untold > 0) {
            LOG.warn("Node {} stops with {} gone SSD copies the master was not told about. A clean stop unmounts"
                    + " the node and the master forgets all its SSD copies; after a crash the master lists them"
                    + " until the node expires (master.node-ttl), and reads of them fail meanwhile", nodeId, untold);
        }
        backend.close();
    }

    /** Offloads written to the backend since start (each a copy the master asked for). */
    long offloaded() {
        return offloads.offloaded.sum();
    }

    /** Offloads that failed since start (a full or broken disk, a replica gone). */
    long offloadFailures() {
        return offloads.failures.sum();
    }

    /** Promotions written back into memory since start. */
    long promoted() {
        return promotions.promoted.sum();
    }

    /** Promotions that failed since start. */
    long promotionFailures() {
        return promotions.failures.sum();
    }

}
