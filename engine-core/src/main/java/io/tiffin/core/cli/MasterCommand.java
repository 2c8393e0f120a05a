package io.tiffin.core.cli;

import static io.tiffin.core.config.TiffinConfigKeys.MASTER_ADMIN_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_PORT;

import com.google.inject.Injector;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.plugin.PluginRegistry;
import java.util.Deque;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin master}: runs a master (metadata, allocation, eviction, admin HTTP).
 *
 * <p>Not thread-safe: one instance runs once (see {@link ServerCommand}).
 */
@Command(name = "master", mixinStandardHelpOptions = true, description = "Runs a master (until Ctrl-C).")
final class MasterCommand extends ServerCommand {
    @Option(names = "--host", paramLabel = "HOST", description = "Interface to bind (master.host; default 127.0.0.1).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "RPC port (master.port; default 50051).")
    String port;

    @Option(names = "--admin-port", paramLabel = "PORT",
            description = "Admin HTTP port for /metrics and /health (master.admin-port; default 9003).")
    String adminPort;

    @Option(names = "--coordinator", paramLabel = "URL", description = "Elect the leader among several masters"
            + " through this coordination service: zk://host:port[,host:port...][/root] (master.coordinator;"
            + " default none: a single master).")
    String coordinator;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "Keep the cluster facts here, so a restarted"
            + " single master gets its objects back from its nodes (master.state-dir; default none).")
    String stateDir;

    @Override
    TiffinConfig resolveConfig() {
        Map<String, Flag> f = serverFlags();
        f.put(MASTER_HOST.name(), new Flag("--host", host));
        f.put(MASTER_PORT.name(), new Flag("--port", port));
        f.put(MASTER_ADMIN_PORT.name(), new Flag("--admin-port", adminPort));
        f.put(io.tiffin.core.config.TiffinConfigKeys.MASTER_COORDINATOR.name(), new Flag("--coordinator", coordinator));
        f.put(io.tiffin.core.config.TiffinConfigKeys.MASTER_STATE_DIR.name(), new Flag("--state-dir", stateDir));
        return config(f);
    }

    @Override
    void start(TiffinConfig config, Deque<AutoCloseable> started) {
        Injector injector = Tiffin.lazyInjector(config); // a node's keys in a shared file are not the master's
        started.push(injector.getInstance(PluginRegistry.class));
        io.tiffin.core.master.FailoverSettings failover = injector.getInstance(
                io.tiffin.core.master.FailoverSettings.class);
        MasterServer master = MasterServer.start(injector.getInstance(MasterServer.Options.class), failover,
                io.tiffin.core.util.Ticker.SYSTEM);
        started.push(master);
        out().println(masterLine(config.get(MASTER_HOST), master.address(), master.adminAddress())
                + (failover.coordinator().isEmpty() ? "" : ", " + master.role().name().toLowerCase(
                java.util.Locale.ROOT) + " of " + failover.coordinator()));
    }
}
