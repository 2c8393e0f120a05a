package io.tiffin.bench;

import io.tiffin.core.master.MasterServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The cluster {@code tiffin bench kv} measures: a master in this JVM plus node processes started with this
 * JVM's {@code java} and class path ({@link BenchNodeMain}), or a running cluster it only connects to.
 *
 * <p>Owns the master and the processes it started; {@link #close()} stops them (a node process exits when
 * its standard input closes, or is killed after 10 s).
 *
 * <p>Not thread-safe: the bench's main thread starts and closes it.
 */
final class KvCluster implements AutoCloseable {
    private final MasterServer master;
    private final String address;
    private final List<Process> processes = new ArrayList<>();

    private KvCluster(MasterServer master, String address) {
        this.master = master;
        this.address = address;
    }

    /** A running cluster at {@code masterAddress}, host:port; nothing to stop. */
    static KvCluster existing(String masterAddress) {
        return new KvCluster(null, masterAddress);
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
        KvCluster cluster = new KvCluster(master, "127.0.0.1:" + master.address().getPort());
        try {
            for (int i = 0; i < nodes; i++) {
                cluster.startNode(i, segmentSize, nodeIoThreads, sharedMemoryDir, out, tls);
            }
        } catch (IOException | RuntimeException e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The master's host:port. */
    String address() {
        return address;
    }

    private void startNode(int i, String segmentSize, int nodeIoThreads, Path sharedMemoryDir, PrintStream out,
                           BenchTls tls) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-Dguice_bytecode_gen_option=DISABLED", "-Xmx512m",
                "-cp", System.getProperty("java.class.path"), BenchNodeMain.class.getName(), address,
                (tls == null ? "bench-node-" : "bench-tls-node-") + i, segmentSize, Integer.toString(nodeIoThreads),
                sharedMemoryDir == null ? "" : sharedMemoryDir.toString()));
        if (tls != null) {
            command.addAll(tls.nodeArguments());
        }
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process p = pb.start();
        processes.add(p);
        BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while ((line = lines.readLine()) != null && !line.startsWith("READY ")) {
            if (System.nanoTime() > deadline) {
                break;
            }
        }
        if (line == null || !line.startsWith("READY ")) {
            throw new IllegalStateException("node process " + i + " did not start (see its output above)");
        }
        out.println("Node process " + p.pid() + " serves on " + line.substring(6));
    }

    @Override
    public void close() {
        for (Process p : processes) {
            try {
                p.getOutputStream().close(); // BenchNodeMain exits when its stdin closes
            } catch (IOException e) {
                p.destroy();
            }
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        processes.clear();
        if (master != null) {
            master.close();
        }
    }
}
