package io.tiffin.api.spi;

import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import java.util.List;

/**
 * The single entry point of a Tiffin plugin, found with {@link java.util.ServiceLoader}: a plugin jar
 * lists its implementation in {@code META-INF/services/io.tiffin.api.spi.TiffinPlugin}.
 *
 * <p>Each method returns the factories the plugin contributes for one extension point; the defaults
 * contribute nothing, so a plugin overrides only what it provides. Factories are chosen by
 * {@link NamedFactory#name()} from configuration (for example {@code allocation.strategy=random}),
 * never by class name. Two factories with the same name for the same extension point stop start-up.
 *
 * <p>A plugin loaded from a {@code plugins/<name>/} folder runs in its own class loader that sees only
 * the JDK and {@code engine-api}. The host calls these methods once, at start-up, on one thread;
 * implementations need not be thread-safe. The plugin must have a public no-argument constructor.
 */
public interface TiffinPlugin {

    /** A short name for logs and error messages; defaults to the class name. */
    default String name() {
        return getClass().getName();
    }

    default List<AllocationStrategyFactory> allocationStrategies() {
        return List.of();
    }

    default List<StorageBackendFactory> storageBackends() {
        return List.of();
    }

    default List<HotCachePolicyFactory> hotCachePolicies() {
        return List.of();
    }
}
