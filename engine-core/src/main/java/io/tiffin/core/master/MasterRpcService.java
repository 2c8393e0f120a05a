package io.tiffin.core.master;

import com.google.protobuf.MessageLite;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.local.InProcessMaster;
import io.tiffin.core.master.HeldReplies.Held;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.BatchLocations;
import io.tiffin.core.transport.CompactReplicas;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.ServerLimits;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.proto.BatchCodesReply;
import io.tiffin.core.transport.proto.BatchExistReply;
import io.tiffin.core.transport.proto.BatchKeysRequest;
import io.tiffin.core.transport.proto.BatchPutStartReply;
import io.tiffin.core.transport.proto.BatchPutStartRequest;
import io.tiffin.core.transport.proto.CountReply;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ExistReply;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.ListKeysReply;
import io.tiffin.core.transport.proto.ListKeysRequest;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.LocationsByRegexReply;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import io.tiffin.core.transport.proto.PutStartResult;
import io.tiffin.core.transport.proto.ReMountSegmentRequest;
import io.tiffin.core.transport.proto.RegexRequest;
import io.tiffin.core.transport.proto.RemoveAllRequest;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.SegmentStat;
import io.tiffin.core.transport.proto.ServiceReadyReply;
import io.tiffin.core.transport.proto.StatsReply;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Binds the {@link MasterService} to the wire: one handler per master opcode, decoding the request's
 * control message, calling the service and encoding the answer. Per-key outcomes of batch calls travel
 * as codes inside the reply; a whole-call failure is the frame's status. Every request is counted and
 * timed in {@link MasterMetrics}.
 *
 * <p><b>Where handlers run.</b> The per-key operations (put, get, exist, remove, single or batched) and
 * PING run inline on the connection's Netty event loop: they take one shard lock per touched shard for a
 * short critical section (map operations and, for a put, an allocation in memory; never I/O or a wait),
 * so handing them to a pool would cost two thread hand-offs per request, more than the work itself
 * ({@code tiffin bench master}, docs/BENCHMARKS.md). Everything that may scan many keys or sweep
 * segments (mount/unmount, regex queries and removals, remove-all, listing, stats) runs on the given
 * executor (the master's worker pool), so it never stalls an event loop. The longest an event loop can
 * wait for a shard lock is one shard's share of such a scan (1/{@value MetadataShard#COUNT} of the
 * keys).
 *
 * <p><b>Held replies.</b> A forced removal of an object that a client may still read through its location
 * cache is answered only once that reuse has ended ({@link CacheHold}), and so is a PutEnd
 * in the first moments after a restart ({@link MasterService#restartGuardUntilMillis}): the reply is
 * scheduled on an executor of its own (the master's {@code tiffin-master-held-replies} thread), so no event
 * loop or worker waits for it and no eviction pass delays it ({@link HeldReplies}). With failover on, removals and
 * EXPIREs are answered once the nodes' records say so too ({@link NodeForgets}).
 *
 * <p><b>Access.</b> The transport has refused every opcode outside the peer's roles
 * ({@link io.tiffin.core.transport.OpcodeRoles}); the handlers check what depends on the request through
 * its {@link Frame#peer()}: a forced removal by pattern needs the admin role, a node's connection speaks for one node
 * (acting for another, as unmounting it, needs the admin role), and a put's writer is the connection's
 * peer id, not the client id the request names.
 *
 * <p>Thread-safe: stateless apart from the service and metrics it calls, the table of bound calls
 * (a concurrent map filled at registration, read by {@link #call}) and its {@link HeldReplies}.
 */
public final class MasterRpcService implements InProcessMaster {
    private static final Logger LOG = LogManager.getLogger(MasterRpcService.class);

    private final MasterService master;
    private final MasterMetrics metrics;
    private final ClientReports clientReports;
    private final Leadership leadership;

    public MasterRpcService(MasterService master, MasterMetrics metrics, ClientReports clientReports) {
        this(master, metrics, clientReports, Leadership.alwaysLeader());
    }

    /** As the three-argument form, serving only while {@code leadership} says this master leads. */
    public MasterRpcService(MasterService master, MasterMetrics metrics, ClientReports clientReports,
                            Leadership leadership) {
        this.master = master;
        this.metrics = metrics;
        this.clientReports = clientReports;
        this.leadership = leadership;
        this.heldReplies = new HeldReplies(master);
    }

    /** {@code call}, refused while this master does not lead (every opcode but SERVICE_READY). */
    private Call gated(Opcode op, Call call) {
        return op == Opcode.SERVICE_READY ? call : request -> {
            leadership.check();
            return call.apply(request);
        };
    }

    /** Refuses a removal while the master recovers objects from nodes (one might come back; upserts: RecoveryGate). */
    private void refuseWhileRecovering(Opcode op) {
        if (master.recovering()) {
            throw new KeyFailure(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, op + ": this master took over moments ago"
                    + " and still recovers objects from its nodes; retry in a moment");
        }
    }

    /**
     * Lets the request's connection act for node {@code nodeId}: one node per connection ({@code Peer.requireNode}),
     * and not a node another process owns while it is alive ({@link NodeOwners}).
     */
    private void actForNode(Frame r, String nodeId, String what) {
        r.peer().requireNode(nodeId, what);
        master.checkNodeOwner(r.peer(), nodeId, what);
    }

    @FunctionalInterface
    private interface Call {
        MessageLite apply(Frame request) throws Exception;
    }

    /** Replies that wait for a hold (held removals, PutEnds right after a restart). */
    private final HeldReplies heldReplies;

    /**
     * Answers every held reply still waiting with an error saying its operation took effect (see
     * {@link HeldReplies#failAll}). Thread-safe; idempotent.
     */
    public void failHeldReplies() {
        heldReplies.failAll();
    }

    /** Every bound call but the held ones, for {@link #call}: filled by {@link #registerOn}. */
    private final Map<Opcode, Call> calls = new ConcurrentHashMap<>();
    /**
     * The held calls without their wait, for {@link #call} (which then waits) and {@link #callWithoutWaiting}: filled
     * by {@link #registerOn}.
     */
    private final Map<Opcode, HeldCall> heldCalls = new ConcurrentHashMap<>();
    /** Where held replies are scheduled (set by {@link #registerOn}). */
    private volatile ScheduledExecutorService heldDelays;

    private void bind(TransportServer server, Executor executor, Opcode op, Call ungated) {
        Call call = gated(op, ungated);
        calls.put(op, call);
        server.register(op, (request, responder) -> {
            MessageLite reply;
            try {
                reply = invoke(op, call, request);
            } catch (TiffinException e) {
                responder.fail(e.code(), e.getMessage());
                return;
            }
            responder.ok(reply);
        }, executor);
    }

    /** Runs {@code call} on {@code request} with the request metrics; the reply may be null (empty). */
    private MessageLite invoke(Opcode op, Call call, Frame request) throws Exception {
        return invoke(op, call::apply, reply -> reply, request);
    }

    /** Runs {@code call} with the request metrics; {@code replyOf} names the reply its result carries. */
    private <T> T invoke(Opcode op, FrameCall<T> call, java.util.function.Function<T, MessageLite> replyOf,
                         Frame request) throws Exception {
        long start = System.nanoTime();
        boolean ok = false;
        try {
            countIn(request);
            T result = call.apply(request);
            countOut(replyOf.apply(result));
            ok = true;
            return result;
        } finally {
            metrics.recordRequest(op, System.nanoTime() - start, ok);
        }
    }

    @FunctionalInterface
    private interface FrameCall<T> {
        T apply(Frame request) throws Exception;
    }

    private void countIn(Frame request) {
        metrics.addBytesIn(request.controlSize() + request.bulk().readableBytes() + 24);
    }

    private void countOut(MessageLite reply) {
        metrics.addBytesOut(reply == null ? 24 : reply.getSerializedSize() + 24);
    }

    /**
     * A call whose reply may have to wait: removals ({@link CacheHold}) and, right after a
     * restart, PutEnds ({@link MasterService#restartGuardUntilMillis}).
     */
    @FunctionalInterface
    private interface HeldCall {
        Held apply(Frame request) throws Exception;
    }

    /**
     * Binds a held call: its reply goes out when the master's clock reaches the hold the call noted,
     * scheduled on {@code delays} (the event loop or worker never waits); an in-process caller's own
     * thread waits for it.
     */
    private void bindHeld(TransportServer server, Executor executor, ScheduledExecutorService delays, Opcode op,
                          HeldCall ungated) {
        HeldCall call = request -> {
            leadership.check();
            return ungated.apply(request);
        };
        heldCalls.put(op, call);
        heldDelays = delays;
        server.register(op, (request, responder) -> {
            Held held;
            try {
                held = invoke(op, call::apply, Held::reply, request);
            } catch (TiffinException e) {
                responder.fail(e.code(), e.getMessage());
                return;
            }
            heldReplies.send(op, held, responder, delays);
        }, executor);
    }

    /**
     * The master call {@code op} made from this JVM without the network (see {@link InProcessMasters}):
     * the same handler, validation and metrics as over a connection; the reply comes back as an object
     * (null = empty control part) and a failure as the {@link TiffinException} the connection would have
     * carried. Runs on the caller's thread, like the handlers the server runs on its workers.
     *
     * @throws TiffinException the handler's failure; {@code INTERNAL_ERROR} for an unexpected exception
     *     or an opcode this service does not serve
     */
    @Override
    public MessageLite call(Opcode op, MessageLite request) {
        HeldCall held = heldCalls.get(op);
        if (held != null) {
            return heldReplies.await(op, inProcess(op, held::apply, Held::reply, request));
        }
        Call call = calls.get(op);
        if (call == null) {
            throw new TiffinException(ErrorCode.INTERNAL_ERROR, "the master does not serve " + op);
        }
        return inProcess(op, call::apply, reply -> reply, request);
    }

    /** Runs {@code call} for an in-process caller, with {@link #call}'s metrics and failures. */
    private <T> T inProcess(Opcode op, FrameCall<T> call, java.util.function.Function<T, MessageLite> replyOf,
                            MessageLite request) {
        Frame frame = Frame.inProcessRequest(op, request);
        try {
            return invoke(op, call, replyOf, frame);
        } catch (TiffinException e) {
            throw e.code().isOk() ? new TiffinException(ErrorCode.INTERNAL_ERROR, e.getMessage(), e) : e;
        } catch (Exception e) {
            LOG.error("The {} handler failed on an in-process call", op, e);
            throw new TiffinException(ErrorCode.INTERNAL_ERROR, "the " + op + " handler of the in-process master"
                    + " failed: " + e + "; check the log", e);
        } finally {
            frame.release();
        }
    }

    /**
     * {@link #call}, with a held reply ({@link HeldReplies}) released through the returned future, scheduled on the
     * master's held-replies thread, rather than waited for on the caller's thread.
     */
    @Override
    public java.util.concurrent.CompletableFuture<MessageLite> callWithoutWaiting(Opcode op, MessageLite request) {
        HeldCall held = heldCalls.get(op);
        ScheduledExecutorService delays = heldDelays;
        if (held == null || delays == null) {
            return java.util.concurrent.CompletableFuture.completedFuture(call(op, request));
        }
        Held result = inProcess(op, held::apply, Held::reply, request);
        FutureResponder answer = new FutureResponder();
        heldReplies.send(op, result, answer, delays);
        return answer.reply();
    }

    /** Refuses a put asking for a hard pin beyond {@code master.max-hard-pinned-share} ({@link ServerLimits}). */
    private void checkHardPin(ServerLimits limits, boolean hardPin, long bytes) {
        if (hardPin) {
            limits.checkHardPin(bytes, master.capacityBytes(), master.hardPinnedBytes());
        }
    }

    /**
     * Registers every master opcode on {@code server}: per-key operations inline on the event loop,
     * scans and segment changes on {@code executor} (see the class comment).
     *
     * @param delays runs the replies that wait for clients' cached locations to end (removals; PutEnds
     *     right after a restart) or for the nodes' records (removals and EXPIREs with failover on)
     */
    public void registerOn(TransportServer server, Executor executor, ScheduledExecutorService delays) {
        ServerLimits limits = server.settings().limits();
        Executor inline = null; // TransportServer runs handlers registered without executor on the event loop
        bind(server, executor, Opcode.SERVICE_READY, r -> ServiceReadyReply.newBuilder()
                .setVersion(TiffinVersion.VERSION).setLeader(leadership.leads()).setTerm(master.term())
                .setLeaderHint(leadership.leaderHint()).build());
        bind(server, inline, Opcode.PING, r -> {
            PingRequest req = r.parseControl(PingRequest.parser());
            actForNode(r, req.getNodeId(), "PING");
            PingOutcome outcome = master.ping(req.getNodeId(), req.getIncarnation());
            return PingReply.newBuilder().setNeedRemount(outcome == PingOutcome.UNKNOWN)
                    .setSuperseded(outcome == PingOutcome.SUPERSEDED).setAttach(outcome == PingOutcome.ATTACH)
                    .setTerm(master.term()).setMasterTimeMs(master.nowMillis()).build();
        });
        bind(server, executor, Opcode.MOUNT_SEGMENT, r -> {
            MountSegmentRequest req = r.parseControl(MountSegmentRequest.parser());
            Segment s = req.getSegment();
            actForNode(r, s.getNodeId(), "MOUNT_SEGMENT");
            master.mountSegment(s.getName(), s.getNodeId(), s.getEndpoint(), s.getCapacity(), s.getIncarnation(),
                        s.getMountEpoch(), s.getPingIntervalMs(), req.getAccessKey().toByteArray());
            master.nodeMountedBy(r.peer(), s.getNodeId(), s.getPingIntervalMs());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.REMOUNT_SEGMENT, r -> {
            ReMountSegmentRequest req = r.parseControl(ReMountSegmentRequest.parser());
            actForNode(r, req.getNodeId(), "REMOUNT_SEGMENT");
            for (int i = 0; i < req.getSegmentsCount(); i++) {
                Segment s = req.getSegments(i);
                byte[] key = i < req.getAccessKeysCount() ? req.getAccessKeys(i).toByteArray() : null;
                if (!s.getNodeId().equals(req.getNodeId())) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, "remount: segment " + s.getName()
                            + " names node " + s.getNodeId() + " but the request comes from " + req.getNodeId());
                }
                master.mountSegment(s.getName(), s.getNodeId(), s.getEndpoint(), s.getCapacity(), s.getIncarnation(),
                        s.getMountEpoch(), s.getPingIntervalMs(), key);
                master.nodeMountedBy(r.peer(), s.getNodeId(), s.getPingIntervalMs());
            }
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.ATTACH_SEGMENT, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.AttachSegmentRequest.parser());
            actForNode(r, req.getSegment().getNodeId(), "ATTACH_SEGMENT");
            master.attachSegment(req.getSegment(), req.getTerm(), req.getRecordsList(), req.getFirst(), req.getLast(),
                    req.getScanFollows(), req.getAccessKey().toByteArray());
            master.nodeMountedBy(r.peer(), req.getSegment().getNodeId(), req.getSegment().getPingIntervalMs());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.UNMOUNT_SEGMENT, r -> {
            UnmountSegmentRequest req = r.parseControl(UnmountSegmentRequest.parser());
            actForNode(r, req.getNodeId(), "UNMOUNT_SEGMENT");
            master.unmountSegment(req.getNodeId(), req.getSegmentName());
            return Empty.getDefaultInstance();
        });

        bind(server, inline, Opcode.PUT_START, r -> {
            PutStartRequest req = r.parseControl(PutStartRequest.parser());
            checkHardPin(limits, req.getOptions().getHardPin(), req.getSize());
            KeyResult<PutGrant> res = master.putStart(r.peer().writer(req.getClientId()), req.getKey(), req.getSize(),
                    Messages.fromMsg(req.getOptions()), req.getPutId());
            if (res.code() == ErrorCode.NO_AVAILABLE_HANDLE) {
                refuseWhileRecovering(Opcode.PUT_START); // the nodes with room may not have attached yet
            }
            throwIfFailed(res.code(), req.getKey());
            return PutStartReply.newBuilder().addAllReplicas(Messages.toMsgs(res.value().replicas()))
                    .setVersion(res.value().version()).setCommitOnNodes(master.commitOnNodes())
                    .setYields(res.value().yields()).setExpireAtMs(res.value().expireAtMillis()).build();
        });
        // Right after a restart, a completed put is reported once the previous run's cached locations end.
        // After a takeover, once the nodes that may hold the key's previous object have attached.
        bindHeld(server, inline, delays, Opcode.PUT_END, r -> {
            KeyRequest req = r.parseControl(KeyRequest.parser());
            CacheHold hold = new CacheHold(req.getCacheOwner());
            ErrorCode ended = master.putEnd(r.peer().writer(req.getClientId()), req.getKey(), req.getCrc32C(), hold);
            String why = ended == ErrorCode.OK ? null : master.putEndFailure(req.getKey(), ended);
            if (why != null) {
                throw new TiffinException(ended, why);
            }
            throwIfFailed(ended, req.getKey());
            return new Held(Empty.getDefaultInstance(), Math.max(master.restartGuardUntilMillis(), hold.untilMillis()),
                    hold.awaited(recoveryWait()));
        });
        bind(server, inline, Opcode.PUT_REVOKE, r -> {
            KeyRequest req = r.parseControl(KeyRequest.parser());
            throwIfFailed(master.putRevoke(r.peer().writer(req.getClientId()), req.getKey()), req.getKey());
            return Empty.getDefaultInstance();
        });
        bind(server, inline, Opcode.BATCH_PUT_START, r -> {
            BatchPutStartRequest req = r.parseControl(BatchPutStartRequest.parser());
            limits.checkBatch(Opcode.BATCH_PUT_START, req.getKeysCount());
            if (req.getSizesCount() != req.getKeysCount()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "BATCH_PUT_START names " + req.getKeysCount()
                        + " keys and " + req.getSizesCount() + " sizes; send one size per key");
            }
            checkHardPin(limits, req.getOptions().getHardPin(), req.getSizesList().stream()
                    .mapToLong(size -> Math.max(0, size)).reduce(0, (a, b) -> a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b));
            var results = master.batchPutStart(r.peer().writer(req.getClientId()), req.getKeysList(), req.getSizesList(),
                    Messages.fromMsg(req.getOptions()), req.getPutIdsList());
            if (results.stream().anyMatch(res -> res.code() == ErrorCode.NO_AVAILABLE_HANDLE)) {
                refuseWhileRecovering(Opcode.BATCH_PUT_START); // retried with the same put ids: the same replicas
            }
            BatchPutStartReply.Builder b = BatchPutStartReply.newBuilder();
            boolean commit = master.commitOnNodes();
            CompactReplicas.Writer compact = req.getCompact() ? new CompactReplicas.Writer() : null;
            for (KeyResult<PutGrant> res : results) {
                PutStartResult.Builder pr = PutStartResult.newBuilder().setCode(res.code().value());
                if (res.isOk()) {
                    if (compact == null) {
                        pr.addAllReplicas(Messages.toMsgs(res.value().replicas()));
                    } else {
                        res.value().replicas().forEach(d -> pr.addReplicas(compact.replica(d)));
                    }
                    pr.setVersion(res.value().version()).setCommitOnNodes(commit).setYields(res.value().yields())
                            .setExpireAtMs(res.value().expireAtMillis());
                }
                b.addResults(pr);
            }
            return compact == null ? b.build() : b.addAllSegments(compact.segments()).build();
        });
        bindHeld(server, inline, delays, Opcode.BATCH_PUT_END, r -> {
            BatchKeysRequest req = r.parseControl(BatchKeysRequest.parser());
            limits.checkBatch(Opcode.BATCH_PUT_END, req.getKeysCount());
            CacheHold hold = new CacheHold(req.getCacheOwner());
            return new Held(codes(master.batchPutEnd(r.peer().writer(req.getClientId()), req.getKeysList(),
                    req.getCrc32CsList(), hold)),
                    Math.max(master.restartGuardUntilMillis(), hold.untilMillis()), hold.awaited(recoveryWait()));
        });
        bind(server, inline, Opcode.BATCH_PUT_REVOKE, r -> {
            BatchKeysRequest req = r.parseControl(BatchKeysRequest.parser());
            limits.checkBatch(Opcode.BATCH_PUT_REVOKE, req.getKeysCount());
            return codes(master.batchPutRevoke(r.peer().writer(req.getClientId()), req.getKeysList()));
        });

        bind(server, inline, Opcode.GET_REPLICA_LIST, r -> {
            KeyRequest req = r.parseControl(KeyRequest.parser());
            KeyResult<ObjectLocation> res = master.getReplicaList(req.getKey(), Integer.toUnsignedLong(req.getCacheForMs()),
                    req.getCacheOwner());
            throwIfFailed(res.code(), req.getKey());
            return Messages.toMsg(res.value());
        });
        bind(server, inline, Opcode.BATCH_GET_REPLICA_LIST, r -> {
            BatchKeysRequest req = r.parseControl(BatchKeysRequest.parser());
            limits.checkBatch(Opcode.BATCH_GET_REPLICA_LIST, req.getKeysCount());
            return BatchLocations.toReply(master.batchGetReplicaList(req.getKeysList(),
                    Integer.toUnsignedLong(req.getCacheForMs()), req.getCacheOwner()), req.getCompact());
        });
        bind(server, executor, Opcode.GET_REPLICA_LIST_BY_REGEX, r -> {
            RegexRequest req = r.parseControl(RegexRequest.parser());
            LocationsByRegexReply.Builder b = LocationsByRegexReply.newBuilder();
            List<ObjectLocation> matches = master.getReplicaListByRegex(req.getRegex());
            long bytes = 0;
            for (ObjectLocation loc : matches) {
                var msg = Messages.toMsg(loc);
                bytes += msg.getSerializedSize() + 8L; // the field's tag and length (at most 6 bytes)
                if (bytes > limits.maxQueryAnswerSize()) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, matches.size() + " keys match " + req.getRegex()
                            + ": their locations take more than the " + limits.maxQueryAnswerSize() + " bytes one"
                            + " answer may carry (transport.max-query-answer-size); narrow the pattern (their read"
                            + " leases end after master.lease-ttl)");
                }
                b.addLocations(msg);
            }
            return b.build();
        });
        bind(server, inline, Opcode.EXIST_KEY, r -> {
            KeyRequest req = r.parseControl(KeyRequest.parser());
            KeyResult<Boolean> res = master.existKey(req.getKey());
            throwIfFailed(res.code(), req.getKey());
            return ExistReply.newBuilder().setExists(res.value()).build();
        });
        bindHeld(server, inline, delays, Opcode.EXPIRE, r -> { // answered once the nodes' records have the deadline
            var req = r.parseControl(io.tiffin.core.transport.proto.ExpireRequest.parser());
            List<KeyResult<Expiry.Outcome>> res = new java.util.ArrayList<>(1);
            var recorded = master.collectForgets(() -> res.add(master.expire(req.getKey(), req.getMode(),
                    req.getTtlMs(), req.getCondition())));
            throwIfFailed(res.getFirst().code(), req.getKey());
            return new Held(io.tiffin.core.transport.proto.ExpireReply.newBuilder().setTtlMs(res.getFirst().value()
                    .ttlBeforeMillis()).setApplied(res.getFirst().value().applied()).build(), 0, recorded);
        });
        bind(server, inline, Opcode.BATCH_EXIST_KEY, r -> {
            BatchKeysRequest req = r.parseControl(BatchKeysRequest.parser());
            limits.checkBatch(Opcode.BATCH_EXIST_KEY, req.getKeysCount());
            BatchExistReply.Builder b = BatchExistReply.newBuilder();
            for (KeyResult<Boolean> res : master.batchExistKey(req.getKeysList())) {
                b.addCodes(res.code().value()).addExists(res.isOk() && res.value());
            }
            return b.build();
        });

        // Forced removals answer once no client can read a removed object through a cached location.
        bindHeld(server, inline, delays, Opcode.REMOVE, r -> {
            KeyRequest req = r.parseControl(KeyRequest.parser());
            refuseWhileRecovering(Opcode.REMOVE);
            CacheHold hold = new CacheHold(req.getCacheOwner());
            ErrorCode[] code = new ErrorCode[1];
            var forgotten = master.collectForgets(() -> code[0] = master.remove(req.getKey(), req.getForce(), hold));
            if (code[0] != ErrorCode.OK && hold.untilMillis() > 0) { // found forced out: no earlier than that removal
                return Held.failing(KeyFailure.of(code[0], req.getKey()), hold.untilMillis(), forgotten);
            }
            throwIfFailed(code[0], req.getKey());
            return new Held(Empty.getDefaultInstance(), hold.untilMillis(), forgotten);
        });
        bindHeld(server, inline, delays, Opcode.BATCH_REMOVE, r -> {
            BatchKeysRequest req = r.parseControl(BatchKeysRequest.parser());
            limits.checkBatch(Opcode.BATCH_REMOVE, req.getKeysCount());
            refuseWhileRecovering(Opcode.BATCH_REMOVE);
            CacheHold hold = new CacheHold(req.getCacheOwner());
            List<ErrorCode> done = new java.util.ArrayList<>();
            var forgotten = master.collectForgets(() -> done.addAll(master.batchRemove(req.getKeysList(),
                    req.getForce(), hold)));
            return new Held(codes(done), hold.untilMillis(), forgotten);
        });
        bindHeld(server, executor, delays, Opcode.REMOVE_BY_REGEX, r -> {
            RegexRequest req = r.parseControl(RegexRequest.parser());
            requireAdminToForce(r, req.getForce(), Opcode.REMOVE_BY_REGEX);
            refuseWhileRecovering(Opcode.REMOVE_BY_REGEX);
            CacheHold hold = new CacheHold(req.getCacheOwner());
            long[] n = new long[1];
            var forgotten = master.collectForgets(() -> n[0] = master.removeByRegex(req.getRegex(), req.getForce(), hold));
            return new Held(CountReply.newBuilder().setCount(n[0]).build(), hold.untilMillis(), forgotten);
        });
        bindHeld(server, executor, delays, Opcode.REMOVE_ALL, r -> {
            RemoveAllRequest req = r.parseControl(RemoveAllRequest.parser());
            refuseWhileRecovering(Opcode.REMOVE_ALL);
            CacheHold hold = new CacheHold(req.getCacheOwner());
            long[] n = new long[1];
            var forgotten = master.collectForgets(() -> n[0] = master.removeAll(req.getForce(), hold));
            return new Held(CountReply.newBuilder().setCount(n[0]).build(), hold.untilMillis(), forgotten);
        });

        bind(server, executor, Opcode.LIST_KEYS, r -> {
            ListKeysRequest req = r.parseControl(ListKeysRequest.parser());
            int limit = req.getLimit() == 0 ? 1000 : (int) Math.min(req.getLimit(), 100_000);
            ListedKeys listed = master.listKeys(req.getPrefix(), limit);
            ListKeysReply.Builder b = ListKeysReply.newBuilder();
            boolean truncated = listed.truncated();
            long bytes = 0;
            for (Map.Entry<String, Long> e : listed.keys().entrySet()) {
                // a key's field (tag, length, UTF-8 bytes) and its size (at most 10 bytes) in the packed list
                bytes += com.google.protobuf.CodedOutputStream.computeStringSizeNoTag(e.getKey()) + 11L;
                if (bytes > limits.maxQueryAnswerSize()) {
                    truncated = true; // the caller lists on from the last key it got
                    break;
                }
                b.addKeys(e.getKey()).addSizes(e.getValue());
            }
            return b.setTruncated(truncated).build();
        });
        bind(server, executor, Opcode.STATS, r -> stats());
        bind(server, executor, Opcode.REGISTER_STORAGE, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.StorageRegistration.parser());
            actForNode(r, req.getNodeId(), "REGISTER_STORAGE");
            master.ssdTier().registerStorage(req.getNodeId(), req.getCapacity());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.REPORT_DISK_OBJECTS, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.DiskObjectsReport.parser());
            actForNode(r, req.getNodeId(), "REPORT_DISK_OBJECTS");
            limits.checkBatch(Opcode.REPORT_DISK_OBJECTS, req.getObjectsCount());
            master.ssdTier().reportDiskObjects(req.getNodeId(), req.getObjectsList(), req.getScanComplete());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.POLL_TASKS, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.TaskPollRequest.parser());
            actForNode(r, req.getNodeId(), "POLL_TASKS");
            limits.checkBatch(Opcode.POLL_TASKS, req.getUndeletedCount());
            limits.checkBatch(Opcode.POLL_TASKS, req.getUnstampedCount());
            if (req.getUndeletedVersionsCount() != req.getUndeletedCount()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "POLL_TASKS names " + req.getUndeletedCount()
                        + " undeleted SSD copies and " + req.getUndeletedVersionsCount() + " versions");
            }
            if (req.getUnstampedVersionsCount() != req.getUnstampedCount()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "POLL_TASKS names " + req.getUnstampedCount()
                        + " unstamped SSD copies and " + req.getUnstampedVersionsCount() + " versions");
            }
            master.ssdTier().unstamped(req.getNodeId(), req.getUnstampedList(), req.getUnstampedVersionsList());
            var drain = req.getDrainSegment().isEmpty() ? new SsdTierService.Drain(0, 0) : master.ssdTier().drain(
                    req.getNodeId(), req.getDrainSegment()); // before the poll: its offloads go out with this answer
            var tasks = master.ssdTier().pollTasks(req.getNodeId(), req.getMaxOffloads(), req.getMaxPromotions(),
                    req.getUndeletedList(), req.getUndeletedVersionsList());
            return io.tiffin.core.transport.proto.TaskPollReply.newBuilder().addAllOffloads(tasks.offloads())
                    .addAllPromotions(tasks.promotions()).addAllDeletes(tasks.deletes())
                    .addAllDeleteVersions(tasks.deleteVersions()).addAllDeadlines(tasks.deadlines())
                    .setDrainRemaining(drain.remaining()).setDrainFailed(drain.failed()).build();
        });
        bind(server, executor, Opcode.OFFLOAD_DONE, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.OffloadResult.parser());
            actForNode(r, req.getNodeId(), "OFFLOAD_DONE");
            master.ssdTier().offloadFailed(req.getNodeId(), req.getFailedList(), req.getFailedVersionsList());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.PROMOTION_START, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.PromotionStartRequest.parser());
            actForNode(r, req.getNodeId(), "PROMOTION_START");
            KeyResult<ReplicaDescriptor> res = master.ssdTier().promotionStart(req.getNodeId(), req.getKey());
            throwIfFailed(res.code(), req.getKey());
            // the object is held by its promotion task (not replaced meanwhile): its checksum for the node to check
            return PutStartReply.newBuilder().addReplicas(Messages.toMsg(res.value()))
                    .setCrc32C(master.ssdTier().checksumOf(req.getKey())).build();
        });
        bind(server, executor, Opcode.PROMOTION_END, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.PromotionEndRequest.parser());
            actForNode(r, req.getNodeId(), "PROMOTION_END");
            throwIfFailed(master.ssdTier().promotionEnd(req.getNodeId(), req.getKey(), req.getReplicaId(), req.getSuccess()),
                    req.getKey());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.EVICT_DISK_REPLICA, r -> {
            var req = r.parseControl(io.tiffin.core.transport.proto.DiskEvicted.parser());
            actForNode(r, req.getNodeId(), "EVICT_DISK_REPLICA");
            limits.checkBatch(Opcode.EVICT_DISK_REPLICA, req.getKeysCount());
            master.ssdTier().evictDiskReplicas(req.getNodeId(), req.getKeysList());
            return Empty.getDefaultInstance();
        });
        bind(server, executor, Opcode.CLIENT_REPORT, r -> {
            clientReports.accept(r.parseControl(io.tiffin.core.transport.proto.ClientReport.parser()));
            return Empty.getDefaultInstance();
        });
    }

    /** What a PutEnd waits for after a takeover: the end of the recovery; null when none runs. */
    private java.util.concurrent.CompletableFuture<Void> recoveryWait() {
        return master.recovering() ? master.recoveryEnded() : null;
    }

    /** The cluster summary served by STATS and /health. */
    StatsReply stats() {
        StatsReply.Builder b = StatsReply.newBuilder()
                .setVersion(TiffinVersion.VERSION)
                .setKeys(master.keyCount())
                .setExpiringKeys(master.expiringKeyCount())
                .setCapacity(master.capacityBytes())
                .setUsed(master.usedBytes())
                .setLiveNodes(master.liveNodes().size())
                .setEvictedKeys(master.counters().evictedKeys())
                .setHotCache(clientReports.totals());
        for (var v : master.segmentViews()) {
            b.addSegments(SegmentStat.newBuilder()
                    .setName(v.name())
                    .setNodeId(v.nodeId())
                    .setEndpoint(master.endpointOf(v.name()) == null ? "" : master.endpointOf(v.name()))
                    .setCapacity(v.capacity())
                    .setUsed(v.used())
                    .setLargestFree(v.largestFreeRegion())
                    .setStatus(v.status().name()));
        }
        return b.build();
    }

    /**
     * A forced removal by pattern is the admin's: it can take every object, those clients are reading too. A forced
     * removal of named keys is a client's, as a forced replacement (an upsert) of them is.
     */
    private static void requireAdminToForce(Frame request, boolean force, Opcode op) {
        if (force) {
            request.peer().requireAdmin(op + " with force (removing objects while clients read them)");
        }
    }

    private static BatchCodesReply codes(List<ErrorCode> codes) {
        BatchCodesReply.Builder b = BatchCodesReply.newBuilder();
        for (ErrorCode c : codes) {
            b.addCodes(c.value());
        }
        return b.build();
    }

    private static void throwIfFailed(ErrorCode code, String key) {
        if (code != ErrorCode.OK) {
            throw KeyFailure.of(code, key);
        }
    }
}
