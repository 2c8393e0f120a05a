package io.tiffin.bench;

import io.tiffin.core.master.MasterServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster {@code tiffin bench kv} measures: a master in this JVM plus {@code tiffin node} processes —
 * the distribution's {@code bin/tiffin node} with the launcher's JVM defaults when this JVM runs from one
 * (as users run nodes), else {@code java -cp <this class path>} with the same command ({@link TiffinProcess})
 * — or a running cluster it only connects to.
 *
 * <p>Owns the master, the processes it started and their log directory; {@link #close()} stops them (SIGTERM,
 * killed after 10 s) and deletes the logs unless a node ended on its own after the start (then their path is
 * printed; a node that fails to start is reported by the exception, with the end of its output). A
 * shutdown hook stops the nodes should this JVM be stopped by a signal first.
 *
 * <p>Not thread-safe: the bench's main thread starts and closes it.
 */
final class KvCluster implements AutoCloseable {
    private static final Duration NODE_START = Duration.ofSeconds(60);
    private static final Duration NODE_STOP = Duration.ofSeconds(10);

    private final MasterServer master;
    private final String address;
    private final PrintStream out;
    private final List<TiffinProcess> nodes = new ArrayList<>();
    /** The nodes' output and logs, or null (a running cluster). */
    private final Path logDir;
    private final Thread stopHook;
    /** Whether every node started: a node that ends after that leaves its output for reading. */
    private boolean started;

    private KvCluster(MasterServer master, String address, PrintStream out, Path logDir) {
        this.master = master;
        this.address = address;
        this.out = out;
        this.logDir = logDir;
        this.stopHook = logDir == null ? null : new Thread(this::stopNodes, "bench-kv-stop-nodes");
        if (stopHook != null) {
            Runtime.getRuntime().addShutdownHook(stopHook);
        }
    }

    /** A running cluster at {@code masterAddress}, host:port; nothing to stop. */
    static KvCluster existing(String masterAddress) {
        return new KvCluster(null, masterAddress, null, null);
    }

    /**
     * Starts a master in this JVM and {@code nodes} node processes, each announced on {@code out} once it
     * serves; on failure stops what it started.
     *
     * @param segmentSize memory per node, e.g. {@code 2GiB}
     * @param nodeIoThreads event-loop threads per node, 0 = the node's default
     * @param sharedMemoryDir where the nodes keep their segments in shared memory, or null
     * @param tls the PKI of a TLS cluster (master and nodes serve TLS), or null for plaintext
     */
    static KvCluster start(int nodes, String segmentSize, int nodeIoThreads, Path sharedMemoryDir, PrintStream out,
                           BenchTls tls) throws IOException {
        MasterServer master = BenchSupport.startLocalMaster(tls == null ? new String[0]
                : tls.serverConfig().toArray(String[]::new));
        KvCluster cluster;
        try {
            cluster = new KvCluster(master, "127.0.0.1:" + master.address().getPort(), out,
                    Files.createTempDirectory("tiffin-bench-kv-"));
        } catch (IOException | RuntimeException e) {
            master.close();
            throw e;
        }
        try {
            for (int i = 0; i < nodes; i++) { // all start at once, then each is awaited
                cluster.nodes.add(TiffinProcess.start("node-" + i, cluster.logDir,
                        nodeArguments(cluster.address, i, segmentSize, nodeIoThreads, sharedMemoryDir, tls), List.of()));
            }
            for (TiffinProcess node : cluster.nodes) {
                out.println("Node process " + node.pid() + " serves on " + endpointOf(node.awaitLine("Tiffin node ",
                        NODE_START)));
            }
        } catch (RuntimeException e) {
            cluster.close(); // the exception carries the failed node's output
            throw e;
        }
        cluster.started = true;
        return cluster;
    }

    /** The master's host:port. */
    String address() {
        return address;
    }

    /** Where the node processes' output goes (deleted by {@link #close()}), or null for a running cluster. */
    Path logDir() {
        return logDir;
    }

    /** The pids of the node processes started, in order. */
    List<Long> nodePids() {
        return nodes.stream().map(TiffinProcess::pid).toList();
    }

    /**
     * The command line of node {@code i} after {@code tiffin}. The nodes back their segments at start-up
     * ({@code node.segment-prefault}): the cases measure nodes whose memory has been written before, as a node's is
     * after its first fill, not the kernel's first touch of each page (in a virtual machine the host's too).
     */
    static List<String> nodeArguments(String master, int i, String segmentSize, int nodeIoThreads,
                                      Path sharedMemoryDir, BenchTls tls) {
        List<String> args = new ArrayList<>(List.of("node", "--master", master, "--host", "127.0.0.1",
                "--segment-size", segmentSize, "-D", "node.id=" + (tls == null ? "bench-node-" : "bench-tls-node-") + i,
                "-D", "node.segment-prefault=true"));
        if (nodeIoThreads > 0) {
            args.addAll(List.of("-D", "node.io-threads=" + nodeIoThreads));
        }
        if (sharedMemoryDir != null) {
            args.addAll(List.of("--shared-memory-dir", sharedMemoryDir.toString()));
        }
        if (tls != null) {
            for (String kv : tls.serverConfig()) {
                args.addAll(List.of("-D", kv));
            }
        }
        return args;
    }

    /** The endpoint in a node's start-up line ({@code Tiffin node ID segment NAME (SIZE) on HOST:PORT[, ...]}). */
    static String endpointOf(String line) {
        int at = line.lastIndexOf(" on ");
        if (at < 0) {
            throw new IllegalStateException("not a node's start-up line: " + line);
        }
        String rest = line.substring(at + 4);
        int comma = rest.indexOf(',');
        return comma < 0 ? rest.strip() : rest.substring(0, comma).strip();
    }

    /** Stops every node (SIGTERM, then SIGKILL after {@link #NODE_STOP}); true if all were still running. */
    private boolean stopNodes() {
        boolean allRan = true;
        for (TiffinProcess node : nodes) {
            allRan &= node.alive();
            node.stop(NODE_STOP);
        }
        return allRan;
    }

    @Override
    public void close() {
        if (stopHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(stopHook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs (or ran) anyway
            }
        }
        boolean allRan = stopNodes();
        nodes.clear();
        if (master != null) {
            master.close();
        }
        if (logDir != null) {
            if (allRan || !started) {
                BenchSupport.deleteTree(logDir);
            } else if (out != null) {
                out.println("A node process ended before the bench stopped it; its output is in " + logDir);
            }
        }
    }
}
