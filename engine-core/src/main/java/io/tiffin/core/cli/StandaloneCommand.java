package io.tiffin.core.cli;

import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.GATEWAY_REPLICAS;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_ADMIN_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.MASTER_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_SEGMENT_SIZE;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_STORAGE_BACKEND;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_STORAGE_PATH;
import static io.tiffin.core.config.TiffinConfigKeys.OFFLOAD_MODE;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.gateway.GatewayServer;
import io.tiffin.core.gateway.TiffinGatewayStore;
import java.util.Deque;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin standalone}: a master and one node in this process, ready for clients, and a Redis-protocol
 * gateway to them ({@code --redis-port}, 0 = none).
 *
 * <p>Not thread-safe: one instance runs once (see {@link ServerCommand}).
 */
@Command(name = "standalone", mixinStandardHelpOptions = true,
        description = "Runs a master and one node in one process (until Ctrl-C).")
final class StandaloneCommand extends ServerCommand {
    @Option(names = "--host", paramLabel = "HOST", description = "Interface to bind (master.host and node.host; "
            + "default 127.0.0.1).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "Master RPC port (master.port; default 50051).")
    String port;

    @Option(names = "--admin-port", paramLabel = "PORT",
            description = "Master admin HTTP port for /metrics and /health (master.admin-port; default 9003).")
    String adminPort;

    @Option(names = "--segment-size", paramLabel = "SIZE",
            description = "Memory the node contributes, e.g. 1GiB (node.segment-size; default 1GiB).")
    String segmentSize;

    @Option(names = "--redis-port", paramLabel = "PORT",
            description = "Port of the Redis-protocol (RESP) gateway (gateway.port; default 6379; 0 = none).")
    String redisPort;

    @Option(names = "--storage-path", paramLabel = "DIR",
            description = "Directory of an SSD tier behind the node's memory (node.storage-path). Unless they are set,"
                    + " node.storage-backend becomes bucket and offload.mode on-evict (eviction moves objects to the"
                    + " SSD tier instead of dropping them). Default: no SSD tier.")
    String storagePath;

    @Override
    TiffinConfig resolveConfig() {
        Map<String, Flag> f = serverFlags();
        f.put(MASTER_HOST.name(), new Flag("--host", host));
        f.put(NODE_HOST.name(), new Flag("--host", host));
        f.put(GATEWAY_HOST.name(), new Flag("--host", host));
        f.put(MASTER_PORT.name(), new Flag("--port", port));
        f.put(MASTER_ADMIN_PORT.name(), new Flag("--admin-port", adminPort));
        f.put(NODE_SEGMENT_SIZE.name(), new Flag("--segment-size", segmentSize));
        f.put(GATEWAY_PORT.name(), new Flag("--redis-port", redisPort));
        f.put(NODE_STORAGE_PATH.name(), new Flag("--storage-path", storagePath));
        TiffinConfig config = config(f);
        if (storagePath == null) {
            return config;
        }
        // what an SSD tier needs, where no file, variable or -D chose otherwise
        boolean implied = false;
        if (config.source(NODE_STORAGE_BACKEND).equals("default")) {
            f.put(NODE_STORAGE_BACKEND.name(), new Flag("--storage-path", "bucket"));
            implied = true;
        }
        if (config.source(OFFLOAD_MODE).equals("default")) {
            f.put(OFFLOAD_MODE.name(), new Flag("--storage-path", "on-evict"));
            implied = true;
        }
        return implied ? config(f) : config;
    }

    @Override
    void start(TiffinConfig config, Deque<AutoCloseable> started) {
        Tiffin tiffin = Tiffin.embedded(config);
        started.push(tiffin);
        String masterHost = config.get(MASTER_HOST);
        out().println(masterLine(masterHost, tiffin.master().address(), tiffin.master().adminAddress()));
        out().println(nodeLine(tiffin.node(), config.get(NODE_SEGMENT_SIZE)));
        String reachable = isWildcard(masterHost) ? "127.0.0.1" : masterHost;
        if (config.get(GATEWAY_PORT) != 0) {
            String master = endpoint(reachable, tiffin.master().address());
            GatewayCommand.Prepared prepared = GatewayCommand.prepare(config);
            GatewayServer gateway = GatewayCommand.startGateway(config, prepared,
                    TiffinGatewayStore.over(tiffin.client(), config.get(GATEWAY_REPLICAS), master), "--redis-port");
            started.push(gateway);
            out().println(GatewayCommand.gatewayLine(config.get(GATEWAY_HOST), gateway, master));
        }
        out().println("Ready. Try: tiffin put --master " + endpoint(reachable, tiffin.master().address())
                + " hello -  (from another shell)");
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }
}
