package io.tiffin.core.cli;

import io.tiffin.core.config.HostPort;
import io.tiffin.core.config.TiffinConfig;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntConsumer;
import java.util.function.ObjIntConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Base of the commands that run servers ({@code standalone}, {@code master}, {@code node}): builds
 * the configuration, starts the servers, prints one line per listener and blocks until the process
 * is asked to stop (SIGINT, SIGTERM) or the running thread is interrupted; then closes everything in
 * reverse start order, prints {@code Stopped.} and returns 0, so that an orderly stop by a signal
 * exits with code 0 (not 130 or 143). A second SIGINT or SIGTERM while stopping exits at once, with
 * code 128 + the signal's number, without finishing the cleanup. Every server command takes
 * {@code --insecure} (protected mode off, {@code transport.insecure}).
 *
 * <p>Not thread-safe: one instance runs once. Should the JVM shut down for another reason (SIGHUP,
 * {@link System#exit}), the shutdown hook it registers closes the resources this command started, on
 * its own thread.
 */
abstract class ServerCommand extends TiffinCommand {
    private static final Logger LOG = LogManager.getLogger(ServerCommand.class);

    @picocli.CommandLine.Option(names = "--insecure", description = "Start even when listening on an address other"
            + " hosts reach with no credentials (no transport.auth-token, no mutual TLS): anyone who reaches it can"
            + " read, overwrite or remove every object (transport.insecure).")
    boolean insecure;

    /** An empty, ordered flag map for {@link #config(Map)} holding the flags every server command has. */
    final Map<String, Flag> serverFlags() {
        Map<String, Flag> f = flags();
        f.put(io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_INSECURE.name(), new Flag("--insecure",
                insecure ? "true" : null));
        return f;
    }

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
        CountDownLatch stopRequested = new CountDownLatch(1);
        Thread hook = new Thread(() -> stop(started), "tiffin-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        Runnable unregister = StopSignals.PROCESS.register(stopRequested::countDown);
        boolean interrupted = false;
        try {
            stopRequested.await();
        } catch (InterruptedException e) {
            // Stopped in-process (tests, embedding).
            interrupted = true;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
            stop(started);
        } catch (IllegalStateException shuttingDown) {
            LOG.debug("JVM is shutting down; the shutdown hook stops the servers", shuttingDown);
        } finally {
            unregister.run();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    private void stop(Deque<AutoCloseable> started) {
        closeAll(started);
        out().println("Stopped.");
        out().flush();
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

    /**
     * SIGINT and SIGTERM while server commands run: the first asks every running command to stop
     * (each then stops in order and returns 0); another one before they have all stopped exits at
     * once with code 128 + the signal's number. The handlers are installed while at least one command
     * is registered and the JVM's own ones restored after the last, so that outside server commands
     * (and with {@code -Xrs}, or when the signal is ignored, e.g. under {@code nohup}) a signal does
     * what it did before: shut the JVM down through its shutdown hooks.
     *
     * <p>Thread-safe.
     */
    static final class StopSignals {
        private static final List<String> SIGNALS = List.of("INT", "TERM");

        /** The process's: installs real signal handlers. */
        static final StopSignals PROCESS = new StopSignals(true,
                code -> Runtime.getRuntime().exit(code),
                (signal, code) -> {
                    System.err.println("tiffin: SIG" + signal + " while stopping; exiting now without finishing"
                            + " the cleanup");
                    System.err.flush();
                    Runtime.getRuntime().halt(code);
                });

        private final boolean installHandlers;
        private final IntConsumer exit;
        private final ObjIntConsumer<String> halt;
        /** The stop requests of the running commands. Guarded by this. */
        private final List<Runnable> running = new ArrayList<>();
        /** The handlers replaced, to restore. Guarded by this. */
        private final Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
        /** A signal has asked the running commands to stop. Guarded by this. */
        private boolean stopping;

        /**
         * @param installHandlers whether to install handlers for the real signals (false in tests,
         *     which call {@link #onSignal})
         * @param exit what the JVM does on a signal outside server commands (exit through the
         *     shutdown hooks with this code)
         * @param halt exits at once on a second signal (the signal's name, the exit code)
         */
        StopSignals(boolean installHandlers, IntConsumer exit, ObjIntConsumer<String> halt) {
            this.installHandlers = installHandlers;
            this.exit = exit;
            this.halt = halt;
        }

        /**
         * Runs {@code requestStop} on the next SIGINT or SIGTERM; returns what to run once the
         * command has stopped (unregisters it).
         */
        synchronized Runnable register(Runnable requestStop) {
            if (running.isEmpty() && installHandlers) {
                install();
            }
            running.add(requestStop);
            return () -> unregister(requestStop);
        }

        private synchronized void unregister(Runnable requestStop) {
            if (running.remove(requestStop) && running.isEmpty()) {
                stopping = false;
                restore();
            }
        }

        /** How many commands are registered (for tests). */
        synchronized int registered() {
            return running.size();
        }

        /** Handles SIG{@code name} (number {@code number}). */
        void onSignal(String name, int number) {
            List<Runnable> toStop;
            synchronized (this) {
                if (running.isEmpty()) {
                    // Raced with the restore of the JVM's handler: do what it does.
                    toStop = null;
                } else if (stopping) {
                    halt.accept(name, 128 + number);
                    return;
                } else {
                    stopping = true;
                    toStop = List.copyOf(running);
                }
            }
            if (toStop == null) {
                exit.accept(128 + number);
                return;
            }
            LOG.info("SIG{} received; stopping", name);
            toStop.forEach(Runnable::run);
        }

        private void install() {
            for (String name : SIGNALS) {
                Signal signal = new Signal(name);
                try {
                    previous.put(signal, Signal.handle(signal, s -> onSignal(s.getName(), s.getNumber())));
                } catch (IllegalArgumentException e) {
                    // -Xrs: the shutdown hook still stops the servers (exit 128 + the signal's number).
                    LOG.debug("cannot handle SIG{}; the shutdown hook stops the servers", name, e);
                }
            }
        }

        private void restore() {
            previous.forEach((signal, handler) -> {
                try {
                    Signal.handle(signal, handler);
                } catch (IllegalArgumentException e) {
                    LOG.debug("cannot restore the handler of SIG{}", signal.getName(), e);
                }
            });
            previous.clear();
        }
    }
}
