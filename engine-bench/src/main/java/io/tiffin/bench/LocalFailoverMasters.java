package io.tiffin.bench;

import com.google.inject.Injector;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.coordination.EmbeddedZooKeeper;
import io.tiffin.core.master.FailoverSettings;
import io.tiffin.core.master.Leadership;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Masters with failover on, all in this JVM, for {@code tiffin bench master --failover}: a ZooKeeper server (or
 * the coordinator given), and masters on free loopback ports that elect their leader there, configured from the
 * defaults plus overrides as a {@code tiffin master --coordinator URL} is. The leader serves; the others stand by.
 *
 * <p>Not thread-safe: built and closed by one thread. Owns the masters, and the ZooKeeper server it started with
 * its temporary data directory (deleted on close).
 */
final class LocalFailoverMasters implements AutoCloseable {
    private final EmbeddedZooKeeper zooKeeper;
    private final Path zooKeeperData;
    private final List<MasterServer> masters = new ArrayList<>();
    private final String coordinator;

    /**
     * Starts {@code count} masters electing through {@code coordinator} (null: a ZooKeeper server started here),
     * and waits up to {@code timeout} for one to lead.
     */
    LocalFailoverMasters(int count, String coordinator, Duration timeout, String... overrides) {
        if (coordinator == null) {
            try {
                zooKeeperData = Files.createTempDirectory("tiffin-bench-zk");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            zooKeeper = new EmbeddedZooKeeper("127.0.0.1", 0, zooKeeperData);
            this.coordinator = zooKeeper.url("/tiffin-bench-" + Long.toHexString(System.nanoTime()));
        } else {
            zooKeeper = null;
            zooKeeperData = null;
            this.coordinator = coordinator;
        }
        try {
            for (int i = 0; i < count; i++) {
                masters.add(start(overrides));
            }
            awaitLeader(timeout);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private MasterServer start(String... overrides) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.host", "127.0.0.1").set("master.port", "0")
                .set("master.coordinator", coordinator);
        for (String o : overrides) {
            int eq = o.indexOf('=');
            b.set(o.substring(0, eq), o.substring(eq + 1));
        }
        Injector injector = Tiffin.injector(b.build());
        Runtime.getRuntime().addShutdownHook(new Thread(() -> injector.getInstance(PluginRegistry.class).close()));
        FailoverSettings f = injector.getInstance(FailoverSettings.class);
        MasterServer.Options o = injector.getInstance(MasterServer.Options.class);
        // no admin server; a deposed leader of a benchmark refuses requests rather than ending the benchmark's JVM
        return MasterServer.start(new MasterServer.Options(o.host(), 0, -1, o.workerThreads(), o.settings(),
                o.transport(), o.strategy()), new FailoverSettings(f.coordinator(), null, "", f.sessionTimeout(),
                false), Ticker.SYSTEM);
    }

    private void awaitLeader(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        while (leader() == null) {
            if (System.nanoTime() - end > 0) {
                throw new IllegalStateException("no master of " + masters.size() + " led within " + timeout
                        + " through " + coordinator);
            }
            try {
                Thread.sleep(20); // polls the election's outcome
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the masters elect a leader", e);
            }
        }
    }

    /** The master that leads, or null while none does. */
    MasterServer leader() {
        for (MasterServer m : masters) {
            if (m.role() == Leadership.Role.LEADER) {
                return m;
            }
        }
        return null;
    }

    /** Every master, {@code host:port,...}. */
    String addresses() {
        List<String> out = new ArrayList<>();
        masters.forEach(m -> out.add("127.0.0.1:" + m.address().getPort()));
        return String.join(",", out);
    }

    String coordinator() {
        return coordinator;
    }

    @Override
    public void close() {
        masters.forEach(MasterServer::close);
        if (zooKeeper != null) {
            zooKeeper.close();
            try (var files = Files.walk(zooKeeperData)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException e) {
                System.err.println("could not delete " + zooKeeperData + ": " + e.getMessage());
            }
        }
    }
}
