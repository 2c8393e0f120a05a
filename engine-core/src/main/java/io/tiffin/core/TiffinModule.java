package io.tiffin.core;

import static io.tiffin.core.config.TiffinConfigKeys.*;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.client.hotcache.HotCacheSettings;
import io.tiffin.core.config.HostPort;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.master.MasterSettings;
import io.tiffin.core.master.TierSettings;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.ExtensionPoint;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.transport.TransportSettings;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Guice wiring: turns a validated {@link TiffinConfig} into the settings of every component and loads
 * the plugins. The injector is created once per process (or per embedded instance); every binding is a
 * singleton.
 *
 * <p>Thread-safe after the injector is built. The {@link PluginRegistry} it provides is owned by the
 * caller that created the injector, which closes it on shutdown.
 */
public final class TiffinModule extends AbstractModule {
    private final TiffinConfig config;

    public TiffinModule(TiffinConfig config) {
        this.config = config;
    }

    @Override
    protected void configure() {
        bind(TiffinConfig.class).toInstance(config);
    }

    /**
     * The plugins directory: {@code plugins.dir}; a relative path is resolved against {@code tiffin.home}
     * (set by the launcher). Without {@code tiffin.home} (embedded use, tests, IDE) only an explicitly
     * configured directory is used, so the default {@code plugins} never picks up an unrelated folder of
     * the working directory; plugins on the class path are found either way. Null means none.
     */
    public static Path pluginsDir(TiffinConfig config) {
        Path dir = Path.of(config.get(PLUGINS_DIR));
        if (dir.isAbsolute()) {
            return dir;
        }
        String home = System.getProperty("tiffin.home");
        if (home != null) {
            return Path.of(home).resolve(dir);
        }
        return "default".equals(config.source(PLUGINS_DIR)) ? null : dir;
    }

    @Provides
    @Singleton
    PluginRegistry plugins(TiffinConfig config) {
        return pluginRegistry(config);
    }

