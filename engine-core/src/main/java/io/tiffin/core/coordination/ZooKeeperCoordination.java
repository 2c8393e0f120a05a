package io.tiffin.core.coordination;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Leader election and the cluster facts on ZooKeeper, through Apache Curator: the masters of a cluster join a
 * {@link LeaderLatch} at {@code <root>/leader} (its ephemeral, sequential znodes name the candidates; the lowest
 * leads), and the leader keeps the facts in {@code <root>/state}, written with the znode's version as
 * compare-and-set. A master whose session is suspended (it lost its connection) or expired is told at once that it
 * may no longer lead ({@link LeaderElection.Listener#lost}), before the coordination service has chosen another:
 * it stops accepting writes, and its successor's first write of the facts fences it for good.
 *
 * <p>The elected master's leader lease ({@link #leaseDeadlineNanos}) is renewed by a round trip to the ensemble every
 * fifth of the negotiated session timeout, and lasts four fifths of it from the moment each renewal was sent: the
 * ensemble heard from this session no earlier than that, so it cannot end the session (and elect another) sooner than
 * a whole timeout after. A renewal counts only in the session this master was elected in.
 *
 * <p>Address: {@code zk://host:port[,host:port...][/root]} (root {@code /tiffin} by default).
 *
 * <p>Thread-safe. Owns its Curator client, latch and lease-renewal thread; {@link #close()} leaves the election, stops
 * the renewals and closes the session.
 */
public final class ZooKeeperCoordination implements LeaderElection {
    private static final Logger LOG = LogManager.getLogger(ZooKeeperCoordination.class);

    private final CuratorFramework curator;
    private final String root;
    private final ZooKeeperStateStore store;
    private volatile LeaderLatch latch;
    /** The session this master was elected in (0: not elected); guarded by {@code this} for writes. */
    private volatile long electedSession;
    /** The lease's deadline ({@link System#nanoTime()}; {@link Long#MIN_VALUE}: none); guarded by {@code this} for writes. */
    private volatile long leaseDeadline = Long.MIN_VALUE;
    private volatile ScheduledExecutorService leaseRenewal;
    private final int requestedTimeoutMillis;

    /**
     * Connects to the ensemble named by {@code url}; the session expires {@code sessionTimeout} after the connection
     * is lost (the server may raise it to its minimum, twice its tick time).
     *
     * @throws IllegalArgumentException for a malformed address
     * @throws IllegalStateException when no server answers within {@code connectTimeout}
     */
    public ZooKeeperCoordination(String url, Duration sessionTimeout, Duration connectTimeout) {
        String[] parts = parse(url);
        this.root = parts[1];
        this.requestedTimeoutMillis = (int) sessionTimeout.toMillis();
        this.curator = CuratorFrameworkFactory.builder().connectString(parts[0])
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) Math.min(sessionTimeout.toMillis(), connectTimeout.toMillis()))
                .retryPolicy(new ExponentialBackoffRetry(100, 5, 1000)).build();
        curator.start();
        try {
            if (!curator.blockUntilConnected((int) connectTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                curator.close();
                throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS,
                        "master.coordinator: no ZooKeeper server answered at " + parts[0] + " within " + connectTimeout
                        + "; check the address and that the coordinator runs (tiffin coordinator, or ZooKeeper)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            curator.close();
            throw new IllegalStateException("interrupted while connecting to " + parts[0], e);
        }
        this.store = new ZooKeeperStateStore(curator, root + "/state");
    }

    /** {connect string, root} of {@code zk://hosts[/root]}. */
    static String[] parse(String url) {
        if (!url.startsWith("zk://") || url.length() <= 5) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "master.coordinator = " + url
                    + " (expected: zk://host:port[,host:port...][/root])");
        }
        String rest = url.substring(5);
        int slash = rest.indexOf('/');
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        String root = slash < 0 || slash == rest.length() - 1 ? "/tiffin" : rest.substring(slash);
        if (hosts.isEmpty()) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "master.coordinator = " + url
                    + " names no server (expected: zk://host:port[,host:port...][/root])");
        }
        return new String[] {hosts, root.endsWith("/") ? root.substring(0, root.length() - 1) : root};
    }

    @Override
    public void start(String candidate, Listener listener) {
        LeaderLatch l = new LeaderLatch(curator, root + "/leader", candidate, LeaderLatch.CloseMode.NOTIFY_LEADER);
        l.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                elected(sessionId());
                try {
                    leaseRenewal.execute(ZooKeeperCoordination.this::renewLease);
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                    return;
                }
                listener.elected();
            }

            @Override
            public void notLeader() {
                elected(0);
                listener.lost("the coordination service no longer names this master leader");
            }
        });
        curator.getConnectionStateListenable().addListener((client, state) -> {
            // one line per change: ZooKeeper's own client, quieted in log4j2.xml, logged a stack trace per retry
            if (state.isConnected()) {
                LOG.info("Coordination service at {}: {}", client.getZookeeperClient().getCurrentConnectionString(),
                        state.name().toLowerCase(java.util.Locale.ROOT));
            } else {
                LOG.warn("Coordination service at {}: {} (retrying)", client.getZookeeperClient()
                        .getCurrentConnectionString(), state.name().toLowerCase(java.util.Locale.ROOT));
            }
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                listener.lost("the session with the coordination service is " + state.name().toLowerCase(
                        java.util.Locale.ROOT));
            }
        });
        latch = l;
        ScheduledExecutorService renewal = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tiffin-leader-lease");
            t.setDaemon(true);
            return t;
        });
        leaseRenewal = renewal;
        int granted = sessionTimeoutMillis();
        long every = Math.max(50, (granted > 0 ? granted : requestedTimeoutMillis) / 5);
        renewal.scheduleWithFixedDelay(() -> {
            if (electedSession != 0) {
                renewLease();
            }
        }, every, every, TimeUnit.MILLISECONDS);
        try {
            l.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot join the election at " + root + "/leader: " + e, e);
        }
    }

    @Override
    public String leader() {
        LeaderLatch l = latch;
        try {
            if (l != null) {
                return l.getLeader().getId();
            }
            return "";
        } catch (Exception e) {
            return "";
        }
    }

    @Override
    public long leaseDeadlineNanos() {
        return leaseDeadline;
    }

    @Override
    public boolean renewLease() {
        long elected = electedSession;
        if (elected == 0) {
            return false;
        }
        try {
            long sent = System.nanoTime();
            int timeoutMillis = sessionTimeoutMillis();
            if (timeoutMillis <= 0 || sessionId() != elected) {
                return false;
            }
            curator.checkExists().forPath(root + "/leader");
            if (sessionId() != elected) {
                return false; // answered in a new session: the old one, which was elected, may be gone
            }
            extend(elected, sent + TimeUnit.MILLISECONDS.toNanos(timeoutMillis) * 4 / 5);
            return true;
        } catch (Exception e) {
            LOG.debug("Renewing the leader lease: {}", e.toString());
            return false;
        }
    }

    private synchronized void elected(long session) {
        electedSession = session;
        leaseDeadline = Long.MIN_VALUE;
    }

    private synchronized void extend(long session, long deadline) {
        if (electedSession == session && (leaseDeadline == Long.MIN_VALUE || deadline - leaseDeadline > 0)) {
            leaseDeadline = deadline;
        }
    }

    /** The current session's id (0 when there is none). */
    private long sessionId() {
        try {
            return curator.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** The session timeout the ensemble granted (0 when not connected). */
    private int sessionTimeoutMillis() {
        try {
            return curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception e) {
            return 0;
        }
    }

    @Override
    public StateStore stateStore() {
        return store;
    }

    @Override
    public void close() {
        ScheduledExecutorService renewal = leaseRenewal;
        if (renewal != null) {
            renewal.shutdownNow();
        }
        elected(0);
        LeaderLatch l = latch;
        if (l != null) {
            try {
                l.close();
            } catch (Exception e) {
                LOG.debug("leaving the election: {}", e.toString());
            }
        }
        curator.close();
    }

    /**
     * The facts in one znode, compare-and-set on its version.
     *
     * <p>Thread-safe (Curator's client is).
     */
    static final class ZooKeeperStateStore implements StateStore {
        private final CuratorFramework curator;
        private final String path;

        ZooKeeperStateStore(CuratorFramework curator, String path) {
            this.curator = curator;
            this.path = path;
        }

        @Override
        public Snapshot read() {
            try {
                Stat stat = new Stat();
                byte[] data = curator.getData().storingStatIn(stat).forPath(path);
                return new Snapshot(data == null ? new byte[0] : data, stat.getVersion());
            } catch (KeeperException.NoNodeException e) {
                return new Snapshot(new byte[0], -1);
            } catch (Exception e) {
                throw new IllegalStateException("cannot read " + path + ": " + e, e);
            }
        }

        @Override
        public long write(byte[] data, long expectedVersion) {
            try {
                if (expectedVersion < 0) {
                    curator.create().creatingParentsIfNeeded().forPath(path, data);
                    return 0;
                }
                return curator.setData().withVersion((int) expectedVersion).forPath(path, data).getVersion();
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException e) {
                throw new StateConflictException("another master wrote " + path + " meanwhile");
            } catch (Exception e) {
                throw new IllegalStateException("cannot write " + path + ": " + e, e);
            }
        }

        @Override
        public void close() {
            // the coordination's client is closed with it
        }
    }
}
