package io.tiffin.core.node;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.coordination.MasterAddresses;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.SegmentLedger;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.proto.AttachSegmentRequest;
import io.tiffin.core.transport.proto.CommitRecord;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.ReMountSegmentRequest;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.ServiceReadyReply;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A node's side of the master protocol: which of the configured masters leads ({@code master.address} may list
 * several), the highest master term the node follows, the segment's mount, heartbeats, and what a ping answer
 * asks for: a re-mount (the master forgot the node: its records go, the segment comes back empty) or an attach
 * (a master that took over, or restarted with {@code master.state-dir}, restored the segment: the node moves its
 * mount epoch and reports the objects it holds, which stay). Answers and instructions of a master of a lower term
 * than the one the node follows are ignored: a deposed leader that wakes up cannot make it drop anything.
 *
 * <p>Thread-safe: mount, re-mount, attach and discovery run on the node's heartbeat thread (one at a time); ping
 * answers arrive on a Netty loop and only hand work to that thread ({@code ticks}). Uses, but does not own, the
 * node's master connection pool and segment.
 */
final class MasterLink implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(MasterLink.class);
    /** Records per ATTACH_SEGMENT chunk: well below the 16 MiB control-part limit. */
    static final int ATTACH_CHUNK = 20_000;

    /** Work a ping answer hands to the heartbeat thread. */
    enum Action { REMOUNT, ATTACH, DISCOVER }

    private final String nodeId;
    private final long incarnation;
    private final LocalSegment segment;
    private final DataAccessCheck access;
    private final Supplier<Segment> segmentMsg;
    private final TransportClientPool pool;
    private final MasterAddresses addresses;
    private final Duration pingInterval;
    private final Ticker ticker;
    private final Consumer<Action> ticks;
    private final Rejoin joined;
    private final ExecutorService probes = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "tiffin-node-master-probe");
        t.setDaemon(true);
        return t;
    });

    private volatile String leader;
    /** Highest master term this node has joined (0 = a master without failover). */
    private final AtomicLong term = new AtomicLong();
    /** The term a pending attach or re-mount joins. */
    private final AtomicLong offeredTerm = new AtomicLong();
    private volatile boolean mounted;
    private final AtomicBoolean superseded = new AtomicBoolean();
    private final AtomicLong consecutivePingFailures = new AtomicLong();
    private final AtomicLong remounts = new AtomicLong();
    private final AtomicLong attaches = new AtomicLong();
    /** See NodeServer: a re-mount asked by a ping sent before the last re-mount finished is stale. */
    private final AtomicLong remountWantedAt = new AtomicLong(-1);

    /**
     * @param ticks hands an action to the heartbeat thread
     * @param joined run after each mount, re-mount or attach (the SSD tier registers again)
     */
    MasterLink(String nodeId, long incarnation, LocalSegment segment, DataAccessCheck access, Supplier<Segment> segmentMsg,
               TransportClientPool pool, MasterAddresses addresses, Duration pingInterval, Ticker ticker,
               Consumer<Action> ticks, Rejoin joined) {
        this.nodeId = nodeId;
        this.incarnation = incarnation;
        this.segment = segment;
        this.access = access;
        this.segmentMsg = segmentMsg;
        this.pool = pool;
        this.addresses = addresses;
        this.pingInterval = pingInterval;
        this.ticker = ticker;
        this.ticks = ticks;
        this.joined = joined;
        this.leader = addresses.first();
    }

    /** What a node does after it joined a master; called on the heartbeat thread, one call at a time. */
    interface Rejoin {
        /** Registers the node's SSD tier again, if it has one, and reports its copies. */
        void run();

        /** Whether {@link #run()} reports SSD copies: an attach says so, and the new leader waits for them. */
        boolean reportsCopies();
    }

    /** The master this node talks to now. */
    TransportClient master() {
        return pool.get(leader);
    }

    String leader() {
        return leader;
    }

    long term() {
        return term.get();
    }

    boolean superseded() {
        return superseded.get();
    }

    long remounts() {
        return remounts.get();
    }

    /** Pings in a row that got no answer (0 once one is answered). */
    long consecutivePingFailures() {
        return consecutivePingFailures.get();
    }

    long attaches() {
        return attaches.get();
    }

    /**
     * Mounts the segment. While the master refuses because another process of this node.id was heard from lately
     * (SEGMENT_ALREADY_EXISTS), retries for as long as it takes a stopped process's heartbeats to fall silent,
     * then gives up with the master's explanation. When no master answers, returns false: the node serves its data
     * plane meanwhile and its heartbeats mount once one does.
     */
    boolean mountAtStart() {
        long giveUpAt = ticker.nanos() + pingInterval.multipliedBy(4).plusSeconds(2).toNanos();
        while (true) {
            try {
                mountOnce();
                return true;
            } catch (TiffinException e) {
                if (e.code() == ErrorCode.SEGMENT_ALREADY_EXISTS && ticker.nanos() - giveUpAt <= 0) {
                    LOG.info("Node {}: the master refused the mount for now ({}); retrying", nodeId, e.getMessage());
                    pause(Math.max(50, pingInterval.toMillis() / 2), e);
                    continue;
                }
                if (e.code() == ErrorCode.RPC_FAIL || e.code() == ErrorCode.RPC_TIMEOUT
                        || e.code() == ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS) {
                    LOG.warn("Node {}: no master reachable at {} ({}); serving reads and mounting once one is",
                            nodeId, addresses, e.getMessage());
                    return false;
                }
                throw e;
            }
        }
    }

    private void mountOnce() {
        if (addresses.size() > 1) {
            discover();
        }
        master().callSync(Opcode.MOUNT_SEGMENT, MountSegmentRequest.newBuilder().setSegment(segmentMsg.get())
                .setAccessKey(access.key()).build(), Empty.parser());
        mounted = true;
    }

    private static void pause(long millis, TiffinException cause) {
        try {
            Thread.sleep(millis); // paces a retry of a refused mount
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw cause;
        }
    }

    /**
     * One heartbeat: mounts if the segment never was, else sends a ping without waiting for the answer (a slow
     * master never delays the next heartbeat); the answer may hand an action to the heartbeat thread.
     */
    void ping() {
        if (superseded.get()) {
            return;
        }
        if (!mounted) {
            try {
                mountOnce();
                joined.run();
            } catch (RuntimeException e) {
                pingFailed(e);
            }
            return;
        }
        CompletableFuture<Frame> call;
        long remountsBefore = remounts.get();
        try {
            call = master().call(Opcode.PING, PingRequest.newBuilder().setNodeId(nodeId).setIncarnation(incarnation)
                    .setTerm(term.get()).build(), null);
        } catch (RuntimeException e) {
            pingFailed(e);
            return;
        }
        // A master that does not answer (paused, cut off) counts as failed after a few heartbeats, not after the
        // RPC timeout: the node then looks for the leader among the others.
        AtomicBoolean settled = new AtomicBoolean();
        long timeoutMillis = Math.max(1000, 3 * pingInterval.toMillis());
        CompletableFuture.delayedExecutor(timeoutMillis, TimeUnit.MILLISECONDS).execute(() -> {
            if (settled.compareAndSet(false, true)) {
                pingFailed(new TiffinException(ErrorCode.RPC_TIMEOUT, "no answer to a ping within " + timeoutMillis
                        + " ms"));
            }
        });
        call.whenComplete((frame, err) -> {
            if (!settled.compareAndSet(false, true)) {
                if (frame != null) {
                    frame.release(); // answered after it was given up
                }
                return;
            }
            if (err != null) {
                pingFailed(err);
                return;
            }
            try {
                answered(frame.parseControl(PingReply.parser()), remountsBefore);
            } finally {
                frame.release();
            }
        });
    }

    private void answered(PingReply reply, long remountsBefore) {
        access.masterTime(reply.getMasterTimeMs());
        if (reply.getTerm() < term.get()) {
            LOG.warn("Node {}: master {} answers in term {}, below the term {} this node follows; looking for"
                    + " the leader", nodeId, leader, reply.getTerm(), term.get());
            ticks.accept(Action.DISCOVER);
            return;
        }
        if (consecutivePingFailures.getAndSet(0) >= 3) {
            LOG.info("Node {} reached the master {} again", nodeId, leader);
        }
        if (reply.getSuperseded()) {
            if (superseded.compareAndSet(false, true)) {
                LOG.error("Node {}: another node process with the same node.id has joined the master {}; this one"
                        + " is no longer part of the cluster and stops its heartbeats. Stop it, or give every node"
                        + " its own node.id", nodeId, leader);
            }
        } else if (reply.getAttach()) {
            offeredTerm.accumulateAndGet(reply.getTerm(), Math::max);
            ticks.accept(Action.ATTACH);
        } else if (reply.getNeedRemount()) {
            offeredTerm.accumulateAndGet(reply.getTerm(), Math::max);
            remountWantedAt.accumulateAndGet(remountsBefore, Math::max);
            ticks.accept(Action.REMOUNT);
        } else {
            term.accumulateAndGet(reply.getTerm(), Math::max);
        }
    }

    private void pingFailed(Throwable e) {
        long failures = consecutivePingFailures.incrementAndGet();
        if (failures == 3 || failures % 60 == 0) {
            LOG.warn("Node {} cannot reach the master {} ({} pings failed): {}", nodeId, leader, failures,
                    e.getMessage());
        }
        if (addresses.size() > 1) {
            ticks.accept(Action.DISCOVER);
        }
    }

    /** Re-mounts the segment empty: the master forgot this node (its records go). Heartbeat thread. */
    void remount() {
        if (remountWantedAt.get() < remounts.get()) {
            return; // asked by a ping sent before the last re-mount: that re-mount answered it
        }
        // Before the master can hand out a descriptor of the new mount.
        long epoch = segment.mountEpoch() + 1;
        segment.moveMountEpoch(epoch, false);
        com.google.protobuf.ByteString key = access.rekey(epoch);
        master().callSync(Opcode.REMOUNT_SEGMENT, ReMountSegmentRequest.newBuilder().setNodeId(nodeId)
                .addSegments(segmentMsg.get()).addAccessKeys(key).build(), Empty.parser());
        term.accumulateAndGet(offeredTerm.get(), Math::max);
        remounts.incrementAndGet();
        LOG.warn("Master {} did not know node {}; re-mounted segment {} (its objects are gone)", leader, nodeId,
                segment.name());
        joined.run();
    }

    /** The record of a ledger entry as an attach reports it: every field the writer recorded. */
    static CommitRecord recordOf(SegmentLedger.Entry e) {
        return CommitRecord.newBuilder().setKey(e.key()).setOffset(e.offset()).setSize(e.size())
                .setVersion(e.version()).setPutId(e.putId()).setHardPin(e.hardPin()).setSoftPin(e.softPin())
                .setCrc32C(e.crc32c()).setYields(e.yields()).setExpireAtMs(e.expireAtMillis()).build();
    }

    /**
     * Joins a master that restored this segment: moves the mount epoch (descriptors of the previous master no
     * longer reach the bytes) and reports every object the segment holds, in chunks. Heartbeat thread.
     */
    void attach() {
        long joinTerm = offeredTerm.get();
        if (joinTerm <= term.get()) {
            return; // joined that term already (several pings asked for the attach)
        }
        long epoch = segment.mountEpoch() + 1;
        List<SegmentLedger.Entry> records = segment.moveMountEpoch(epoch, true);
        com.google.protobuf.ByteString key = access.rekey(epoch); // the new leader signs with it
        Segment msg = segmentMsg.get();
        int n = records.size();
        for (int from = 0; from == 0 || from < n; from += ATTACH_CHUNK) {
            boolean last = from + ATTACH_CHUNK >= n;
            AttachSegmentRequest.Builder b = AttachSegmentRequest.newBuilder().setSegment(msg).setTerm(joinTerm)
                    .setAccessKey(key)
                    .setFirst(from == 0).setLast(last).setScanFollows(last && joined.reportsCopies());
            for (SegmentLedger.Entry e : records.subList(from, Math.min(n, from + ATTACH_CHUNK))) {
                b.addRecords(recordOf(e));
            }
            master().callSync(Opcode.ATTACH_SEGMENT, b.build(), Empty.parser());
        }
        term.accumulateAndGet(joinTerm, Math::max);
        attaches.incrementAndGet();
        LOG.info("Node {} attached segment {} with {} objects to master {} (term {})", nodeId, segment.name(), n,
                leader, joinTerm);
        joined.run();
    }

    /**
     * Asks every configured master whether it leads (in parallel: a paused one must not hold up the others) and
     * follows the leader of the highest term. Heartbeat thread; waits at most about a second.
     */
    void discover() {
        List<String> all = addresses.all();
        java.util.concurrent.BlockingQueue<Integer> answered = new java.util.concurrent.LinkedBlockingQueue<>();
        List<CompletableFuture<ServiceReadyReply>> answers = new ArrayList<>();
        for (int i = 0; i < all.size(); i++) {
            int index = i;
            CompletableFuture<ServiceReadyReply> f = CompletableFuture.supplyAsync(() -> pool.get(all.get(index))
                    .callSync(Opcode.SERVICE_READY, Empty.getDefaultInstance(), ServiceReadyReply.parser()), probes);
            f.whenComplete((r, e) -> answered.add(index));
            answers.add(f);
        }
        // Take the answers as they come; once a leader answered, wait only briefly for one of a higher term (a
        // deposed leader may still call itself leader): a paused master must not hold the others up.
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000);
        String best = null;
        long bestTerm = -1;
        for (int seen = 0; seen < all.size(); seen++) {
            Integer i;
            try {
                i = answered.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (i == null) {
                break;
            }
            // a master that is down or refused answers nothing (getNow would throw its failure)
            ServiceReadyReply r = answers.get(i).isCompletedExceptionally() ? null : answers.get(i).getNow(null);
            if (r != null && r.getLeader() && r.getTerm() > bestTerm
                    && r.getTerm() >= term.get()) {
                best = all.get(i);
                bestTerm = r.getTerm();
                deadline = Math.min(deadline, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
            }
        }
        if (best != null && !best.equals(leader)) {
            LOG.info("Node {}: the master at {} leads (term {}); following it", nodeId, best, bestTerm);
            leader = best;
        }
    }

    /** Unmounts the segment at the master (a graceful stop), best effort. */
    void unmountQuietly() {
        try {
            master().callSync(Opcode.UNMOUNT_SEGMENT, io.tiffin.core.transport.proto.UnmountSegmentRequest
                    .newBuilder().setNodeId(nodeId).setSegmentName(segment.name()).build(), Empty.parser());
        } catch (RuntimeException e) {
            LOG.warn("Node {} could not unmount {} at the master ({}); the master drops it after the node TTL",
                    nodeId, segment.name(), e.getMessage());
        }
    }

    @Override
    public void close() {
        probes.shutdownNow();
    }
}
