package io.tiffin.core;

import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Stage;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.config.TiffinConfigKeys;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import io.tiffin.core.plugin.PluginRegistry;

/**
 * An embedded Tiffin: master, one node and a client in this JVM (the "standalone" mode), for tests and
 * applications that want a store without running servers.
 *
 * <pre>{@code
 * try (Tiffin tiffin = Tiffin.embedded(TiffinConfig.defaults())) {
 *     KvStore store = tiffin.client();
 *     store.put("k", bytes);
 * }
 * }</pre>
 *
 * <p>Thread-safe. Owns the servers, client and plugins it starts; {@link #close()} stops them in
 * reverse order.
 */
public final class Tiffin implements AutoCloseable {
    private final PluginRegistry plugins;
    private final MasterServer master;
    private final NodeServer node;
    private final TiffinClient client;

    private Tiffin(PluginRegistry plugins, MasterServer master, NodeServer node, TiffinClient client) {
        this.plugins = plugins;
        this.master = master;
        this.node = node;
        this.client = client;
    }

    /**
     * Creates the injector for a validated config. A {@link io.tiffin.api.TiffinException} raised while
     * wiring (for example an unknown plugin name) is rethrown as is, without Guice's wrapping, so the
     * user sees the message that says what to fix.
     */
    public static Injector injector(TiffinConfig config) {
        return unwrapped(() -> Guice.createInjector(Stage.PRODUCTION, new TiffinModule(config)));
    }

    /**
     * As {@link #injector}, but creating only what is asked of it: a process of one role (a master) builds no other
     * role's settings, so a configuration file shared with the nodes (their {@code node.storage-backend}, each node's
     * own {@code node.storage-path} given on its command line) neither stops it nor fills its log with warnings.
     */
    public static Injector lazyInjector(TiffinConfig config) {
        return unwrapped(() -> Guice.createInjector(Stage.DEVELOPMENT, new TiffinModule(config)));
    }

    /**
     * Runs Guice wiring ({@code createInjector}, {@code getInstance}) and rethrows what went wrong inside
     * it without Guice's wrapping: a {@link io.tiffin.api.TiffinException} as is; an {@link
     * IllegalArgumentException} (a plugin refusing its settings, e.g. a storage backend without a path)
     * as {@code INVALID_PARAMS} with its message — what the user has to fix, not a page of stack.
     */
    public static <T> T unwrapped(java.util.function.Supplier<T> wiring) {
        try {
            return wiring.get();
        } catch (com.google.inject.CreationException e) {
            throw unwrap(e, e.getErrorMessages());
        } catch (com.google.inject.ProvisionException e) {
            throw unwrap(e, e.getErrorMessages());
        }
    }

    private static RuntimeException unwrap(RuntimeException e, java.util.Collection<com.google.inject.spi.Message> messages) {
        for (com.google.inject.spi.Message m : messages) {
            for (Throwable t = m.getCause(); t != null; t = t.getCause()) {
                if (t instanceof io.tiffin.api.TiffinException te) {
                    return te;
                }
            }
        }
        for (com.google.inject.spi.Message m : messages) {
            for (Throwable t = m.getCause(); t != null; t = t.getCause()) {
                if (t instanceof IllegalArgumentException iae && iae.getMessage() != null) {
                    return new io.tiffin.api.TiffinException(io.tiffin.api.ErrorCode.INVALID_PARAMS, iae.getMessage(), iae);
                }
            }
        }
        return e;
    }

    /**
     * Starts master, node and client. The node and client connect to the master actually bound (so
     * {@code master.port=0} works); {@code master.address} is ignored here.
     */
    public static Tiffin embedded(TiffinConfig config) {
        Injector injector = injector(config);
        PluginRegistry plugins = injector.getInstance(PluginRegistry.class);
        MasterServer master = null;
        NodeServer node = null;
        try {
            master = MasterServer.start(injector.getInstance(MasterServer.Options.class));
            String address = config.get(TiffinConfigKeys.MASTER_HOST) + ":" + master.address().getPort();
            NodeOptions n = injector.getInstance(NodeOptions.class);
            node = NodeServer.start(n.withMasterAddress(address));
            TiffinClient.Options c = injector.getInstance(TiffinClient.Options.class);
            TiffinClient client = TiffinClient.connect(c.withMasterAddress(address));
            return new Tiffin(plugins, master, node, client);
        } catch (RuntimeException e) {
            if (node != null) {
                node.close();
            }
            if (master != null) {
                master.close();
            }
            plugins.close();
            throw e;
        }
    }

    public TiffinClient client() {
        return client;
    }

    public MasterServer master() {
        return master;
    }

    public NodeServer node() {
        return node;
    }

    @Override
    public void close() {
        client.close();
        node.close();
        master.close();
        plugins.close();
    }
}
