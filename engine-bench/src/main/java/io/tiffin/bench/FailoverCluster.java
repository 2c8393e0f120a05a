package io.tiffin.bench;

import io.tiffin.core.coordination.EmbeddedZooKeeper;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.ServiceReadyReply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A cluster of real processes for failover runs: masters electing their leader through a coordination service
 * (ZooKeeper: an embedded server in this JVM unless an address is given), and nodes that know every master. Finds
 * the leader by asking each master ({@code SERVICE_READY}), kills, pauses and restarts masters and nodes. Like the
 * supervisor a deployment runs masters under, it restarts a master that ended itself with exit code 75 (a leader
 * that lost its coordinator session: on a loaded machine, a pause longer than the session), as a standby.
 *
 * <p>Not thread-safe: one thread drives it; the master slots are guarded by this object's monitor, as the
 * supervising thread restarts masters too (the processes themselves are independent).
 */
final class FailoverCluster implements AutoCloseable {
    /**
     * How the processes run.
     *
     * <p>Thread-safe (immutable).
     *
     * @param masterOptions {@code -D key=value} settings of every master (e.g. lease, node TTL)
     * @param nodeOptions the same for every node
     * @param jvmOptions JVM flags when the processes do not run from the distribution's launcher
     * @param segmentSize each node's segment, e.g. 64MiB
     */
    record Settings(List<String> masterOptions, List<String> nodeOptions, List<String> jvmOptions, String segmentSize,
                    Duration sessionTimeout) {
    }

