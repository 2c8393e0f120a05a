package io.tiffin.core.node;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
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
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
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
 * bytes into the segment; reads hand Netty a view of the segment, so the bytes go to the socket with
 * no extra copy).
 *
 * <p>Thread-safe. Owns its segment, servers, connections and heartbeat thread; {@link #close()} stops
 * the heartbeat, unmounts (best effort), stops the data-plane server and only then frees the segment,
 * so no in-flight write can touch freed memory.
 */
public final class NodeServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(NodeServer.class);

    /**
     * How to run a node.
     *
     * @param nodeId unique id; empty = generated
     * @param host address to bind and advertise
     * @param port data-plane port (0 = any free port)
     * @param segmentSize bytes of memory to contribute
     * @param masterAddress {@code host:port} of the master
     * @param pingInterval heartbeat period
     */
    public record Options(String nodeId, String host, int port, long segmentSize, String masterAddress,
                          Duration pingInterval, TransportSettings transport) {
    }

    private final String nodeId;
    private final LocalSegment segment;
    private final TransportServer server;
    private final TransportClientPool masterPool;
    private final String masterAddress;
    private final ScheduledExecutorService heartbeat;
    private final String endpoint;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong consecutivePingFailures = new AtomicLong();
    private final AtomicLong remounts = new AtomicLong();

    private NodeServer(Options o) {
        this.nodeId = o.nodeId() == null || o.nodeId().isEmpty()
                ? "node-" + UUID.randomUUID().toString().substring(0, 8) : o.nodeId();
        this.masterAddress = o.masterAddress();
        this.segment = new LocalSegment(nodeId + "-seg0", o.segmentSize());
        this.server = new TransportServer("node-" + nodeId, o.transport());
        server.register(Opcode.DATA_WRITE, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            ByteBuf bulk = request.bulk();
            checkSegment(req);
            if (bulk.readableBytes() != req.getLength()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "write of " + req.getLength()
                        + " bytes carried " + bulk.readableBytes());
            }
            MemorySegment dst = segment.slice(req.getOffset(), req.getLength());
            bulk.getBytes(bulk.readerIndex(), dst.asByteBuffer());
            responder.ok(Empty.getDefaultInstance());
        }, null);
        server.register(Opcode.DATA_READ, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            checkSegment(req);
            MemorySegment src = segment.slice(req.getOffset(), req.getLength());
            responder.ok(Empty.getDefaultInstance(), Unpooled.wrappedBuffer(src.asByteBuffer()));
        }, null);
        this.masterPool = new TransportClientPool("node-" + nodeId + "-master", o.transport().withIoThreads(1), nodeId);
        this.heartbeat = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tiffin-node-heartbeat");
            t.setDaemon(true);
            return t;
        });
        try {
            server.start(o.host(), o.port());
            this.endpoint = o.host() + ":" + server.localAddress().getPort();
            LocalSegmentDirectory.register(segment);
            mount();
        } catch (RuntimeException e) {
            closeResources();
            throw e;
        }
        long period = o.pingInterval().toMillis();
        heartbeat.scheduleWithFixedDelay(this::ping, period, period, TimeUnit.MILLISECONDS);
    }

    private void checkSegment(DataRequest req) {
        if (!req.getSegment().equals(segment.name())) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "this node serves segment " + segment.name()
                    + ", not " + req.getSegment());
        }
    }

    /**
     * Starts a node and mounts its segment. Throws {@link TiffinException}: RPC_FAIL if the master
     * cannot be reached, INVALID_PARAMS if the memory cannot be reserved or the port bound.
     */
    public static NodeServer start(Options options) {
        NodeServer n = new NodeServer(options);
        LOG.info("Tiffin node {} serving segment {} ({} bytes) on {}, master {}", n.nodeId, n.segment.name(),
                n.segment.size(), n.endpoint, n.masterAddress);
        return n;
    }

    private Segment segmentMsg() {
        return Segment.newBuilder().setName(segment.name()).setNodeId(nodeId).setEndpoint(endpoint)
                .setCapacity(segment.size()).build();
    }

    private TransportClient master() {
        return masterPool.get(masterAddress);
    }

    private void mount() {
        master().callSync(Opcode.MOUNT_SEGMENT, MountSegmentRequest.newBuilder().setSegment(segmentMsg()).build(),
                Empty.parser());
    }

    private void ping() {
        if (closed.get()) {
            return;
        }
        try {
            PingReply reply = master().callSync(Opcode.PING, PingRequest.newBuilder().setNodeId(nodeId).build(),
                    PingReply.parser());
            if (consecutivePingFailures.getAndSet(0) >= 3) {
                LOG.info("Node {} reached the master {} again", nodeId, masterAddress);
            }
            if (reply.getNeedRemount()) {
                master().callSync(Opcode.REMOUNT_SEGMENT, ReMountSegmentRequest.newBuilder().setNodeId(nodeId)
                        .addSegments(segmentMsg()).build(), Empty.parser());
                remounts.incrementAndGet();
                LOG.warn("Master {} did not know node {}; re-mounted segment {} (its objects are gone)",
                        masterAddress, nodeId, segment.name());
            }
        } catch (RuntimeException e) {
            long failures = consecutivePingFailures.incrementAndGet();
            if (failures == 3 || failures % 60 == 0) {
                LOG.warn("Node {} cannot reach the master {} ({} pings failed): {}", nodeId, masterAddress, failures,
                        e.getMessage());
            }
        }
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

    /** How many times the node re-mounted after the master forgot it. */
    public long remounts() {
        return remounts.get();
    }

    /**
     * Stops heartbeats without unmounting, as if the process had died; for tests of node expiry. The
     * data plane keeps serving.
     */
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
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        heartbeat.shutdownNow();
        try {
            master().callSync(Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder().setNodeId(nodeId)
                    .setSegmentName(segment.name()).build(), Empty.parser());
        } catch (RuntimeException e) {
            LOG.warn("Node {} could not unmount {} at the master ({}); the master drops it after the node TTL",
                    nodeId, segment.name(), e.getMessage());
        }
        closeResources();
    }

    private void closeResources() {
        heartbeat.shutdownNow();
        masterPool.close();
        server.close();
        segment.close();
    }
}
