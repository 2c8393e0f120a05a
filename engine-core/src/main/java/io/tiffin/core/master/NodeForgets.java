package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.ForgetReply;
import io.tiffin.core.transport.proto.ForgetRequest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * With failover on, nodes keep a record of every object committed in their segment ({@code SegmentLedger}) and a
 * master that takes over rebuilds its objects from them. So the space of an object that goes (removed, evicted,
 * replaced, a put revoked) is given back to the segment's allocator only once its node has dropped the record
 * ({@code FORGET}, sent in batches per segment): no record ever names bytes another object overwrote, whatever the
 * writer's path (socket, shared memory, same JVM). A removal answers only when its forgets are done ({@link
 * #collect}), so a removed object cannot come back from a node after a failover. The same messages carry the
 * deadline changes of objects whose expiry moved after their put ({@link #setDeadline}: EXPIRE and PERSIST answer
 * once the nodes have them too), so a master that takes over knows them, and the deletions of removed objects' SSD
 * copies ({@link #forgetDiskCopy}: a removal answers once they are off the disk), so no copy brings a removed object
 * back at a takeover.
 *
 * <p>A node that refuses the connection has no process left holding records: its forgets count as done (deletions of
 * its SSD copies too, recorded first in the cluster facts: {@link DiskFloors}). Deletions a node's backend failed
 * (its answer names them) are recorded the same way before they count as done; deadlines it failed to write into
 * its copies' stamps (named too) fail the EXPIRE or PERSIST that waits for them. One that does not answer (or whose
 * connect times out) is asked again every 200 ms until its segment is unmounted (node expiry), which voids its
 * records (the node re-mounts empty). A node that follows a newer master term refuses: this master is deposed, its
 * frees stay undone and the removals waiting for them fail.
 *
 * <p>Thread-safe: per segment two queues, one for its records and one for its node's SSD copies (so frees never wait
 * for the node's disk), each with at most one FORGET in flight; sends run on a small pool (a node that hangs holds up
 * only its own segment's forgets).
 */
final class NodeForgets implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeForgets.class);
    private static final int MAX_BATCH = 50_000;

    /**
     * A record to drop (then {@code handle} to free; &lt; 0: none), or, with {@code deadline} &ge; 0, a record whose
     * expiry deadline becomes {@code deadline} (0 = none; no handle). With {@code diskKey}, the same for the SSD copy
     * of that key on the segment's node: deleted (of an object of {@code version}), or its deadline changed.
     */
    private record Item(long handle, long offset, long version, CompletableFuture<Void> done, long deadline,
                        String diskKey) {
        boolean forgets() {
            return deadline < 0;
        }
    }

    /** A segment's queued forgets; guarded by its own monitor. */
    private static final class Queue {
        final List<Item> items = new ArrayList<>();
        boolean inFlight;
    }

    private final TransportClientPool pool;
    private final LongSupplier term;
    /** See {@link #whenANodeFollowsANewerTerm}; nothing until set. */
    private volatile Runnable onNewerTerm = () -> { };
    private final DiskDeletionsLost diskDeletionsLost;
    private final java.util.function.LongConsumer failedDiskDeletes;
    private final java.util.function.LongConsumer failedDiskStamps;

    /**
     * Told of deletions of SSD copies that count as done without their node, or that its backend failed; see {@link
     * DiskFloors}.
     */
    @FunctionalInterface
    interface DiskDeletionsLost {
        /** {@code keys} with {@code versions} (parallel) on {@code nodeId}: made durable before this returns. */
        void lost(String nodeId, List<String> keys, List<Long> versions);
    }
    private final Map<MountedSegment, Queue> queues = new ConcurrentHashMap<>();
    /** The SSD copies' changes, apart: a node deletes copies between its offload batches; frees must not wait. */
    private final Map<MountedSegment, Queue> diskQueues = new ConcurrentHashMap<>();
    private final ScheduledExecutorService senders = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "tiffin-master-forgets");
        t.setDaemon(true);
        return t;
    });
    private final ThreadLocal<List<CompletableFuture<Void>>> collecting = new ThreadLocal<>();

    /**
     * @param pool connections to the nodes' data planes (owned by the caller)
     * @param term this master's term, sent with every FORGET
     * @param diskDeletionsLost told of SSD copies whose deletions count as done without their node (its process gone,
     *     its segment left), before they do; may block (it makes that durable: {@link DiskFloors}); a
     *     {@link RuntimeException} from it fails those deletions' removals as a deposed master's
     */
    NodeForgets(TransportClientPool pool, LongSupplier term, DiskDeletionsLost diskDeletionsLost) {
        this(pool, term, diskDeletionsLost, n -> { }, n -> { });
    }

    /**
     * As {@link #NodeForgets(TransportClientPool, LongSupplier, DiskDeletionsLost)}, counting in {@code
     * failedDiskDeletes} the deletions nodes' backends failed, and in {@code failedDiskStamps} the new deadlines they
     * failed to write into their copies' stamps.
     */
    NodeForgets(TransportClientPool pool, LongSupplier term, DiskDeletionsLost diskDeletionsLost,
                java.util.function.LongConsumer failedDiskDeletes, java.util.function.LongConsumer failedDiskStamps) {
        this.pool = pool;
        this.term = term;
        this.diskDeletionsLost = diskDeletionsLost;
        this.failedDiskDeletes = failedDiskDeletes;
        this.failedDiskStamps = failedDiskStamps;
    }


    /**
     * Runs {@code action} (once or more) when a node answers that it follows a newer master term: this master has been
     * deposed, whatever its coordinator has told it yet.
     */
    void whenANodeFollowsANewerTerm(Runnable action) {
        this.onNewerTerm = java.util.Objects.requireNonNull(action, "action");
    }

    /** Queues the drop of the record of the object of {@code version} at {@code offset}, then frees {@code handle}. */
    void forget(MountedSegment segment, long handle, long offset, long version) {
        if (LOG.isTraceEnabled()) {
            LOG.trace("Forget {}@{} v{} ({}) in {}, from {}", segment.ownerKey(handle), offset, version,
                    handle < 0 ? "record only" : "then free", segment.name(), StackWalker.getInstance().walk(
                            f -> f.skip(1).limit(4).map(x -> x.getClassName().substring(x.getClassName()
                                    .lastIndexOf('.') + 1) + "." + x.getMethodName()).toList()));
        }
        enqueue(segment, handle, offset, version, -1, null);
    }

    /**
     * Queues the change of the expiry deadline of the record of the object of {@code version} at {@code offset} to
     * {@code expireAtMillis} (0 = none), after the segment's forgets queued before it.
     */
    void setDeadline(MountedSegment segment, long offset, long version, long expireAtMillis) {
        enqueue(segment, -1, offset, version, Math.max(0, expireAtMillis), null);
    }

    /**
     * Queues the change of the expiry deadline that the node of {@code segment} keeps with its SSD copy of {@code
     * key}, of the object of {@code version}, to {@code expireAtMillis} (0 = none).
     */
    void setDiskDeadline(MountedSegment segment, String key, long version, long expireAtMillis) {
        enqueue(segment, -1, -1, version, Math.max(0, expireAtMillis), key);
    }

    /**
     * Queues the deletion of the SSD copy of {@code key} that the node of {@code segment} holds, the copy of the
     * removed object of {@code version} (a copy the node knows to be of a later version stays); the node answers
     * once it is deleted from its disk.
     */
    void forgetDiskCopy(MountedSegment segment, String key, long version) {
        enqueue(segment, -1, -1, version, -1, key);
    }

    private void enqueue(MountedSegment segment, long handle, long offset, long version, long deadline,
                         String diskKey) {
        List<CompletableFuture<Void>> scope = collecting.get();
        CompletableFuture<Void> done = null;
        if (scope != null) {
            done = new CompletableFuture<>();
            scope.add(done);
        }
        Queue q = (diskKey != null ? diskQueues : queues).computeIfAbsent(segment, s -> new Queue());
        boolean start;
        synchronized (q) {
            q.items.add(new Item(handle, offset, version, done, deadline, diskKey));
            start = !q.inFlight;
            q.inFlight = true;
        }
        if (start) {
            schedule(segment, q, 0);
        }
    }

    /**
     * Collects the forgets the calling thread queues while {@code action} runs; the returned future completes when
     * they are all done (at once if there are none), exceptionally if this master was deposed meanwhile.
     */
    CompletableFuture<Void> collect(Runnable action) {
        List<CompletableFuture<Void>> previous = collecting.get();
        List<CompletableFuture<Void>> mine = new ArrayList<>();
        collecting.set(mine);
        try {
            action.run();
        } finally {
            collecting.set(previous);
            if (previous != null) {
                previous.addAll(mine);
            }
        }
        return mine.isEmpty() ? CompletableFuture.completedFuture(null)
                : CompletableFuture.allOf(mine.toArray(CompletableFuture[]::new));
    }

    private void schedule(MountedSegment segment, Queue q, long delayMillis) {
        try {
            senders.schedule(() -> send(segment, q), delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            synchronized (q) {
                q.inFlight = false; // closing
            }
        }
    }

    private void send(MountedSegment segment, Queue q) {
        List<Item> batch;
        synchronized (q) {
            if (q.items.isEmpty()) {
                q.inFlight = false;
                return;
            }
            int n = Math.min(MAX_BATCH, q.items.size());
            batch = new ArrayList<>(q.items.subList(0, n));
            q.items.subList(0, n).clear();
        }
        if (segment.voided()) {
            finishWithoutTheNode(segment, q, batch);
            return;
        }
        ForgetRequest.Builder req = ForgetRequest.newBuilder().setTerm(term.getAsLong()).setSegment(segment.name());
        for (Item i : batch) {
            if (i.diskKey() != null && i.forgets()) {
                req.addDiskKeys(i.diskKey()).addDiskKeyVersions(i.version());
            } else if (i.diskKey() != null) {
                req.addDiskDeadlineKeys(i.diskKey()).addDiskDeadlines(i.deadline())
                        .addDiskDeadlineVersions(i.version());
            } else if (i.forgets()) {
                req.addOffsets(i.offset()).addVersions(i.version());
            } else {
                req.addDeadlineOffsets(i.offset()).addDeadlineVersions(i.version()).addDeadlines(i.deadline());
            }
        }
        try {
            ForgetReply reply = pool.get(segment.endpoint()).callSync(Opcode.FORGET, req.build(),
                    ForgetReply.parser());
            if (reply.getUnstampedDiskKeysCount() > 0) {
                failUnstamped(segment, batch, reply);
            }
            if (reply.getUndeletedDiskKeysCount() == 0) {
                finish(segment, q, batch, true);
            } else {
                finishUndeleted(segment, q, batch, reply);
            }
        } catch (TiffinException e) {
            if (refused(e) || segment.voided()) {
                LOG.debug("FORGET of {} records to {} counted as done: {}", batch.size(), segment.name(),
                        e.getMessage());
                finishWithoutTheNode(segment, q, batch); // no process holds these records any more
            } else if (e.code() == ErrorCode.INVALID_VERSION) {
                LOG.error("Node of segment {} follows a newer master term: this master ({}) is deposed; {} frees"
                        + " stay undone", segment.name(), term.getAsLong(), batch.size());
                onNewerTerm.run(); // the first sure sign (a master woken from a pause hears it before its coordinator)
                for (Item i : batch) {
                    if (i.done() != null) {
                        i.done().completeExceptionally(e);
                    }
                }
                synchronized (q) {
                    q.inFlight = false;
                }
            } else {
                synchronized (q) {
                    q.items.addAll(0, batch);
                }
                schedule(segment, q, 200);
            }
        }
    }

    /**
     * Counts {@code batch} as done although its node took none of it. Records hold nothing then; SSD copies do: their
     * deletions are made durable elsewhere first ({@code diskDeletionsLost}).
     */
    private void finishWithoutTheNode(MountedSegment segment, Queue q, List<Item> batch) {
        List<String> keys = new ArrayList<>();
        List<Long> versions = new ArrayList<>();
        for (Item i : batch) {
            if (i.diskKey() != null && i.forgets()) {
                keys.add(i.diskKey());
                versions.add(i.version());
            }
        }
        if (!keys.isEmpty()) {
            try {
                diskDeletionsLost.lost(segment.nodeId(), keys, versions);
            } catch (RuntimeException e) {
                LOG.error("Deletions of SSD copies on node {} could not be recorded ({}): their {} removals fail",
                        segment.nodeId(), e.toString(), batch.size());
                for (Item i : batch) {
                    if (i.done() != null) {
                        i.done().completeExceptionally(e);
                    }
                }
                synchronized (q) {
                    q.inFlight = false;
                }
                return;
            }
        }
        finish(segment, q, batch, true);
    }

    /**
     * Counts {@code batch} as done although the node's backend failed to delete some of its SSD copies ({@code
     * reply}): those stay on its disk, so their deletions are made durable first, as a gone node's are; the node is
     * asked again with its task polls ({@link TierCoordinator#dropDiskCopies} queued them there too).
     */
    private void finishUndeleted(MountedSegment segment, Queue q, List<Item> batch, ForgetReply reply) {
        List<String> keys = reply.getUndeletedDiskKeysList();
        List<Long> versions = reply.getUndeletedDiskKeyVersionsCount() == keys.size()
                ? reply.getUndeletedDiskKeyVersionsList() : java.util.Collections.nCopies(keys.size(), 0L);
        failedDiskDeletes.accept(keys.size());
        LOG.warn("Node of segment {} could not delete {} SSD copies of removed objects; their deletions are recorded"
                + " and asked again at its task polls; check that its SSD tier's disk has free space and is writable"
                + " (its log names the error)", segment.name(), keys.size());
        try {
            diskDeletionsLost.lost(segment.nodeId(), keys, versions);
        } catch (RuntimeException e) {
            LOG.error("Deletions of SSD copies on node {} that its disk refused could not be recorded ({}): their"
                    + " removals fail", segment.nodeId(), e.toString());
            for (Item i : batch) {
                if (i.done() != null) {
                    i.done().completeExceptionally(e);
                }
            }
        }
        finish(segment, q, batch, true); // the node took the rest of the batch
    }

    /**
     * Fails the calls (EXPIRE, PERSIST) that wait for the new deadlines the node's backend could not write into its
     * SSD copies' stamps, as its answer names them: the deadline holds in this master, but a master that took over
     * would find the old one on the node's disk, so the change is not reported as made.
     */
    private void failUnstamped(MountedSegment segment, List<Item> batch, ForgetReply reply) {
        Set<String> unstamped = new HashSet<>();
        for (int i = 0; i < reply.getUnstampedDiskKeysCount(); i++) {
            long version = i < reply.getUnstampedDiskKeyVersionsCount() ? reply.getUnstampedDiskKeyVersions(i) : 0;
            unstamped.add(version + "@" + reply.getUnstampedDiskKeys(i));
        }
        failedDiskStamps.accept(unstamped.size());
        LOG.warn("Node of segment {} could not write the new deadlines of {} SSD copies into its disk; the EXPIRE or"
                + " PERSIST calls that set them fail: check that its SSD tier's disk has free space and is writable"
                + " (its log names the error)", segment.name(), unstamped.size());
        for (Item i : batch) {
            boolean named = i.diskKey() != null && (unstamped.contains(i.version() + "@" + i.diskKey())
                    || unstamped.contains("0@" + i.diskKey()));
            if (named && !i.forgets() && i.done() != null) {
                i.done().completeExceptionally(new TiffinException(ErrorCode.FILE_WRITE_FAIL, "node "
                        + segment.nodeId() + " could not write the new expiry deadline of its SSD copy of "
                        + i.diskKey() + " to its disk: the deadline holds until a master takes over, which would find"
                        + " the old one; check that the node's SSD tier has free space and is writable, then set the"
                        + " deadline again"));
            }
        }
    }

    private void finish(MountedSegment segment, Queue q, List<Item> batch, boolean free) {
        if (free) {
            long[] handles = new long[batch.size()];
            for (int i = 0; i < handles.length; i++) {
                handles[i] = batch.get(i).handle();
            }
            segment.freeForgotten(handles, handles.length);
        }
        for (Item i : batch) {
            if (i.done() != null) {
                i.done().complete(null);
            }
        }
        send(segment, q); // the next batch, or clears inFlight
    }

    /**
     * Whether the connection was refused (ECONNREFUSED): nothing listens, so no process holds the segment's records.
     * A connect that timed out, or a host that cannot be reached, may hide a live node that keeps its records: its
     * forgets are asked again.
     */
    static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException c && !(t instanceof io.netty.channel.ConnectTimeoutException)
                    && c.getMessage() != null && c.getMessage().contains("Connection refused")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        senders.shutdownNow();
    }
}