    private final Path dir;
    private final Settings settings;
    private final EmbeddedZooKeeper zookeeper;
    private final String coordinator;
    private final int[] masterPorts;
    private final TiffinProcess[] masters;
    private final TiffinProcess[] nodes;
    private final String[] segments;
    private final int[] nodeRuns;
    /** Per master, the coordinator address it is given (null = {@link #coordinator}); tests put proxies there. */
    private final String[] masterCoordinators;
    private final io.netty.channel.EventLoopGroup group = EventLoops.newGroup("failover-probe", 1, true);
    private final ExecutorService probes = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "failover-probe");
        t.setDaemon(true);
        return t;
    });
    private final java.util.concurrent.ScheduledExecutorService supervisor =
            Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "failover-supervisor");
                t.setDaemon(true);
                return t;
            });
    private final java.util.concurrent.atomic.AtomicInteger deposedRestarts =
            new java.util.concurrent.atomic.AtomicInteger();

    /** @param coordinatorUrl {@code zk://...} of a running ensemble, or null to start one here */
    FailoverCluster(Path dir, String coordinatorUrl, int masterCount, int nodeCount, Settings settings) {
        this.dir = dir;
        this.settings = settings;
        if (coordinatorUrl == null) {
            zookeeper = new EmbeddedZooKeeper("127.0.0.1", 0, dir.resolve("zookeeper"));
            coordinator = zookeeper.url("/tiffin-" + Long.toHexString(System.nanoTime()));
        } else {
            zookeeper = null;
            coordinator = coordinatorUrl;
        }
        masterPorts = new int[masterCount];
        for (int i = 0; i < masterCount; i++) {
            masterPorts[i] = freePort();
        }
        masters = new TiffinProcess[masterCount];
        nodes = new TiffinProcess[nodeCount];
        segments = new String[nodeCount];
        nodeRuns = new int[nodeCount];
        masterCoordinators = new String[masterCount];
        supervisor.scheduleWithFixedDelay(this::restartDeposed, 250, 250, TimeUnit.MILLISECONDS);
    }

    /** Restarts the masters that ended themselves after losing their leadership (exit code 75). */
    private synchronized void restartDeposed() {
        for (int i = 0; i < masters.length; i++) {
            if (masters[i] != null && masters[i].exitCode() == 75) {
                System.out.println("master" + i + " lost its coordinator session and exited (75): restarted as a"
                        + " standby");
                deposedRestarts.incrementAndGet();
                startMaster(i);
            }
        }
    }

    /** How many times a master that exited with code 75 was restarted. */
    int deposedRestarts() {
        return deposedRestarts.get();
    }

    /** Gives master {@code i} another address of the coordination service (a proxy); before it starts. */
    void coordinatorOf(int i, String url) {
        masterCoordinators[i] = url;
    }

    /** The embedded coordination server's port, or -1 with an external one. */
    int coordinatorPort() {
        return zookeeper == null ? -1 : zookeeper.port();
    }

    String coordinator() {
        return coordinator;
    }

    /** Every master, {@code host:port,host:port,...}: what nodes and clients are given. */
    String masterList() {
        List<String> out = new ArrayList<>();
        for (int p : masterPorts) {
            out.add("127.0.0.1:" + p);
        }
        return String.join(",", out);
    }

    String masterAddress(int i) {
        return "127.0.0.1:" + masterPorts[i];
    }

    int masterCount() {
        return masters.length;
    }

    int nodeCount() {
        return nodes.length;
    }

    synchronized TiffinProcess master(int i) {
        return masters[i];
    }

    TiffinProcess node(int j) {
        return nodes[j];
    }

    /** The segment the node's current process serves. */
    String segmentOf(int j) {
        return segments[j];
    }

    /** Starts every master and node (masters first) and waits until a leader serves and every node runs. */
    void start(Duration timeout) {
        for (int i = 0; i < masters.length; i++) {
            startMaster(i);
        }
        for (int i = 0; i < masters.length; i++) {
            master(i).awaitLine("Tiffin master listening", timeout);
        }
        awaitLeader(-1, timeout);
        for (int j = 0; j < nodes.length; j++) {
            startNode(j);
        }
        for (int j = 0; j < nodes.length; j++) {
            awaitNode(j, timeout);
        }
    }

    /** (Re)starts master {@code i} (a restarted master joins as a standby). */
    synchronized void startMaster(int i) {
        List<String> args = new ArrayList<>(List.of("master", "--host", "127.0.0.1", "--port",
                Integer.toString(masterPorts[i]), "--admin-port", "0", "--coordinator",
                masterCoordinators[i] == null ? coordinator : masterCoordinators[i],
                "-D", "master.coordinator-session-timeout=" + settings.sessionTimeout().toMillis() + "ms"));
        for (String o : settings.masterOptions()) {
            args.add("-D");
            args.add(o);
        }
        masters[i] = TiffinProcess.start("master" + i, dir, args, settings.jvmOptions());
    }

    /** (Re)starts node {@code j} under its node.id (a new process: a new incarnation and segment). */
    void startNode(int j) {
        List<String> args = new ArrayList<>(List.of("node", "--master", masterList(), "--host", "127.0.0.1",
                "--segment-size", settings.segmentSize(), "-D", "node.id=node" + j));
        for (String o : settings.nodeOptions()) {
            args.add("-D");
            args.add(o);
        }
        nodeRuns[j]++;
        nodes[j] = TiffinProcess.start("node" + j + "-run" + nodeRuns[j], dir, args, settings.jvmOptions());
        segments[j] = null;
    }

    /** Waits until node {@code j} runs and records its segment. */
    void awaitNode(int j, Duration timeout) {
        String line = nodes[j].awaitLine("Tiffin node node" + j + " segment ", timeout);
        segments[j] = line.split(" ")[4];
    }

    /** Kills master {@code i} with SIGKILL. */
    synchronized void killMaster(int i) {
        masters[i].kill9();
    }

    /** Kills node {@code j} with SIGKILL; returns the segment that died with it. */
    String killNode(int j) {
        nodes[j].kill9();
        return segments[j];
    }

    /** What a master says about itself, or null if it does not answer within 500 ms. */
    record MasterState(boolean leader, long term) {
    }

    /** Asks every master, in parallel; an entry is null for a master that does not answer. */
    MasterState[] states() {
        List<CompletableFuture<MasterState>> asks = new ArrayList<>();
        for (int i = 0; i < masters.length; i++) {
            int port = masterPorts[i];
            asks.add(CompletableFuture.supplyAsync(() -> {
                try (TransportClient c = TransportClient.connect("127.0.0.1", port, TransportSettings.defaults()
                        .withHandshakeTimeout(Duration.ofMillis(400)).withRpcTimeout(Duration.ofMillis(400)),
                        "failover-probe", group)) {
                    ServiceReadyReply r = c.callSync(Opcode.SERVICE_READY, Empty.getDefaultInstance(),
                            ServiceReadyReply.parser());
                    return new MasterState(r.getLeader(), r.getTerm());
                } catch (RuntimeException e) {
                    return null;
                }
            }, probes));
        }
        MasterState[] out = new MasterState[masters.length];
        for (int i = 0; i < out.length; i++) {
            try {
                out[i] = asks.get(i).get(600, TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                out[i] = null;
            }
        }
        return out;
    }

    /** The index of the master that leads in the highest term, or -1. */
    int leader() {
        MasterState[] s = states();
        int best = -1;
        for (int i = 0; i < s.length; i++) {
            if (s[i] != null && s[i].leader() && (best < 0 || s[i].term() > s[best].term())) {
                best = i;
            }
        }
        return best;
    }

    /** The term of the master that leads now, or -1. */
    long leaderTerm() {
        MasterState[] s = states();
        long best = -1;
        for (MasterState m : s) {
            if (m != null && m.leader()) {
                best = Math.max(best, m.term());
            }
        }
        return best;
    }

    /** Waits until a master leads in a term above {@code afterTerm}; returns its index. */
    int awaitLeader(long afterTerm, Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (true) {
            MasterState[] s = states();
            for (int i = 0; i < s.length; i++) {
                if (s[i] != null && s[i].leader() && s[i].term() > afterTerm) {
                    return i;
                }
            }
            if (System.nanoTime() - end > 0) {
                StringBuilder why = new StringBuilder("no master leads in a term above " + afterTerm + " after "
                        + timeout + "; their states " + java.util.Arrays.toString(s));
                for (int i = 0; i < masters.length; i++) {
                    TiffinProcess m = master(i);
                    why.append("\n--- ").append(m).append(" alive=").append(m.alive()).append(":\n").append(m.tail());
                }
                throw new IllegalStateException(why.toString());
            }
            try {
                Thread.sleep(20); // polls the masters
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /**
     * A port free now, below the kernel's ephemeral range: a master's port is fixed for the whole run (nodes and
     * clients are given it, a killed master comes back on it), and a port of the ephemeral range could meanwhile
     * be handed to some process's outgoing connection or port-0 server.
     */
    static int freePort() {
        int below = 32768;
        try {
            // readAllLines, not readString: a /proc file reports size 0 and readString returned one byte of it
            String[] range = java.nio.file.Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0).trim().split("\\s+");
            below = Integer.parseInt(range[0]);
        } catch (IOException | RuntimeException e) {
            // not Linux, or unreadable: the usual range's start
        }
        java.util.SplittableRandom random = new java.util.SplittableRandom();
        if (below < 2048) {
            below = 32768; // an odd range: keep clear of the usual one
        }
        int from = Math.min(10_000, below / 2);
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = from + random.nextInt(Math.max(1, below - from));
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException e) {
                // taken: try another
            }
        }
        throw new IllegalStateException("no free port found below " + below);
    }

    @Override
    public void close() {
        supervisor.shutdownNow();
        try {
            supervisor.awaitTermination(5, TimeUnit.SECONDS); // no restart after the masters are closed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (TiffinProcess p : nodes) {
            if (p != null) {
                p.close();
            }
        }
        synchronized (this) {
            for (TiffinProcess p : masters) {
                if (p != null) {
                    p.close();
                }
            }
        }
        probes.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        if (zookeeper != null) {
            zookeeper.close();
        }
    }
}
