package io.tiffin.core.node;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.local.LocalSegment;
import io.tiffin.core.local.LocalSegmentDirectory;
import io.tiffin.core.local.SharedMemoryFiles;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportClientPool;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.ReMountSegmentRequest;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.SegmentInfoReply;
import io.tiffin.core.transport.proto.SegmentInfoRequest;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import io.tiffin.core.util.Ticker;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A storage node: contributes one off-heap {@link LocalSegment} to the pool, mounts it at the master,
 * pings the master every {@code node.ping-interval} (re-mounting when the master answers that it does
 * not know this node) and serves the data plane: {@code DATA_READ} and {@code DATA_WRITE} of
 * (segment, offset, length).
 *
 * <p>Data-plane handlers run on the Netty event loop: they only copy memory (writes copy the received
 * bytes into the segment, or, for a large write on a plaintext connection, find them there already: the
 * socket was read straight into the slice, see {@link #writeDestination}; reads hand Netty a view of the
 * segment, so the bytes go to the socket with no extra copy).
 *
 * <p>Thread-safe. Owns its segment, servers, connections, heartbeat thread and SSD tier ({@code
 * NodeStorageTier}, which owns the storage backend); {@link #close()} has the tier take what only this memory
 * holds ({@code node.stop-offload-timeout}), stops the heartbeat, unmounts (best effort), stops the data-plane
 * server, closes the tier and only then frees the segment, so no in-flight write, offload or promotion can touch
 * freed memory.
 */
public final class NodeServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeServer.class);

    private enum Tick { PING, POLL, REMOUNT, ATTACH, DISCOVER }

    /** A reusable heartbeat ring slot. */
    private static final class TickEvent {
        Tick tick;
    }

    private final NodeOptions options;
    private final DataPlaneCounters dataPlane = new DataPlaneCounters();
    private final String nodeId;
    private final long incarnation;
    private final LocalSegment segment;
    private final DataAccessCheck access;
    private final TransportServer server;
    private final TransportClientPool masterPool;
    private final String masterAddress;
    private final MasterLink link;
    private final ScheduledExecutorService heartbeat;
    private final com.lmax.disruptor.dsl.Disruptor<TickEvent> heartbeatDisruptor;
    private volatile com.lmax.disruptor.RingBuffer<TickEvent> heartbeatRing;
    private final NodeStorageTier tier;
    private final java.util.ArrayDeque<Long> pingTimes = new java.util.ArrayDeque<>();
    private final String endpoint;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Set by {@link #close()} first: the heartbeat ring goes on while the SSD tier drains. */
    private final AtomicBoolean closing = new AtomicBoolean();
    private final Duration pingInterval;
    private final Ticker ticker;
    /** A quick extra heartbeat is scheduled (while the node looks for a leader). */
    private final AtomicBoolean quickPingPending = new AtomicBoolean();

    private NodeServer(NodeOptions o) {
        this.options = o;
        String configured = o.nodeId() == null ? "" : o.nodeId();
        java.util.function.Supplier<String> generated = () -> "node-" + UUID.randomUUID().toString().substring(0, 8);
        String storagePath = o.storage() == null ? "" : o.storage().context().properties().getOrDefault("path", "");
        // With an SSD tier the id lives beside it: the copies on that disk stay this node's across restarts.
        this.nodeId = !storagePath.isEmpty() ? NodeIdFile.resolve(configured, java.nio.file.Path.of(storagePath),
                generated) : configured.isEmpty() ? generated.get() : configured;
        this.masterAddress = o.masterAddress();
        this.pingInterval = o.pingInterval();
        this.ticker = o.ticker();
        // A new incarnation per run: a restart under the same node.id gets a new segment name, and the
        // master drops the previous run's segment with the objects whose bytes died with it.
        long run = 0;
        while (run == 0) {
            run = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        }
        this.incarnation = run;
        if (o.sharedMemoryDir() != null) {
            SharedMemoryFiles.removeOrphans(o.sharedMemoryDir());
        }
        this.segment = new LocalSegment(nodeId + "-seg0-" + String.format("%08x", (int) (run >>> 32)), o.segmentSize(),
                o.sharedMemoryDir(), o.segmentPrefault());
        // The segment's mount epoch: 1 at the first mount, one more before every re-mount (written by the
        // heartbeat thread only). Data-plane requests of another epoch are refused (checkSegment): the
        // master that issued them has forgotten the segment and may place new objects where theirs were.
        segment.setMountEpoch(1);
        // Data-plane requests need a grant the master signed with this mount's key (sent with the mount).
        this.access = new DataAccessCheck(segment.name(), ticker);
        access.rekey(1);
        // The data plane's own default (one loop per processor), not the master's and clients' (half).
        this.server = new TransportServer("node-" + nodeId, o.transport().ioThreads() == 0
                ? o.transport().withIoThreads(EventLoops.dataPlaneThreads()) : o.transport());
        server.register(Opcode.DATA_WRITE, dataPlane.countingRefusals((request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            ByteBuf bulk = request.bulk();
            checkSegment(req);
            if (bulk.readableBytes() != req.getLength()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "write of " + req.getLength()
                        + " bytes carried " + bulk.readableBytes());
            }
            access.check(req, io.tiffin.api.DataGrant.WRITE, "DATA_WRITE");
            if (req.getLength() > 0 && !request.bulkPlaced()) {
                MemorySegment dst = segment.slice(req.getOffset(), req.getLength());
                bulk.getBytes(bulk.readerIndex(), dst.asByteBuffer());
            }
            if (req.hasCommit()) {
                // the replica's last slice: the whole object is written (slices of a replica arrive in order
                // on one connection), so a master that takes over may recover it from here
                var c = req.getCommit();
                segment.slice(c.getOffset(), c.getSize()); // bounds
                segment.commit(req.getMountEpoch(), io.tiffin.core.local.SegmentLedger.Entry.of(c, c.getOffset()));
            }
            responder.ok(Empty.getDefaultInstance());
            dataPlane.writes.increment();
            dataPlane.writeBytes.add(req.getLength());
        }), null, this::writeDestination);
        server.register(Opcode.FORGET, (request, responder) -> {
            var stamped = ForgetRequests.apply(request.parseControl(
                    io.tiffin.core.transport.proto.ForgetRequest.parser()), segment, tier(), link().term());
            stamped.whenComplete((reply, e) -> {
                Throwable cause = e instanceof java.util.concurrent.CompletionException c ? c.getCause() : e;
                if (cause == null) {
                    responder.ok(reply);
                } else if (cause instanceof TiffinException t) {
                    responder.fail(t.code(), "FORGET: " + t.getMessage());
                } else {
                    responder.fail(ErrorCode.INTERNAL_ERROR, "FORGET: " + cause);
                }
            });
        }, null);
        long maxRead = o.transport().maxFrameSize() - 64 * 1024L; // an answer must fit one frame
        server.register(Opcode.DATA_READ, dataPlane.countingRefusals((request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            checkSegment(req);
            access.check(req, io.tiffin.api.DataGrant.READ, "DATA_READ");
            if (req.getLength() > maxRead) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "a read of " + req.getLength() + " bytes does not"
                        + " fit one answer frame (transport.max-frame-size less 64 KiB = " + maxRead + "); read slices");
            }
            MemorySegment src = segment.slice(req.getOffset(), req.getLength());
            responder.ok(Empty.getDefaultInstance(), Unpooled.wrappedBuffer(src.asByteBuffer()));
            dataPlane.reads.increment();
            dataPlane.readBytes.add(req.getLength());
        }), null);
        server.register(Opcode.SEGMENT_INFO, (request, responder) -> {
            SegmentInfoRequest req = request.parseControl(SegmentInfoRequest.parser());
            if (!req.getSegment().equals(segment.name())) {
                throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "this node serves segment " + segment.name()
                        + ", not " + req.getSegment());
            }
            SegmentInfoReply.Builder info = SegmentInfoReply.newBuilder().setSegment(segment.name())
                    .setSize(segment.size());
            long[] id = segment.sharedFileIdentity();
            if (id != null && !SharedMemoryFiles.hostId().isEmpty()) {
                info.setSharedMemoryPath(segment.sharedFile().toAbsolutePath().toString())
                        .setHostId(SharedMemoryFiles.hostId()).setDevice(id[0]).setInode(id[1])
                        .setPid(ProcessHandle.current().pid()).setPidNamespace(SharedMemoryFiles.pidNamespace())
                        .setFileSize(segment.sharedFileSize()).setMountEpochOffset(segment.mountEpochOffset());
            }
            responder.ok(info.build());
        }, null);
        // a node's own connections (to its master, to other nodes) present the node role's token, and may take
        // client.connect-timeout to connect (its server closes silent peers after transport.handshake-timeout)
        TransportSettings asNode = o.transport().presentingAs(io.tiffin.core.transport.Role.NODE)
                .withHandshakeTimeout(o.connectTimeout());
        this.masterPool = new TransportClientPool("node-" + nodeId + "-master", asNode.withIoThreads(1), nodeId, ticker);
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tiffin-node-ticker");
            t.setDaemon(true);
            return t;
        });
        this.heartbeatDisruptor = new com.lmax.disruptor.dsl.Disruptor<>(TickEvent::new, 64, r -> {
            Thread t = new Thread(r, "tiffin-node-heartbeat");
            t.setDaemon(true);
            return t;
        }, com.lmax.disruptor.dsl.ProducerType.MULTI, new com.lmax.disruptor.BlockingWaitStrategy());
        heartbeatDisruptor.handleEventsWith((ev, seq, end) -> onTick(ev.tick));
        heartbeatDisruptor.setDefaultExceptionHandler(new com.lmax.disruptor.ExceptionHandler<>() {
            @Override
            public void handleEventException(Throwable ex, long sequence, TickEvent event) {
                LOG.warn("Node heartbeat {} failed: {}", event.tick, ex.toString());
            }

            @Override
            public void handleOnStartException(Throwable ex) {
                LOG.error("Node heartbeat ring failed to start", ex);
            }

            @Override
            public void handleOnShutdownException(Throwable ex) {
                LOG.warn("Node heartbeat ring failed to stop cleanly", ex);
            }
        });
        this.link = new MasterLink(nodeId, incarnation, segment, access, this::segmentMsg, masterPool,
                io.tiffin.core.coordination.MasterAddresses.parse(masterAddress), pingInterval, ticker,
                action -> publishTick(switch (action) {
                    case REMOUNT -> Tick.REMOUNT;
                    case ATTACH -> Tick.ATTACH;
                    case DISCOVER -> Tick.DISCOVER;
                }), new MasterLink.Rejoin() {
                    @Override
                    public void run() {
                        if (tier() != null) {
                            tier().register();
                        }
                    }

                    @Override
                    public boolean reportsCopies() {
                        return tier() != null;
                    }
                });
        NodeStorageTier storageTier = null;
        io.tiffin.api.spi.storage.StorageBackend backend = null;
        boolean mounted = false;
        try {
            if (o.storage() != null) {
                // the backend learns this node's id, also when it was generated here (node.id unset)
                io.tiffin.api.spi.PluginContext context = o.storage().context().nodeId().isEmpty()
                        ? new io.tiffin.api.spi.PluginContext(o.storage().context().properties(), nodeId)
                        : o.storage().context();
                backend = io.tiffin.core.plugin.PluginRegistry.create(
                        "node.storage-backend " + o.storage().factory().name(),
                        () -> o.storage().factory().create(context));
                storageTier = new NodeStorageTier(nodeId, "node.storage-backend " + o.storage().factory().name()
                        + " of plugin " + o.storage().plugin(), backend, segment, () -> link.master(), masterPool,
                        ticker, asNode, o.storage().stopOffload());
                NodeStorageTier t = storageTier;
                server.register(Opcode.DATA_READ_SSD, t::serveRead, null);
            }
            this.tier = storageTier;
            server.start(o.host(), o.port());
            this.endpoint = o.host() + ":" + server.localAddress().getPort();
            LocalSegmentDirectory.register(segment);
            mounted = link.mountAtStart();
            if (mounted && tier != null) {
                tier.register(); // the backend's scan: its failure names the backend and stops the start
            }
        } catch (RuntimeException | Error e) {
            // nothing of a node that did not start stays: not its mount at the master (which would place puts in
            // it until the node TTL), nor its threads, port, backend or memory
            if (mounted) {
                link.unmountQuietly();
            }
            try {
                if (storageTier != null) {
                    storageTier.close(); // and the backend it owns
                } else if (backend != null) {
                    backend.close(); // the tier never took it
                }
            } catch (RuntimeException | LinkageError | StackOverflowError closing) { // plugin code
                e.addSuppressed(closing);
            }
            closeResources();
            throw e;
        }
        this.heartbeatRing = heartbeatDisruptor.start();
        long period = o.pingInterval().toMillis();
        heartbeat.scheduleAtFixedRate(() -> publishTick(Tick.PING), period, period, TimeUnit.MILLISECONDS);
        if (tier != null) {
            long poll = o.taskPollInterval().toMillis();
            heartbeat.scheduleAtFixedRate(() -> publishTick(Tick.POLL), poll, poll, TimeUnit.MILLISECONDS);
        }
    }

    /** For handlers bound in the constructor (fields read once it has run), and {@link NodeMetrics}. */
    MasterLink link() {
        return link;
    }

    /** The SSD tier, or null without one. */
    NodeStorageTier tier() {
        return tier;
    }

    /** What the data plane has served. */
    DataPlaneCounters dataPlane() {
        return dataPlane;
    }

    /** What this node was started with. */
    NodeOptions options() {
        return options;
    }

    /** The data plane's TLS contexts, or null without TLS. */
    io.tiffin.core.transport.TlsContexts tls() {
        return server.tls();
    }

    private void publishTick(Tick tick) {
        // Lossy: if the heartbeat thread is behind, a tick is skipped rather than queued.
        com.lmax.disruptor.RingBuffer<TickEvent> ring = heartbeatRing;
        if (ring != null) {
            ring.tryPublishEvent((ev, seq, t) -> ev.tick = t, tick);
        }
    }

    /** Pings again in 100 ms (once): while the node looks for a leader, it does not wait a whole period. */
    private void pingSoon() {
        if (!closed.get() && quickPingPending.compareAndSet(false, true)) {
            try {
                heartbeat.schedule(() -> {
                    quickPingPending.set(false);
                    publishTick(Tick.PING);
                }, 100, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                quickPingPending.set(false); // stopping
            }
        }
    }

    private void onTick(Tick tick) {
        if (closed.get()) {
            return;
        }
        if (tick == Tick.PING) {
            synchronized (pingTimes) {
                pingTimes.add(ticker.nanos());
                if (pingTimes.size() > 100_000) {
                    pingTimes.poll();
                }
            }
            link.ping();
        } else if (tick == Tick.REMOUNT || tick == Tick.ATTACH) {
            try {
                if (tick == Tick.REMOUNT) {
                    link.remount();
                } else {
                    link.attach();
                }
            } catch (RuntimeException e) {
                LOG.warn("Node {} could not {} at {}: {}", nodeId, tick == Tick.REMOUNT ? "re-mount" : "attach",
                        link.leader(), e.getMessage());
                pingSoon();
            }
        } else if (tick == Tick.DISCOVER) {
            String before = link.leader();
            link.discover();
            if (!link.leader().equals(before)) {
                publishTick(Tick.PING);
            } else {
                pingSoon();
            }
        } else {
            tier.queueNoticeDelivery(); // first: queued notices go ahead of the offloads this poll brings
            try {
                tier.pollTasks();
            } catch (RuntimeException e) {
                LOG.debug("task poll failed: {}", e.getMessage());
            }
        }
    }

    /** When ({@link Ticker#nanos()}) the heartbeat ring sent its recent pings; for measurements. */
    public long[] pingTimesNanos() {
        synchronized (pingTimes) {
            return pingTimes.stream().mapToLong(Long::longValue).toArray();
        }
    }

    /** The node's SSD backend, or null without an SSD tier. */
    public io.tiffin.api.spi.storage.StorageBackend storageBackend() {
        return tier == null ? null : tier.backend();
    }

    /**
     * Where a large DATA_WRITE's bulk is received straight from the socket (the transport's {@link
     * io.tiffin.core.transport.BulkPlacer}): the slice it names, after the handler's checks, so a refused write
     * is received as usual and refused by the handler, its slice untouched. Asked again before further reads
     * into the slice (at most once a millisecond), so a grant that expires or a re-mount while the bulk arrives
     * stops it there.
     */
    private MemorySegment writeDestination(ByteBuf control, int bulkLength) {
        DataRequest req;
        try {
            req = DataRequest.parseFrom(control.nioBuffer());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            return null;
        }
        checkSegment(req);
        if (req.getLength() != bulkLength) {
            return null;
        }
        access.check(req, io.tiffin.api.DataGrant.WRITE, "DATA_WRITE");
        return segment.slice(req.getOffset(), req.getLength());
    }

    private void checkSegment(DataRequest req) {
        if (!req.getSegment().equals(segment.name())) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "this node serves segment " + segment.name()
                    + ", not " + req.getSegment());
        }
        long epoch = segment.mountEpoch();
        if (req.getMountEpoch() != 0 && req.getMountEpoch() != epoch) {
            throw new TiffinException(ErrorCode.REPLICA_IS_GONE, "segment " + segment.name() + " was re-mounted"
                    + " (mount " + epoch + ") after the master handed out this replica (mount " + req.getMountEpoch()
                    + "); the master forgot its objects meanwhile: look the key up again, or repeat the put");
        }
    }

    /** Event-loop threads of the data plane. */
    public int ioThreads() {
        return server.ioThreads();
    }

    /** The commit records the segment holds (its ledger), in offset order; for tests and diagnostics. */
    public java.util.List<io.tiffin.core.local.SegmentLedger.Entry> records() {
        return segment.ledger().snapshot();
    }

    /** The current mount epoch of the segment; for tests. */
    public long mountEpoch() {
        return segment.mountEpoch();
    }

    /** Starts a node and mounts its segment; throws {@link TiffinException}: RPC_FAIL if the master cannot be
     * reached, INVALID_PARAMS if the memory cannot be reserved or the port bound, or if the storage backend cannot be
     * created; the backend's own code (or FILE_READ_FAIL), naming the backend and its plugin, if it fails to list what
     * it holds. A node that fails to start leaves nothing running, nor a mount at the master. */
    public static NodeServer start(NodeOptions options) {
        NodeServer n = new NodeServer(options);
        LOG.info("Tiffin node {} serving segment {} ({} bytes{}) on {}, master {}", n.nodeId, n.segment.name(),
                n.segment.size(), n.segment.sharedFile() == null ? "" : " in shared memory " + n.segment.sharedFile(),
                n.endpoint, n.masterAddress);
        return n;
    }

    private Segment segmentMsg() {
        return Segment.newBuilder().setName(segment.name()).setNodeId(nodeId).setEndpoint(endpoint)
                .setCapacity(segment.size()).setIncarnation(incarnation).setMountEpoch(segment.mountEpoch())
                .setPingIntervalMs(pingInterval.toMillis()).build();
    }

    public String nodeId() {
        return nodeId;
    }

    /** {@code host:port} of the data plane. */
    public String endpoint() {
        return endpoint;
    }

    public String segmentName() {
        return segment.name();
    }

    /** The shared-memory file holding the segment ({@code node.shared-memory-dir}), or null. */
    public java.nio.file.Path sharedMemoryFile() {
        return segment.sharedFile();
    }

    /** Whether another process of this node.id has joined the master since (this one stopped its heartbeats). */
    public boolean superseded() {
        return link.superseded();
    }

    /** How many times the node re-mounted after the master forgot it. */
    public long remounts() {
        return link.remounts();
    }

    /** How many times the node attached its segment to a master that restored it (failover, restart). */
    public long attaches() {
        return link.attaches();
    }

    /** The master this node follows now ({@code host:port}). */
    public String masterLeader() {
        return link.leader();
    }

    /** Stops heartbeats without unmounting, as if the process had died (the data plane serves on); for tests. */
    public void stopHeartbeats() {
        heartbeat.shutdownNow();
    }

    /**
     * Stops the node abruptly, as a crash would: no unmount, heartbeats and data plane stop at once, the
     * memory is freed. The master notices only when the node TTL passes. For failure tests.
     */
    public void crash() {
        if (closed.compareAndSet(false, true)) {
            closeResources();
        }
    }

    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        if (tier != null) {
            tier.drainBeforeStop(); // the heartbeat ring pings and polls its tasks meanwhile
        }
        if (closed.compareAndSet(false, true)) { // not crashed meanwhile
            heartbeat.shutdownNow();
            link.unmountQuietly();
            closeResources();
        }
    }

    private void closeResources() {
        heartbeat.shutdownNow();
        heartbeatDisruptor.halt();
        server.close();
        if (tier != null) {
            tier.close();
        }
        if (link != null) {
            link.close();
        }
        masterPool.close();
        segment.close();
    }
}
