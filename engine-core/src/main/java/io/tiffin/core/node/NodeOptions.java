package io.tiffin.core.node;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.util.Ticker;
import java.time.Duration;

/**
 * How to run a node ({@link NodeServer#start}).
 *
 * <p>Thread-safe (immutable).
 *
 * @param nodeId unique id; empty = generated
 * @param host address to bind and advertise
 * @param port data-plane port (0 = any free port)
 * @param segmentSize bytes of memory to contribute
 * @param segmentPrefault back every page of the segment's anonymous memory at start-up instead of as it is
 *     first written ({@code node.segment-prefault})
 * @param masterAddress {@code host:port} of the master
 * @param pingInterval heartbeat period
 * @param sharedMemoryDir directory (a tmpfs) for the segment's file, shared with same-host clients;
 *     null for anonymous memory
 * @param connectTimeout how long the node's own connections (to its master, to other nodes) may take to connect
 *     and complete their handshake ({@code client.connect-timeout}); the handshake timeout of its data-plane
 *     server stays {@code transport}'s ({@code transport.handshake-timeout})
 * @param ticker the node's clock ({@link Ticker#nanos()}): the ping times it records, how long it
 *     retries a refused mount, the back-off of eviction notices; null means {@link Ticker#SYSTEM}.
 *     The heartbeat's period itself is the scheduler's.
 */
