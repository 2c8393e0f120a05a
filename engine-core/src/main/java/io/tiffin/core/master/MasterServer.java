package io.tiffin.core.master;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.metrics.AdminHttpServer;
import io.tiffin.core.transport.EventLoops;
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
 * loops (eviction paced by {@link EvictionPacer}, node liveness every
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
    private final Leadership leadership;
    private final FailoverSettings failover;
    /** With failover on: the election (null for a single master with a state directory, or without failover). */
    private final io.tiffin.core.coordination.LeaderElection election;
    private final io.tiffin.core.coordination.StateStore stateStore;
    private final ClusterFacts facts;
    private final NodeForgets forgets;
    private final io.tiffin.core.transport.TransportClientPool nodeConnections;
    private final OpRates opRates;

    private MasterServer(Options options, FailoverSettings failover, Ticker ticker) {
        this.failover = failover;
        service = new MasterService(options.settings(), options.strategy(), ticker, null);
        ClientReports clientReports = new ClientReports(ticker, 60_000);
        metrics = new MasterMetrics(service, clientReports);
        if (failover.enabled()) {
            leadership = Leadership.standby();
            election = failover.coordinator().isEmpty() ? null : new io.tiffin.core.coordination.ZooKeeperCoordination(
                    failover.coordinator(), failover.sessionTimeout(), java.time.Duration.ofSeconds(15));
            if (election != null) {
                leadership.leaseFrom(election::leaseDeadlineNanos);
            }
            stateStore = election != null ? election.stateStore()
                    : new io.tiffin.core.coordination.FileStateStore(failover.stateDir());
            facts = new ClusterFacts(stateStore, () -> deposed("a successor wrote the cluster facts", false));
            // FORGET is a master's instruction to a node: the master presents the admin role (it knows every
            // role's token, since it checks them). FORGETs must not wait long for a node that hangs: short connect and call deadlines
            nodeConnections = new io.tiffin.core.transport.TransportClientPool("master-forgets", options.transport()
                    .withHandshakeTimeout(java.time.Duration.ofSeconds(1)).withRpcTimeout(java.time.Duration.ofSeconds(2))
                    .withIoThreads(1).presentingAs(io.tiffin.core.transport.Role.ADMIN), "master", ticker);
            forgets = new NodeForgets(nodeConnections, service::term, facts::recordLostDeletions,
                    service.counters().failedDiskDeletes::add, service.counters().failedDiskStamps::add);
            // a node follows a newer term: deposed now (the coordinator's word may come later, as after a pause)
            forgets.whenANodeFollowsANewerTerm(() -> deposed("a node follows a newer master term", false));
            service.enableFailover(facts, forgets);
        } else {
            leadership = Leadership.alwaysLeader();
            election = null;
            stateStore = null;
            facts = null;
            forgets = null;
            nodeConnections = null;
        }
        rpc = new MasterRpcService(service, metrics, clientReports, leadership);
        opRates = new OpRates(metrics, service.counters(), ticker);
        MasterStatus status = new MasterStatus(service, clientReports, leadership, opRates,
                io.tiffin.core.metrics.RecentErrors.installed(), this::self, failover.enabled());
        int threads = options.workerThreads() > 0 ? options.workerThreads() : Runtime.getRuntime().availableProcessors();
        workers = Executors.newFixedThreadPool(threads, named("tiffin-master-worker"));
        background = Executors.newSingleThreadScheduledExecutor(named("tiffin-master-background"));
        heldReplies = Executors.newSingleThreadScheduledExecutor(named("tiffin-master-held-replies"));
        // The master's own default (one loop per processor), not the clients' (half).
        server = new TransportServer("master", options.transport().ioThreads() == 0
                ? options.transport().withIoThreads(EventLoops.masterThreads()) : options.transport());
        rpc.registerOn(server, workers, heldReplies);
        if (server.tls() != null) {
            metrics.registerTls(server.tls());
        }
        if (options.transport().credentials().tokensFile() != null) {
            metrics.registerTokens(options.transport().credentials().tokensFile());
        }
        AdminHttpServer adminServer = null;
        try {
            server.start(options.host(), options.port());
            if (options.adminPort() >= 0) {
                try {
                    adminServer = new AdminHttpServer(options.host(), options.adminPort(), options.transport(),
                            metrics::scrape, this::healthJson, status::json,
                            MooncakeAdminEndpoints.of(service, leadership));
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
            if (forgets != null) {
                forgets.close();
                nodeConnections.close();
            }
            if (election != null) {
                election.close();
            } else if (stateStore != null) {
                stateStore.close();
            }
            throw e;
        }
        admin = adminServer;
        MasterSettings s = options.settings();
        // what changes objects or nodes on a timer runs only while this master leads (and holds its leader lease):
        // a leader woken from a pause must not evict, expire or release before it knows it still leads
        EvictionPacer eviction = new EvictionPacer(background, guard("eviction", whileLeading(service::runEvictionOnce)),
                service::evictionPressed, s.evictionInterval());
        service.onAllocationFailure(eviction::wake);
        eviction.start();
        background.scheduleWithFixedDelay(guard("node liveness",
                        new LivenessCheck(service, s.nodeCheckInterval().toMillis(), leadership::leads,
                                () -> leadership.role() == Leadership.Role.LEADER && !leadership.leads())),
                s.nodeCheckInterval().toMillis(), s.nodeCheckInterval().toMillis(), TimeUnit.MILLISECONDS);
        background.scheduleWithFixedDelay(guard("status rates", opRates::sample), 0, 1000, TimeUnit.MILLISECONDS);
        // expired objects no client asks for: their space back within a second of their deadline
        background.scheduleWithFixedDelay(guard("expiry", whileLeading(service::expireObjects)), 1000, 1000,
                TimeUnit.MILLISECONDS);
        // the sweep looks only at puts and tasks that are due (the shards' put lists, PutDeadlines): cheap enough to
        // run every second
        long releaseCheck = Math.max(100, Math.min(s.putTimeout().toMillis() / 10, 1000));
        background.scheduleWithFixedDelay(guard("stuck-put release", whileLeading(service::releaseStuckPuts)),
                releaseCheck, releaseCheck, TimeUnit.MILLISECONDS);
        if (failover.enabled()) {
            background.scheduleWithFixedDelay(guard("id reservation and recovery", () -> {
                if (leadership.leads()) {
                    service.reserveIds();
                }
            }), 100, 100, TimeUnit.MILLISECONDS);
        }
    }

    /** The {@code host:port} this master is known by: the configured advertised address, else the bound one. */
    private String self() {
        if (!failover.advertiseAddress().isEmpty()) {
            return failover.advertiseAddress();
        }
        InetSocketAddress a = server.localAddress();
        String host = a.getAddress() != null && a.getAddress().isAnyLocalAddress() ? "127.0.0.1" : a.getHostString();
        return host + ":" + a.getPort();
    }

    /** Joins the election, or (a single master with a state directory) takes over at once. */
    private void startFailover() {
        if (election == null) {
            takeOver();
            return;
        }
        election.start(self(), new io.tiffin.core.coordination.LeaderElection.Listener() {
            @Override
            public void elected() {
                background.execute(MasterServer.this::takeOver);
            }

            @Override
            public void lost(String why) {
                if (leadership.role() == Leadership.Role.LEADER) { // also with its lease lapsed (after a pause)
                    deposed(why, false);
                } else {
                    leadership.leaderHint(election.leader());
                }
            }
        });
        leadership.leaderHint(election.leader());
    }

    /**
     * Becomes the leader: the next term in the cluster facts (which fences the predecessor), the predecessor's
     * segments restored to await their nodes, and a recovery of at most the node TTL (or the longest location-cache window, if longer).
     */
    private void takeOver() {
        if (closed.get() || leadership.role() != Leadership.Role.STANDBY) {
            return;
        }
        try {
            long[] ids = service.idsSoFar();
            io.tiffin.core.transport.proto.ClusterStateMsg previous = facts.claim(self(), ids[0], ids[1]);
            // every live node attaches within about a heartbeat; one that has not within the node TTL is dead (or
            // cut off: it re-mounts empty later), and no location cached from the predecessor outlives this
            long window = Math.max(RestartGuard.longestCacheWindowMillis(service.settings().leaseTtl().toMillis()),
                    service.settings().nodeTtl().toMillis());
            service.restore(previous, window);
            if (election != null && !election.renewLease()) {
                LOG.warn("Tiffin master {}: the leader lease could not be confirmed at takeover; it serves once it is",
                        self());
            }
            leadership.leaderHint(self());
            leadership.lead();
            LOG.info("Tiffin master {} leads in term {}; {} segments of the previous term await their nodes",
                    self(), facts.term(), previous.getSegmentsCount());
        } catch (RuntimeException e) {
            LOG.error("Taking over failed: {}", e.toString(), e);
            // the process ends too (a corrupt master.state-dir file): serving nothing while it looked alive helped nobody
            deposed("taking over failed: " + e.getMessage(), true);
        }
    }

    /**
     * Stops leading for good; with {@code exitWhenDeposed}, ends the process (exit code 75) so it restarts as a clean
     * standby: a leader's always, a standby's when {@code exitAnyway} (its takeover failed).
     */
    private void deposed(String why, boolean exitAnyway) {
        boolean wasLeader = leadership.role() == Leadership.Role.LEADER;
        leadership.depose();
        LOG.error("Tiffin master {} stops serving: {}", server.localAddress(), why);
        if ((wasLeader || exitAnyway) && failover.exitWhenDeposed() && !closed.get()) {
            org.apache.logging.log4j.LogManager.shutdown();
            Runtime.getRuntime().halt(75);
        }
    }

    /** This master's role (leader, standby, deposed, closing). */
    public Leadership.Role role() {
        return leadership.role();
    }

    /** The term this master leads in (0 without failover or before it first leads). */
    public long term() {
        return service.term();
    }

    /** Starts a master; throws {@link TiffinException} if a port cannot be bound. */
    public static MasterServer start(Options options) {
        return start(options, Ticker.SYSTEM);
    }

    public static MasterServer start(Options options, Ticker ticker) {
        return start(options, FailoverSettings.none(), ticker);
    }

    /** Starts a master with {@code failover}; with a coordinator it serves once elected. */
    public static MasterServer start(Options options, FailoverSettings failover, Ticker ticker) {
        MasterServer m = new MasterServer(options, failover, ticker);
        if (failover.enabled()) {
            try {
                m.startFailover();
            } catch (RuntimeException e) {
                m.close();
                throw e;
            }
        }
        InProcessMasters.register(m.inProcessAddresses(), m.rpc);
        LOG.info("Tiffin master listening on {} (admin HTTP {})", m.address(),
                m.admin == null ? "off" : m.admin.address());
        return m;
    }

    /** {@code task}, skipped while this master does not lead (always run without failover). */
    private Runnable whileLeading(Runnable task) {
        return () -> {
            if (leadership.leads()) {
                task.run();
            }
        };
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
        return "{\"status\":\"ok\",\"role\":\"master\",\"leadership\":\"" + leadership.role().name()
                .toLowerCase(java.util.Locale.ROOT) + "\",\"serving\":" + leadership.leads() // false: lease lapsed too
                + ",\"term\":" + service.term() + ",\"version\":\"" + io.tiffin.core.transport.TiffinVersion.VERSION
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

    /** The RPC server's event-loop threads. */
    public int ioThreads() {
        return server.ioThreads();
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
        // before the held replies fail: no request served after them may acknowledge what they waited for
        leadership.close();
        InProcessMasters.unregister(inProcessAddresses(), rpc);
        background.shutdownNow();
        heldReplies.shutdownNow();
        rpc.failHeldReplies(); // before the connections close: their callers learn the operation took effect
        if (admin != null) {
            admin.close();
        }
        server.close();
        workers.shutdownNow();
        if (forgets != null) {
            forgets.close();
            nodeConnections.close();
        }
        if (election != null) {
            election.close();
        } else if (stateStore != null) {
            stateStore.close();
        }
    }
}
