package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.metrics.AdminHttpServer;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A running master: the {@link MasterService}, its RPC server, its admin HTTP server and the background
 * loops (eviction every {@code master.eviction-interval}, node liveness every
 * {@code master.node-check-interval}, stuck-put release).
 *
 * <p>Thread-safe. Owns every thread and socket it starts; {@link #close()} stops them all and is
 * idempotent.
 */
public final class MasterServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(MasterServer.class);

    /**
     * How to run a master.
     *
     * <p>Thread-safe (immutable; the strategy must be thread-safe, as {@link AllocationStrategy} requires).
     *
     * @param host address to bind
     * @param port RPC port (0 = any free port)
     * @param adminPort admin HTTP port (0 = any free port, -1 = no admin server)
     * @param workerThreads threads running RPC handlers (0 = number of cores)
     */
    public record Options(String host, int port, int adminPort, int workerThreads, MasterSettings settings,
                          TransportSettings transport, AllocationStrategy strategy) {
    }

    private final MasterService service;
    private final MasterMetrics metrics;
    private final MasterRpcService rpc;
    private final TransportServer server;
    private final ExecutorService workers;
    private final ScheduledExecutorService background;
    /** Sends held replies (see {@link MasterRpcService}); apart from {@link #background} so a long eviction pass does not delay them. */
    private final ScheduledExecutorService heldReplies;
    private final AdminHttpServer admin;
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private MasterServer(Options options, Ticker ticker) {
        service = new MasterService(options.settings(), options.strategy(), ticker, null);
        ClientReports clientReports = new ClientReports(ticker, 60_000);
        metrics = new MasterMetrics(service, clientReports);
        rpc = new MasterRpcService(service, metrics, clientReports);
        int threads = options.workerThreads() > 0 ? options.workerThreads() : Runtime.getRuntime().availableProcessors();
        workers = Executors.newFixedThreadPool(threads, named("tiffin-master-worker"));
        background = Executors.newSingleThreadScheduledExecutor(named("tiffin-master-background"));
        heldReplies = Executors.newSingleThreadScheduledExecutor(named("tiffin-master-held-replies"));
        server = new TransportServer("master", options.transport());
        rpc.registerOn(server, workers, heldReplies);
        AdminHttpServer adminServer = null;
        try {
            server.start(options.host(), options.port());
            if (options.adminPort() >= 0) {
                try {
                    adminServer = new AdminHttpServer(options.host(), options.adminPort(), options.transport(),
                            metrics::scrape, this::healthJson);
                } catch (IOException e) {
                    throw new TiffinException(ErrorCode.INVALID_PARAMS, "master.admin-port = " + options.adminPort()
                            + ": cannot listen on " + options.host() + ":" + options.adminPort() + " (" + e.getMessage()
                            + "); choose a free port", e);
                }
            }
        } catch (RuntimeException e) {
            server.close();
            workers.shutdownNow();
            background.shutdownNow();
            heldReplies.shutdownNow();
            throw e;
        }
        admin = adminServer;
        MasterSettings s = options.settings();
        background.scheduleWithFixedDelay(guard("eviction", service::runEvictionOnce),
                s.evictionInterval().toMillis(), s.evictionInterval().toMillis(), TimeUnit.MILLISECONDS);
        background.scheduleWithFixedDelay(guard("node liveness", service::expireNodes),
                s.nodeCheckInterval().toMillis(), s.nodeCheckInterval().toMillis(), TimeUnit.MILLISECONDS);
        long releaseCheck = Math.max(1000, Math.min(s.putStartReleaseTimeout().toMillis() / 10, 60_000));
        background.scheduleWithFixedDelay(guard("stuck-put release", service::releaseStuckPuts),
                releaseCheck, releaseCheck, TimeUnit.MILLISECONDS);
    }

    /** Starts a master; throws {@link TiffinException} if a port cannot be bound. */
    public static MasterServer start(Options options) {
        return start(options, Ticker.SYSTEM);
    }

    public static MasterServer start(Options options, Ticker ticker) {
        MasterServer m = new MasterServer(options, ticker);
        InProcessMasters.register(m.inProcessAddresses(), m.rpc);
        LOG.info("Tiffin master listening on {} (admin HTTP {})", m.address(),
                m.admin == null ? "off" : m.admin.address());
        return m;
    }

    private static Runnable guard(String what, Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("Master background task '{}' failed; it will run again", what, e);
            }
        };
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private String healthJson() {
        return "{\"status\":\"ok\",\"role\":\"master\",\"version\":\"" + io.tiffin.core.transport.TiffinVersion.VERSION
                + "\",\"segments\":" + service.segmentViews().size() + ",\"live_nodes\":" + service.liveNodes().size()
                + ",\"keys\":" + service.keyCount() + ",\"capacity_bytes\":" + service.capacityBytes()
                + ",\"used_bytes\":" + service.usedBytes() + "}";
    }

    public MasterService service() {
        return service;
    }

    public MasterMetrics metrics() {
        return metrics;
    }

    public InetSocketAddress address() {
        return server.localAddress();
    }

    /**
     * The {@code host:port} forms clients may use for this master: the bound address, and for a
     * loopback or wildcard bind also {@code 127.0.0.1} and {@code localhost}.
     */
    private List<String> inProcessAddresses() {
        InetSocketAddress a = server.localAddress();
        List<String> out = new ArrayList<>();
        out.add(a.getHostString() + ":" + a.getPort());
        if (a.getAddress() != null && (a.getAddress().isLoopbackAddress() || a.getAddress().isAnyLocalAddress())) {
            out.add("127.0.0.1:" + a.getPort());
            out.add("localhost:" + a.getPort());
        }
        return out;
    }

    /** Admin HTTP address, or null when disabled. */
    public InetSocketAddress adminAddress() {
        return admin == null ? null : admin.address();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        InProcessMasters.unregister(inProcessAddresses(), rpc);
        background.shutdownNow();
        heldReplies.shutdownNow();
        rpc.failHeldReplies(); // before the connections close: their callers learn the operation took effect
        if (admin != null) {
            admin.close();
        }
        server.close();
        workers.shutdownNow();
    }
}