public record NodeOptions(String nodeId, String host, int port, long segmentSize, boolean segmentPrefault,
                          String masterAddress, Duration pingInterval, TransportSettings transport, Storage storage,
                          Duration taskPollInterval, java.nio.file.Path sharedMemoryDir, Duration connectTimeout,
                          Ticker ticker) {
    public NodeOptions {
        java.util.Objects.requireNonNull(host, "host");
        java.util.Objects.requireNonNull(masterAddress, "masterAddress");
        java.util.Objects.requireNonNull(pingInterval, "pingInterval");
        java.util.Objects.requireNonNull(transport, "transport");
        java.util.Objects.requireNonNull(taskPollInterval, "taskPollInterval");
        java.util.Objects.requireNonNull(connectTimeout, "connectTimeout");
        nodeId = nodeId == null ? "" : nodeId;
        ticker = ticker == null ? Ticker.SYSTEM : ticker;
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("node.port = " + port + " (expected: 0..65535, 0 = any free port)");
        }
        if (segmentSize <= 0) {
            throw new IllegalArgumentException("node.segment-size = " + segmentSize + " (expected: > 0, e.g. 4GiB)");
        }
        if (pingInterval.isNegative() || pingInterval.isZero()) {
            throw new IllegalArgumentException("node.ping-interval = " + pingInterval + " (expected: > 0, e.g. 1s)");
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("client.connect-timeout = " + connectTimeout + " (expected: > 0, e.g. 10s)");
        }
    }

    /**
     * Options for a node of the master at {@code masterAddress} ({@code host:port}): generated id, bound to
     * 127.0.0.1 on any free port, 1 GiB segment, 1 s heartbeats, default transport, no SSD tier (task
     * polls every 50 ms once one is set), anonymous memory, 10 s to connect, the system clock.
     */
    public static Builder builder(String masterAddress) {
        return new Builder(masterAddress);
    }

    /** A builder holding these options. */
    public Builder toBuilder() {
        return new Builder(masterAddress).nodeId(nodeId).host(host).port(port).segmentSize(segmentSize)
                .segmentPrefault(segmentPrefault).pingInterval(pingInterval).transport(transport)
                .storage(storage, taskPollInterval).sharedMemoryDir(sharedMemoryDir).connectTimeout(connectTimeout)
                .ticker(ticker);
    }

    /**
     * Builds {@link NodeOptions}; every setter replaces one value.
     *
     * <p>Not thread-safe: one thread builds.
     */
    public static final class Builder {
        private String masterAddress;
        private String nodeId = "";
        private String host = "127.0.0.1";
        private int port;
        private long segmentSize = 1L << 30;
        private boolean segmentPrefault;
        private Duration pingInterval = Duration.ofSeconds(1);
        private TransportSettings transport = TransportSettings.defaults();
        private Storage storage;
        private Duration taskPollInterval = Duration.ofMillis(50);
        private java.nio.file.Path sharedMemoryDir;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Ticker ticker = Ticker.SYSTEM;

        private Builder(String masterAddress) {
            this.masterAddress = masterAddress;
        }

        public Builder masterAddress(String address) {
            this.masterAddress = address;
            return this;
        }

        /** Unique id; empty = generated. */
        public Builder nodeId(String id) {
            this.nodeId = id;
            return this;
        }

        /** Address to bind and advertise. */
        public Builder host(String h) {
            this.host = h;
            return this;
        }

        /** Data-plane port (0 = any free port). */
        public Builder port(int p) {
            this.port = p;
            return this;
        }

        /** Bytes of memory to contribute. */
        public Builder segmentSize(long bytes) {
            this.segmentSize = bytes;
            return this;
        }

        /** Back every page of the segment at start-up (default: as each is first written). */
        public Builder segmentPrefault(boolean prefault) {
            this.segmentPrefault = prefault;
            return this;
        }

        public Builder pingInterval(Duration interval) {
            this.pingInterval = interval;
            return this;
        }

        public Builder transport(TransportSettings settings) {
            this.transport = settings;
            return this;
        }

        /** An SSD tier ({@code s}; null = none) whose tasks the node polls for every {@code pollInterval}. */
        public Builder storage(Storage s, Duration pollInterval) {
            this.storage = s;
            this.taskPollInterval = pollInterval;
            return this;
        }

        /** The segment in a file of {@code dir} (a tmpfs) that same-host clients map; null: anonymous memory. */
        public Builder sharedMemoryDir(java.nio.file.Path dir) {
            this.sharedMemoryDir = dir;
            return this;
        }

        /** How long the node's own connections may take to connect and handshake ({@code client.connect-timeout}). */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = timeout;
            return this;
        }

        public Builder ticker(Ticker t) {
            this.ticker = t;
            return this;
        }

        /**
         * The options.
         *
         * @throws IllegalArgumentException for a value out of range, naming its configuration key
         * @throws NullPointerException for a missing master address, host, interval or transport
         */
        public NodeOptions build() {
            return new NodeOptions(nodeId, host, port, segmentSize, segmentPrefault, masterAddress, pingInterval,
                    transport, storage, taskPollInterval, sharedMemoryDir, connectTimeout, ticker);
        }
    }

    public NodeOptions withMasterAddress(String address) {
        return new NodeOptions(nodeId, host, port, segmentSize, segmentPrefault, address, pingInterval, transport,
                storage, taskPollInterval, sharedMemoryDir, connectTimeout, ticker);
    }

    public NodeOptions withStorage(Storage s, Duration pollInterval) {
        return new NodeOptions(nodeId, host, port, segmentSize, segmentPrefault, masterAddress, pingInterval,
                transport, s, pollInterval, sharedMemoryDir, connectTimeout, ticker);
    }

    /** The segment in a file of {@code dir} (a tmpfs such as /dev/shm) that same-host clients map; null: anonymous. */
    public NodeOptions withSharedMemoryDir(java.nio.file.Path dir) {
        return new NodeOptions(nodeId, host, port, segmentSize, segmentPrefault, masterAddress, pingInterval,
                transport, storage, taskPollInterval, dir, connectTimeout, ticker);
    }

    /** The node on {@code t} instead of the system clock; for tests that move a manual ticker. */
    public NodeOptions withTicker(Ticker t) {
        return new NodeOptions(nodeId, host, port, segmentSize, segmentPrefault, masterAddress, pingInterval,
                transport, storage, taskPollInterval, sharedMemoryDir, connectTimeout, t);
    }

    /**
     * The node's SSD tier: the backend factory chosen by {@code node.storage-backend}, its configuration ({@code path}
     * plus the {@code storage.<backend>.*} keys), and how long a graceful stop may spend copying to it what only this
     * node's memory holds ({@code node.stop-offload-timeout}; zero = none), and the plugin that provides the factory,
     * as start-up errors name it ({@code PluginInfo}'s form: name, provider class, class path or folder; null or empty
     * = the factory's class and the jar or directory it was loaded from). Thread-safe (immutable).
     */
    public record Storage(StorageBackendFactory factory, PluginContext context, Duration stopOffload, String plugin) {
        public Storage {
            if ((plugin == null || plugin.isEmpty()) && factory != null) {
                plugin = io.tiffin.core.plugin.PluginRegistry.origin(factory.getClass());
            }
        }

        /** The plugin named by the factory's class ({@link io.tiffin.core.plugin.PluginRegistry#origin}). */
        public Storage(StorageBackendFactory factory, PluginContext context, Duration stopOffload) {
            this(factory, context, stopOffload, null);
        }

        /** With {@code node.stop-offload-timeout}'s default, 20 s. */
        public Storage(StorageBackendFactory factory, PluginContext context) {
            this(factory, context, Duration.ofSeconds(20));
        }
    }
}
