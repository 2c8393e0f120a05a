package io.tiffin.bench;

import io.netty.channel.EventLoopGroup;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.MountSegmentRequest;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.transport.proto.Segment;
import io.tiffin.core.transport.proto.UnmountSegmentRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Many fake nodes from one process: each has its own connection to the master (a master binds a connection to
 * one node id), mounts its share of the fake segments (metadata only, no memory behind them, as {@code bench
 * master} mounts them) and pings at the nodes' interval, spread evenly over it, as real nodes do. Segment
 * {@code j} belongs to node {@code j % nodes}, so every node has one at least when {@code segments >= nodes}.
 *
 * <p>Thread-safe: pings run on one scheduler thread and complete on the event loops; {@link #close()} stops them,
 * unmounts the segments (when asked) and closes the connections, once.
 */
final class FakeNodes implements AutoCloseable {
    private final List<TransportClient> connections = new ArrayList<>();
    private final List<List<String>> segmentsOf = new ArrayList<>();
    private final String idPrefix;
    private final ScheduledExecutorService pinger;
    private final AtomicLong pings = new AtomicLong();
    private final AtomicLong failedPings = new AtomicLong();
    private volatile String lastPingFailure;
    /** Nodes that left ({@link #leave}): they ping no more. */
    private final java.util.concurrent.atomic.AtomicIntegerArray left;
    /** Set once every segment is mounted: from then on a "re-mount" answer means the master dropped a node. */
    private volatile boolean mounted;

    /**
     * Connects {@code nodes} fake nodes to the master at {@code host:port} and mounts {@code segments} segments of
     * {@code segmentCapacity} bytes over them; every node pings from its connection on, until {@link #close}.
     */
    FakeNodes(String host, int port, String idPrefix, int nodes, int segments, long segmentCapacity,
            Duration pingInterval, TransportSettings settings, EventLoopGroup group) {
        this.idPrefix = idPrefix;
        this.left = new java.util.concurrent.atomic.AtomicIntegerArray(nodes);
        this.pinger = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-scale-ping");
            t.setDaemon(true);
            return t;
        });
        try {
            for (int i = 0; i < nodes; i++) {
                connections.add(TransportClient.connect(host, port, settings, nodeId(i), group));
                segmentsOf.add(new ArrayList<>());
            }
            // Ping before mounting: mounting many segments can outlast the node TTL, which would expire the first.
            startPinging(pingInterval);
            for (int j = 0; j < segments; j++) {
                int node = j % nodes;
                String name = nodeId(node) + "-seg" + j;
                Segment s = Segment.newBuilder().setName(name).setNodeId(nodeId(node))
                        .setEndpoint("127.0.0.1:" + (40000 + j % 20000)).setCapacity(segmentCapacity)
                        .setPingIntervalMs(pingInterval.toMillis()).build();
                connections.get(node).callSync(Opcode.MOUNT_SEGMENT,
                        MountSegmentRequest.newBuilder().setSegment(s).build(), Empty.parser());
                segmentsOf.get(node).add(name);
            }
            mounted = true;
        } catch (RuntimeException e) {
            close(false);
            throw e;
        }
    }

    String nodeId(int i) {
        return idPrefix + "-node" + i;
    }

    /** Every node pings every {@code interval}, node {@code i} offset by {@code i / nodes} of it. */
    private void startPinging(Duration interval) {
        long period = interval.toNanos();
        int n = connections.size();
        for (int i = 0; i < n; i++) {
            TransportClient c = connections.get(i);
            String id = nodeId(i);
            PingRequest ping = PingRequest.newBuilder().setNodeId(id).build();
            int node = i;
            pinger.scheduleAtFixedRate(() -> {
                if (left.get(node) == 0) {
                    ping(c, node, id, ping);
                }
            }, period * i / n, period, TimeUnit.NANOSECONDS);
        }
    }

    private void ping(TransportClient c, int node, String id, PingRequest ping) {
        c.call(Opcode.PING, ping, null).whenComplete((frame, error) -> {
            if (left.get(node) != 0) {
                if (frame != null) {
                    frame.release(); // sent before the node left: the answer no longer matters
                }
                return;
            }
            if (frame != null) {
                boolean remount;
                try {
                    remount = frame.parseControl(PingReply.parser()).getNeedRemount();
                } finally {
                    frame.release();
                }
                if (remount && mounted) {
                    failedPings.incrementAndGet();
                    lastPingFailure = "the master answered " + id + " with re-mount: it dropped the node";
                } else {
                    pings.incrementAndGet();
                }
            } else {
                failedPings.incrementAndGet();
                lastPingFailure = error.getMessage();
            }
        });
    }

    long pings() {
        return pings.get();
    }

    long failedPings() {
        return failedPings.get();
    }

    String lastPingFailure() {
        return lastPingFailure;
    }

    int nodeCount() {
        return connections.size();
    }

    /**
     * Node {@code i} leaves as a node stopping gracefully does: it unmounts its segments one after another (the
     * master erases the objects that lived only there), not pinging meanwhile. Returns the wall time of each unmount
     * call (ns), in order.
     */
    long[] leave(int i) {
        List<String> names = segmentsOf.get(i);
        long[] took = new long[names.size()];
        left.set(i, 1); // its pings stop (the master forgets a node whose last segment went)
        for (int k = 0; k < names.size(); k++) {
            long t0 = System.nanoTime();
            connections.get(i).callSync(Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                    .setNodeId(nodeId(i)).setSegmentName(names.get(k)).build(), Empty.parser());
            took[k] = System.nanoTime() - t0;
        }
        names.clear();
        return took;
    }

    /**
     * Unmounts every segment when {@code unmount} (erasing the objects on them), stops pinging, closes. The nodes
     * ping until their segments are gone, as a node stopping gracefully does: a slow unmount must not expire them.
     */
    void close(boolean unmount) {
        try {
            if (unmount) {
                for (int i = 0; i < connections.size(); i++) {
                    for (String name : segmentsOf.get(i)) {
                        connections.get(i).callSync(Opcode.UNMOUNT_SEGMENT, UnmountSegmentRequest.newBuilder()
                                .setNodeId(nodeId(i)).setSegmentName(name).build(), Empty.parser());
                    }
                }
            }
        } finally {
            pinger.shutdownNow();
            connections.forEach(TransportClient::close);
            connections.clear();
        }
    }

    @Override
    public void close() {
        close(false);
    }
}
