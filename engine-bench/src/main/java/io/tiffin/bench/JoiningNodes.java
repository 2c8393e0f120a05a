package io.tiffin.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Fake nodes that join a master and leave it on command, from a process of their own ({@link JoiningNodesMain})
 * that runs at a lower CPU priority ({@code nice}) than the bench: they stand for other machines, so on a machine
 * that runs master, bench and joining nodes together their work (connections, mounts, pings, and their JVM's
 * compilers and collector) must not take the CPU from the master and the timed client ahead of them. The master's
 * own work for a join keeps its priority.
 *
 * <p>Thread-safe: its commands are serialised ({@code synchronized}); {@link #close()} ends the process once.
 */
final class JoiningNodes implements AutoCloseable {
    /** The JVM flags of the joining nodes' process: a small heap; their code need not be fast, only correct. */
    static final List<String> JVM_OPTIONS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow");
    private static final List<String> PASSED_PROPERTIES = List.of("log4j.configurationFile", "tiffin.home",
            "tiffin.conf.dir", "tiffin.log.dir", "tiffin.log.file");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Process process;
    private final BufferedReader replies;
    private final Writer commands;
    private boolean closed;

    private JoiningNodes(Process process) {
        this.process = process;
        this.replies = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts the process ({@code java} of this JVM, its class path) for the master at {@code host:port}, nodes
     * pinging every {@code pingInterval} and mounting segments of {@code segmentCapacity} bytes, at {@code niceness}
     * (0: this process's priority; needs {@code nice} on the path otherwise); its standard error goes to {@code log}.
     */
    static JoiningNodes start(String host, int port, Duration pingInterval, long segmentCapacity, int niceness,
            Path log) throws IOException {
        List<String> command = new ArrayList<>();
        if (niceness != 0) {
            command.addAll(List.of(nice(), "-n", Integer.toString(niceness)));
        }
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        for (String property : PASSED_PROPERTIES) { // the launcher's logging set-up, when it started this JVM
            String value = System.getProperty(property);
            if (value != null) {
                command.add("-D" + property + "=" + value);
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), JoiningNodesMain.class.getName(), host,
                Integer.toString(port), Long.toString(pingInterval.toMillis()), Long.toString(segmentCapacity)));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        JoiningNodes nodes = new JoiningNodes(p);
        try {
            nodes.awaitReady();
        } catch (IOException | RuntimeException e) {
            nodes.close();
            throw e;
        }
        return nodes;
    }

    private static String nice() {
        for (String dir : List.of("/usr/bin", "/bin")) {
            Path nice = Path.of(dir, "nice");
            if (Files.isExecutable(nice)) {
                return nice.toString();
            }
        }
        throw new IllegalStateException("no nice in /usr/bin or /bin: give --join-nice 0 to run the joining nodes at"
                + " the bench's priority");
    }

    /** Reads up to the ready line; a process that has not printed it within {@link #START_TIMEOUT} is killed. */
    private void awaitReady() throws IOException {
        CountDownLatch ready = new CountDownLatch(1);
        Thread.ofVirtual().start(() -> {
            try {
                if (!ready.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly(); // its output ends, and the read below with it
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            String line;
            while ((line = replies.readLine()) != null) {
                if (line.equals(JoiningNodesMain.READY)) {
                    return;
                }
                if (line.startsWith(JoiningNodesMain.REPLY)) {
                    throw new IllegalStateException("the joining nodes' process did not start: " + line);
                }
            }
        } finally {
            ready.countDown();
        }
        throw new IllegalStateException("the joining nodes' process ended before it was ready, or was not ready within "
                + START_TIMEOUT + " (exit " + exitValue() + ")");
    }

    private String exitValue() {
        try {
            return process.waitFor(5, TimeUnit.SECONDS) ? Integer.toString(process.exitValue()) : "?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

    /** The process id ({@code nice} replaces itself with the JVM: the same process). */
    long pid() {
        return process.pid();
    }

    /** {@code nodes} fake nodes named {@code prefix-node<i>} connect and mount a segment each; the compile ms. */
    synchronized long join(String prefix, int nodes) {
        return command("join " + prefix + " " + nodes, "joined");
    }

    /** The nodes of the last join unmount their segments and disconnect; the compile ms of their JVM meanwhile. */
    synchronized long leave() {
        return command("leave", "left");
    }

    private long command(String command, String answer) {
        try {
            commands.write(command + "\n");
            commands.flush();
            String line;
            while ((line = replies.readLine()) != null) {
                if (!line.startsWith(JoiningNodesMain.REPLY)) {
                    continue;
                }
                String reply = line.substring(JoiningNodesMain.REPLY.length());
                if (reply.startsWith(answer + " ")) {
                    return Long.parseLong(reply.substring(answer.length() + 1).trim());
                }
                throw new IllegalStateException("the joining nodes answered '" + command + "' with: " + reply);
            }
            throw new IllegalStateException("the joining nodes' process ended (exit " + exitValue() + ") during '"
                    + command + "'");
        } catch (IOException e) {
            throw new IllegalStateException("the joining nodes' process: " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            commands.write("exit\n");
            commands.flush();
        } catch (IOException e) {
            // the process is gone already
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
