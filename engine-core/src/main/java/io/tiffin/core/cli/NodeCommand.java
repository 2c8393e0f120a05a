package io.tiffin.core.cli;

import static io.tiffin.core.config.TiffinConfigKeys.MASTER_ADDRESS;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_ADMIN_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_HOST;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_PORT;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_SEGMENT_SIZE;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_SHARED_MEMORY_DIR;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_STORAGE_BACKEND;
import static io.tiffin.core.config.TiffinConfigKeys.NODE_STORAGE_PATH;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.metrics.AdminHttpServer;
import io.tiffin.core.node.NodeMetrics;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import java.io.IOException;
import java.util.Deque;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tiffin node}: contributes a memory segment to a master's pool and serves its data plane.
 *
 * <p>Not thread-safe: one instance runs once (see {@link ServerCommand}).
 */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "Runs a storage node that mounts one segment at the master (until Ctrl-C).")
final class NodeCommand extends ServerCommand {
    @Option(names = "--master", paramLabel = "HOST:PORT",
            description = "The master, or every master (host:port,host:port,...: the leader is found among them)"
                    + " (master.address; default 127.0.0.1:50051).")
    String master;

    @Option(names = "--host", paramLabel = "HOST",
            description = "Interface to bind and advertise (node.host; default 127.0.0.1).")
    String host;

    @Option(names = "--port", paramLabel = "PORT",
            description = "Data-plane port (node.port; default 0 = any free port).")
    String port;

    @Option(names = "--segment-size", paramLabel = "SIZE",
            description = "Memory to contribute, e.g. 1GiB (node.segment-size; default 1GiB).")
    String segmentSize;

    @Option(names = "--storage-path", paramLabel = "DIR",
            description = "Directory of an SSD tier behind the memory (node.storage-path; with it, "
                    + "node.storage-backend defaults to bucket unless set). Default: no SSD tier.")
    String storagePath;

    @Option(names = "--shared-memory-dir", paramLabel = "DIR",
            description = "Keep the segment in a file of this tmpfs (e.g. /dev/shm) that clients on this host map"
                    + " and copy directly (node.shared-memory-dir). Default: anonymous memory, socket only.")
    String sharedMemoryDir;

    @Option(names = "--admin-port", paramLabel = "PORT",
            description = "Admin HTTP port for the node's /metrics and /health (node.admin-port; 0 = any free port;"
                    + " default: none).")
    String adminPort;

    @Option(names = "--storage-backend", paramLabel = "NAME",
            description = "Storage backend plugin of the SSD tier (node.storage-backend), e.g. bucket.")
    String storageBackend;

    @Override
    TiffinConfig resolveConfig() {
        Map<String, Flag> f = serverFlags();
        f.put(MASTER_ADDRESS.name(), new Flag("--master", master));
        f.put(NODE_HOST.name(), new Flag("--host", host));
        f.put(NODE_PORT.name(), new Flag("--port", port));
        f.put(NODE_SEGMENT_SIZE.name(), new Flag("--segment-size", segmentSize));
        f.put(NODE_STORAGE_PATH.name(), new Flag("--storage-path", storagePath));
        f.put(NODE_SHARED_MEMORY_DIR.name(), new Flag("--shared-memory-dir", sharedMemoryDir));
        f.put(NODE_STORAGE_BACKEND.name(), new Flag("--storage-backend", storageBackend));
        f.put(NODE_ADMIN_PORT.name(), new Flag("--admin-port", adminPort));
        TiffinConfig config = config(f);
        if (storagePath != null && config.source(NODE_STORAGE_BACKEND).equals("default")) {
            // an SSD tier needs a backend: bucket, where no file, variable or -D chose another
            f.put(NODE_STORAGE_BACKEND.name(), new Flag("--storage-path", "bucket"));
            return config(f);
        }
        return config;
    }

    @Override
    void start(TiffinConfig config, Deque<AutoCloseable> started) {
        NodeOptions options = component(config, NodeOptions.class);
        NodeServer node = NodeServer.start(options);
        started.push(node);
        out().println(nodeLine(node, options.segmentSize()));
        int admin = config.get(NODE_ADMIN_PORT);
        if (admin >= 0) {
            NodeMetrics metrics = new NodeMetrics(node);
            AdminHttpServer server;
            try {
                server = new AdminHttpServer(options.host(), admin, options.transport(), metrics::scrape,
                        metrics::healthJson);
            } catch (IOException e) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "--admin-port " + admin + " (node.admin-port ["
                        + config.source(NODE_ADMIN_PORT) + "]) cannot be used on " + options.host() + ": "
                        + e.getMessage() + "; is another server using it? Choose another port with --admin-port (0 ="
                        + " any free port, -1 = none), or stop that process", e);
            }
            started.push(server);
            out().println("Tiffin node " + node.nodeId() + " admin " + (options.transport().tls().enabled() ? "https"
                    : "http") + "://" + endpoint(options.host(), server.address()) + "/metrics");
        }
    }
}
