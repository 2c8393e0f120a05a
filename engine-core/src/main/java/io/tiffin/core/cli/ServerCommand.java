package io.tiffin.core.cli;

import io.tiffin.core.config.HostPort;
import io.tiffin.core.config.TiffinConfig;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CountDownLatch;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Base of the commands that run servers ({@code standalone}, {@code master}, {@code node}): builds
 * the configuration, starts the servers, prints one line per listener and blocks until the process
 * is asked to stop (SIGINT, SIGTERM) or the running thread is interrupted; then closes everything in
 * reverse start order and prints {@code Stopped.}.
 *
 * <p>Not thread-safe: one instance runs once. The shutdown hook it registers runs on its own thread
 * and only closes the resources this command started.
 */
abstract class ServerCommand extends TiffinCommand {
    private static final Logger LOG = LogManager.getLogger(ServerCommand.class);

    /** The resolved configuration from the file, the environment, {@code -D} and this command's flags. */
    abstract TiffinConfig resolveConfig();

    /**
     * Starts the servers, pushing each on {@code started} as soon as it runs (they are closed in
     * reverse order), and prints their listener lines.
     */
    abstract void start(TiffinConfig config, Deque<AutoCloseable> started);

    @Override
    public final Integer call() {
        TiffinConfig config = resolveConfig();
        Deque<AutoCloseable> started = new ArrayDeque<>();
        try {
            start(config, started);
        } catch (RuntimeException e) {
            closeAll(started);
            throw e;
        }
        out().flush();
        CountDownLatch done = new CountDownLatch(1);
        Thread hook = new Thread(() -> stop(started, done), "tiffin-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            done.await();
        } catch (InterruptedException e) {
            // Stopped in-process (tests, embedding): do what the hook would have done.
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
                stop(started, done);
            } catch (IllegalStateException shuttingDown) {
                LOG.debug("JVM is shutting down; the shutdown hook stops the servers", shuttingDown);
            }
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private void stop(Deque<AutoCloseable> started, CountDownLatch done) {
        closeAll(started);
        out().println("Stopped.");
        out().flush();
        done.countDown();
    }

    private static void closeAll(Deque<AutoCloseable> started) {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("Closing {} failed: {}", c, e.toString());
            }
        }
    }

    /** {@code host:port} of a bound address, with the configured host (it may be a wildcard). */
    static String endpoint(String host, InetSocketAddress bound) {
        return new HostPort(host, bound.getPort()).toString();
    }

    /** The line announcing a master. */
    static String masterLine(String host, InetSocketAddress rpc, InetSocketAddress admin) {
        return "Tiffin master listening on " + endpoint(host, rpc) + " (admin "
                + (admin == null ? "HTTP off" : "http://" + endpoint(host, admin) + "/metrics") + ")";
    }

    /** The line announcing a node and its segment (and the segment's shared-memory file, if any). */
    static String nodeLine(io.tiffin.core.node.NodeServer node, long size) {
        return "Tiffin node " + node.nodeId() + " segment " + node.segmentName() + " (" + Human.bytes(size) + ") on "
                + node.endpoint() + (node.sharedMemoryFile() == null ? "" : ", shared memory " + node.sharedMemoryFile());
    }
}
