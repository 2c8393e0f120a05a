package io.tiffin.core.coordination;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

/**
 * A real ZooKeeper server in this JVM (ZooKeeper's own {@code ZooKeeperServerEmbedded}), standalone, on loopback:
 * {@code tiffin coordinator}, the failover benchmark and tests start one when no ensemble is given. A tick of
 * {@value #TICK_MS} ms lets sessions be as short as {@code 2 x tick} (1 s), so a dead leader's session ends quickly.
 *
 * <p>Thread-safe. Owns the server; {@link #close()} stops it (its data directory stays).
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    static final int TICK_MS = 500;

    private final ZooKeeperServerEmbedded server;
    private final int port;

    /** Starts a server on {@code host:port} (0 = a free port) keeping its data in {@code dataDir}. */
    public EmbeddedZooKeeper(String host, int port, Path dataDir) {
        this.port = port == 0 ? freePort(host) : port;
        Properties p = new Properties();
        p.setProperty("tickTime", Integer.toString(TICK_MS));
        p.setProperty("initLimit", "10");
        p.setProperty("syncLimit", "5");
        p.setProperty("clientPort", Integer.toString(this.port));
        p.setProperty("clientPortAddress", host);
        p.setProperty("maxSessionTimeout", "60000");
        p.setProperty("admin.enableServer", "false");
        p.setProperty("4lw.commands.whitelist", "ruok,srvr,stat");
        try {
            Files.createDirectories(dataDir);
            p.setProperty("dataDir", dataDir.toAbsolutePath().toString());
            server = ZooKeeperServerEmbedded.builder().baseDir(dataDir.toAbsolutePath()).configuration(p)
                    .exitHandler(org.apache.zookeeper.server.embedded.ExitHandler.LOG_ONLY).build();
            server.start(10_000);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start ZooKeeper in " + dataDir + ": " + e.getMessage(), e);
        } catch (Exception e) {
            throw new IllegalStateException("cannot start ZooKeeper on " + host + ":" + this.port + ": " + e, e);
        }
    }

    private static int freePort(String host) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(host, 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    /** {@code zk://127.0.0.1:port/root}. */
    public String url(String root) {
        return "zk://127.0.0.1:" + port + root;
    }

    @Override
    public void close() {
        server.close();
    }
}
