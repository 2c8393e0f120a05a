package io.tiffin.core.cli;

import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.coordination.EmbeddedZooKeeper;
import java.nio.file.Path;
import java.util.Deque;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin coordinator}: a standalone ZooKeeper server (ZooKeeper's own code, in this JVM) for masters with
 * {@code master.coordinator=zk://host:port}: for trying failover on one machine, tests and the failover
 * benchmark. A production cluster runs a ZooKeeper ensemble of three or five servers instead.
 *
 * <p>Not thread-safe: one instance runs once (see {@link ServerCommand}).
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = "Runs a single ZooKeeper server for standby masters to elect their leader (until Ctrl-C).")
final class CoordinatorCommand extends ServerCommand {
    @Option(names = "--host", paramLabel = "HOST", defaultValue = "127.0.0.1",
            description = "Interface to bind (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "2181", description = "Client port (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--data-dir", paramLabel = "DIR", required = true, description = "Where the server keeps its data.")
    Path dataDir;

    @Override
    TiffinConfig resolveConfig() {
        return config(flags());
    }

    @Override
    void start(TiffinConfig config, Deque<AutoCloseable> started) {
        EmbeddedZooKeeper zk = new EmbeddedZooKeeper(host, port, dataDir);
        started.push(zk);
        out().println("Tiffin coordinator (ZooKeeper) listening on " + host + ":" + zk.port()
                + "; masters use --coordinator zk://" + host + ":" + zk.port());
    }
}
