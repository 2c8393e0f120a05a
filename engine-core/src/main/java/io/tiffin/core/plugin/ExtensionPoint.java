package io.tiffin.core.plugin;

import io.tiffin.api.spi.NamedFactory;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import java.util.List;
import java.util.function.Function;

/**
 * A place where plugins contribute named factories: allocation strategies, storage backends and hot
 * cache policies.
 *
 * <p>Thread-safe (immutable constants).
 *
 * @param <F> the factory type
 */
public final class ExtensionPoint<F extends NamedFactory> {
    public static final ExtensionPoint<AllocationStrategyFactory> ALLOCATION_STRATEGY = new ExtensionPoint<>(
            "allocation.strategy", "allocation strategy", "plugin.", AllocationStrategyFactory.class,
            TiffinPlugin::allocationStrategies);
    public static final ExtensionPoint<StorageBackendFactory> STORAGE_BACKEND = new ExtensionPoint<>(
            "node.storage-backend", "storage backend", "storage.", StorageBackendFactory.class,
            TiffinPlugin::storageBackends);
    public static final ExtensionPoint<HotCachePolicyFactory> HOT_CACHE_POLICY = new ExtensionPoint<>(
            "hotcache.policy", "hot cache policy", "hotcache.policy.", HotCachePolicyFactory.class,
            TiffinPlugin::hotCachePolicies);

    private static final List<ExtensionPoint<?>> ALL = List.of(ALLOCATION_STRATEGY, STORAGE_BACKEND,
            HOT_CACHE_POLICY);

    private final String configKey;
    private final String description;
    private final String settingsRoot;
    private final Class<F> factoryType;
    private final Function<TiffinPlugin, List<F>> contributions;

    private ExtensionPoint(String configKey, String description, String settingsRoot, Class<F> factoryType,
            Function<TiffinPlugin, List<F>> contributions) {
        this.configKey = configKey;
        this.description = description;
        this.settingsRoot = settingsRoot;
        this.factoryType = factoryType;
        this.contributions = contributions;
    }

    /** All extension points. */
    public static List<ExtensionPoint<?>> all() {
        return ALL;
    }

    /** The configuration key that selects a factory, e.g. {@code allocation.strategy}. */
    public String configKey() {
        return configKey;
    }

    /** What one factory's product is called in messages, e.g. {@code allocation strategy}. */
    public String description() {
        return description;
    }

    /** The open configuration prefix under which this point's factories find their settings, e.g. {@code storage.}. */
    public String settingsRoot() {
        return settingsRoot;
    }

    /**
     * The prefix of the settings of the factory {@code name}: {@code plugin.<name>.},
     * {@code storage.<name>.} or {@code hotcache.policy.<name>.}.
     */
    public String settingsPrefix(String name) {
        return settingsRoot + name + ".";
    }

    /** The factory interface. */
    public Class<F> factoryType() {
        return factoryType;
    }

    /** The factories {@code plugin} contributes here (may be null if the plugin misbehaves). */
    List<F> contributionsOf(TiffinPlugin plugin) {
        return contributions.apply(plugin);
    }

    @Override
    public String toString() {
        return configKey;
    }
}