    /**
     * The plugins of {@link #pluginsDir} plus those on the class path. A folder set explicitly that does
     * not exist is an error (a plugin named in the configuration would otherwise be reported as not
     * installed); the default folder may be missing. The caller owns the registry.
     *
     * @throws io.tiffin.api.TiffinException {@code INVALID_PARAMS} for a configured folder that is missing
     */
    public static PluginRegistry pluginRegistry(TiffinConfig config) {
        Path dir = pluginsDir(config);
        if (dir != null && !Files.isDirectory(dir) && !"default".equals(config.source(PLUGINS_DIR))) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "plugins.dir = "
                    + config.get(PLUGINS_DIR) + ": " + dir.toAbsolutePath() + " is not a directory [" + config.source(
                    PLUGINS_DIR) + "] (expected: a folder whose sub-folders each hold one plugin's jars)");
        }
        return dir != null && Files.isDirectory(dir) ? PluginRegistry.load(dir) : PluginRegistry.classPathOnly();
    }

    @Provides
    @Singleton
    AllocationStrategy allocationStrategy(TiffinConfig config, PluginRegistry plugins) {
        String name = config.get(ALLOCATION_STRATEGY);
        var factory = plugins.allocationStrategy(name);
        // a strategy that declares its keys gets plugin.<name>.* (checked); one that does not, all of plugin.*
        java.util.Map<String, String> settings = plugins.declaresSettings(ExtensionPoint.ALLOCATION_STRATEGY, name)
                ? plugins.settings(ExtensionPoint.ALLOCATION_STRATEGY, name, config) : config.withPrefix("plugin.");
        return PluginRegistry.create("allocation.strategy " + name,
                () -> factory.create(new PluginContext(settings, "master")));
    }

    @Provides
    @Singleton
    TransportSettings transportSettings(TiffinConfig config) {
        return new TransportSettings((int) Math.min(Integer.MAX_VALUE, config.get(TRANSPORT_MAX_FRAME_SIZE)),
                credentials(config), config.get(TRANSPORT_HANDSHAKE_TIMEOUT),
                config.get(TRANSPORT_IO_THREADS), config.get(TRANSPORT_NATIVE), config.get(CLIENT_RPC_TIMEOUT),
                tlsSettings(config), serverLimits(config), config.get(TRANSPORT_INSECURE));
    }

    /**
     * The tokens of {@code transport.*-token} and of {@code transport.tokens-file}, and the certificate names of
     * {@code transport.tls.*-names}; connections present the client role's token (a node's: the node role's).
     *
     * @throws io.tiffin.api.TiffinException {@code INVALID_PARAMS} when the tokens file cannot be read or is refused
     */
    public static io.tiffin.core.transport.Credentials credentials(TiffinConfig config) {
        io.tiffin.core.transport.Credentials c = new io.tiffin.core.transport.Credentials(config.get(TRANSPORT_AUTH_TOKEN),
                config.get(TRANSPORT_CLIENT_TOKEN), config.get(TRANSPORT_NODE_TOKEN), config.get(TRANSPORT_ADMIN_TOKEN),
                io.tiffin.core.transport.Role.CLIENT,
                java.util.Map.of(io.tiffin.core.transport.Role.CLIENT, config.get(TRANSPORT_TLS_CLIENT_NAMES),
                        io.tiffin.core.transport.Role.NODE, config.get(TRANSPORT_TLS_NODE_NAMES),
                        io.tiffin.core.transport.Role.ADMIN, config.get(TRANSPORT_TLS_ADMIN_NAMES)));
        Path file = path(config, TRANSPORT_TOKENS_FILE);
        if (file == null) {
            return c;
        }
        java.util.Set<String> inline = new java.util.HashSet<>(); // the slots whose keys are set: not in the file
        java.util.Map.of("auth", c.authToken(), "client", c.clientToken(), "node", c.nodeToken(), "admin",
                c.adminToken()).forEach((slot, token) -> {
                    if (!token.isEmpty()) {
                        inline.add(slot);
                    }
                });
        return c.withTokensFile(io.tiffin.core.transport.TokensFile.load(file, inline,
                config.get(TRANSPORT_TOKENS_RELOAD_INTERVAL)));
    }

    /** {@code transport.tls.*}; file names as given (relative ones against the working directory). */
    public static io.tiffin.core.transport.TlsSettings tlsSettings(TiffinConfig config) {
        return new io.tiffin.core.transport.TlsSettings(config.get(TRANSPORT_TLS_ENABLED), path(config, TRANSPORT_TLS_CERT),
                path(config, TRANSPORT_TLS_KEY), path(config, TRANSPORT_TLS_CA),
                io.tiffin.core.transport.TlsSettings.ClientAuth.parse(config.get(TRANSPORT_TLS_CLIENT_AUTH)),
                io.tiffin.core.transport.TlsSettings.Provider.parse(config.get(TRANSPORT_TLS_PROVIDER)),
                config.get(TRANSPORT_TLS_VERIFY_HOSTNAME),
                config.get(io.tiffin.core.config.TiffinConfigKeys.TRANSPORT_TLS_RELOAD_INTERVAL));
    }

    private static Path path(TiffinConfig config, io.tiffin.core.config.ConfigKey<String> key) {
        String v = config.get(key);
        return v.isEmpty() ? null : Path.of(v);
    }

    /** The limits servers enforce on their peers. */
    static io.tiffin.core.transport.ServerLimits serverLimits(TiffinConfig config) {
        return new io.tiffin.core.transport.ServerLimits((int) (long) config.get(TRANSPORT_MAX_HANDSHAKE_FRAME_SIZE),
                config.get(TRANSPORT_IDLE_TIMEOUT), config.get(TRANSPORT_FRAME_TIMEOUT),
                config.get(TRANSPORT_MAX_CONNECTIONS), config.get(TRANSPORT_MAX_CONNECTIONS_PER_ADDRESS),
                (int) (long) config.get(TRANSPORT_WRITE_BUFFER_LIMIT), config.get(TRANSPORT_MAX_BATCH_KEYS),
                (int) (long) config.get(TRANSPORT_MAX_QUERY_ANSWER_SIZE), config.get(NODE_SSD_READ_MEMORY),
                config.get(NODE_SSD_READ_QUEUE), config.get(MASTER_MAX_HARD_PINNED_SHARE));
    }

    @Provides
    @Singleton
    MasterSettings masterSettings(TiffinConfig config) {
        return new MasterSettings(config.get(MASTER_LEASE_TTL), config.get(MASTER_SOFT_PIN_TTL),
                config.get(MASTER_ALLOW_EVICT_SOFT_PINNED), config.get(MASTER_EVICTION_HIGH_WATERMARK),
                config.get(MASTER_EVICTION_RATIO), config.get(MASTER_EVICTION_INTERVAL), config.get(MASTER_NODE_TTL),
                config.get(MASTER_NODE_CHECK_INTERVAL), config.get(MASTER_PUT_START_DISCARD_TIMEOUT),
                config.get(MASTER_PUT_START_RELEASE_TIMEOUT),
                config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_PUT_TIMEOUT), config.get(MASTER_MAX_KEY_LENGTH),
                config.get(MASTER_MAX_OBJECT_SIZE), new TierSettings(TierSettings.OffloadMode.parse(config.get(OFFLOAD_MODE)),
                config.get(PROMOTION_ADMISSION_THRESHOLD), config.get(PROMOTION_QUEUE_LIMIT),
                config.get(OFFLOAD_QUEUE_LIMIT),
                config.get(io.tiffin.core.config.TiffinConfigKeys.OFFLOAD_AWAY_TTL)),
                config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_RECOVERY_READ_WAIT));
    }

    @Provides
    @Singleton
    MasterServer.Options masterOptions(TiffinConfig config, MasterSettings settings, TransportSettings transport,
                                       AllocationStrategy strategy) {
        return new MasterServer.Options(config.get(MASTER_HOST), config.get(MASTER_PORT), config.get(MASTER_ADMIN_PORT),
                config.get(MASTER_WORKER_THREADS), settings, transport, strategy);
    }

    @Provides
    @Singleton
    io.tiffin.core.master.FailoverSettings failoverSettings(TiffinConfig config) {
        String dir = config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_STATE_DIR);
        return new io.tiffin.core.master.FailoverSettings(
                config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_COORDINATOR),
                dir.isEmpty() ? null : java.nio.file.Path.of(dir),
                config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_ADVERTISE_ADDRESS),
                config.get(io.tiffin.core.config.TiffinConfigKeys.MASTER_COORDINATOR_SESSION_TIMEOUT), true);
    }

    @Provides
    @Singleton
    NodeOptions nodeOptions(TiffinConfig config, TransportSettings transport, PluginRegistry plugins) {
        String master = config.get(MASTER_ADDRESS);
        NodeOptions options = NodeOptions.builder(master)
                .nodeId(config.get(NODE_ID)).host(config.get(NODE_HOST)).port(config.get(NODE_PORT)).segmentSize(config.get(NODE_SEGMENT_SIZE))
                .segmentPrefault(config.get(io.tiffin.core.config.TiffinConfigKeys.NODE_SEGMENT_PREFAULT))
                .pingInterval(config.get(NODE_PING_INTERVAL)).transport(transport.withIoThreads(config.get(NODE_IO_THREADS)))
                .connectTimeout(config.get(CLIENT_CONNECT_TIMEOUT)).build();
        String sharedDir = config.get(NODE_SHARED_MEMORY_DIR);
        if (!sharedDir.isEmpty()) {
            options = options.withSharedMemoryDir(java.nio.file.Path.of(sharedDir));
        }
        String backend = config.get(NODE_STORAGE_BACKEND);
        if (backend.isEmpty()) {
            warnAboutKeysWithoutBackend(config, plugins);
            return options;
        }
        String path = config.get(NODE_STORAGE_PATH);
        if (path.isEmpty()) {
            throw new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, "node.storage-backend = "
                    + backend + " needs node.storage-path (expected: the directory of the node's SSD tier)");
        }
        warnAboutOthersKeys(config, ExtensionPoint.STORAGE_BACKEND, backend, plugins);
        java.util.Map<String, String> props = new java.util.HashMap<>(
                plugins.settings(ExtensionPoint.STORAGE_BACKEND, backend, config));
        props.put("path", path);
        return options.withStorage(new NodeOptions.Storage(plugins.storageBackend(backend),
                new io.tiffin.api.spi.PluginContext(props, config.get(NODE_ID)),
                config.get(io.tiffin.core.config.TiffinConfigKeys.NODE_STOP_OFFLOAD_TIMEOUT),
                plugins.providerOf(ExtensionPoint.STORAGE_BACKEND, backend).toString()),
                config.get(NODE_TASK_POLL_INTERVAL));
    }

    /**
     * Keys under {@code storage.*} while {@code node.storage-backend} is empty reach no plugin: the node runs without
     * an SSD tier. Said once at start-up, naming the keys (and where they were set) and how to select a backend, as
     * {@link #warnAboutOthersKeys} does for another backend's keys; not refused, since a configuration file may be
     * shared by nodes with and without an SSD tier.
     */
    private static void warnAboutKeysWithoutBackend(TiffinConfig config, PluginRegistry plugins) {
        ExtensionPoint<?> point = ExtensionPoint.STORAGE_BACKEND;
        java.util.Set<String> unused = new java.util.TreeSet<>();
        config.withPrefix(point.settingsRoot()).keySet().forEach(k -> unused.add(point.settingsRoot() + k));
        if (!unused.isEmpty()) {
            org.apache.logging.log4j.LogManager.getLogger(TiffinModule.class).warn("Configuration keys {} are not"
                    + " read: no storage backend is configured ({} is empty), so this node has no SSD tier; to use"
                    + " them, set {} to the backend they are for (installed: {}) and {} to its directory, or remove"
                    + " them", withSources(config, unused), point.configKey(), point.configKey(), plugins.names(point),
                    NODE_STORAGE_PATH.name());
        }
    }

    /** {@code keys}, each followed by where it was set ({@code key [source]}), for messages. */
    private static java.util.List<String> withSources(TiffinConfig config, java.util.Collection<String> keys) {
        return keys.stream().map(k -> k + config.openSource(k).map(src -> " [" + src + "]").orElse("")).toList();
    }

    /**
     * Keys under {@code storage.<other>.*} (or {@code hotcache.policy.<other>.*}) reach no plugin: a
     * misspelled name (or a config file shared with processes that use another one). Said once at
     * start-up, naming the keys and the plugin that is used, since no plugin sees them to reject them.
     */
    private static void warnAboutOthersKeys(TiffinConfig config, ExtensionPoint<?> point, String name,
                                            PluginRegistry plugins) {
        String root = point.settingsRoot();
        java.util.Set<String> unused = keysOthersRead(config, root, name);
        if (!unused.isEmpty()) {
            org.apache.logging.log4j.LogManager.getLogger(TiffinModule.class).warn("Configuration keys {} are not"
                    + " read: {} = {} reads {}{}.* only (installed: {}); check the spelling of the name in those"
                    + " keys, or set {} to the {} they are for", withSources(config, unused), point.configKey(), name,
                    root, name, plugins.names(point), point.configKey(), point.description());
        }
    }

    /** The keys under {@code root} (an open prefix) that are not under {@code root + name + "."}, sorted. */
    static java.util.Set<String> keysOthersRead(TiffinConfig config, String root, String name) {
        java.util.Set<String> unused = new java.util.TreeSet<>();
        for (String key : config.withPrefix(root).keySet()) {
            if (!key.startsWith(name + ".")) {
                unused.add(root + key);
            }
        }
        return unused;
    }

    @Provides
    @Singleton
    TiffinClient.Options clientOptions(TiffinConfig config, TransportSettings transport,
                                       com.google.inject.Provider<PluginRegistry> pluginsWhenNeeded) {
        HotCacheSettings hotCache = null;
        String policy = config.get(HOTCACHE_POLICY);
        java.util.Map<String, String> policySettings = java.util.Map.of();
        // plugins are loaded only for a hot cache (or its keys): a client without one, e.g. `tiffin get`, starts faster
        PluginRegistry plugins = null;
        if (config.get(HOTCACHE_SIZE) > 0 || !config.withPrefix(ExtensionPoint.HOT_CACHE_POLICY.settingsRoot())
                .isEmpty()) {
            plugins = pluginsWhenNeeded.get();
            // checked whenever there are policy keys, so a typo fails the same with the cache off
            warnAboutOthersKeys(config, ExtensionPoint.HOT_CACHE_POLICY, policy, plugins);
            policySettings = plugins.settings(ExtensionPoint.HOT_CACHE_POLICY, policy, config);
        }
        if (config.get(HOTCACHE_SIZE) > 0) {
            hotCache = new HotCacheSettings(config.get(HOTCACHE_SIZE), config.get(HOTCACHE_BLOCK_SIZE),
                    config.get(HOTCACHE_MAX_ENTRY_SHARE), config.get(HOTCACHE_RING_SIZE),
                    plugins.hotCachePolicy(policy), policySettings);
        }
        return TiffinClient.Options.builder(config.get(MASTER_ADDRESS))
                .failoverTimeout(config.get(io.tiffin.core.config.TiffinConfigKeys.CLIENT_FAILOVER_TIMEOUT))
                .transport(transport.withHandshakeTimeout(config.get(CLIENT_CONNECT_TIMEOUT)))
                .sliceSize(config.get(CLIENT_TRANSFER_SLICE_SIZE))
                .localMemcpy(config.get(CLIENT_LOCAL_MEMCPY))
                .verifyChecksums(config.get(io.tiffin.core.config.TiffinConfigKeys.CLIENT_VERIFY_CHECKSUMS))
                .hotCache(hotCache)
                .sharedMemory(config.get(CLIENT_SHARED_MEMORY))
                .locationCache(new LocationCache.Settings(config.get(CLIENT_LOCATION_CACHE_TTL),
                        config.get(CLIENT_LOCATION_CACHE_SIZE)))
                .readHints(config.get(CLIENT_READ_HINT_CACHE_SIZE))
                .build();
    }
}
