package io.tiffin.api.spi.allocation;

import io.tiffin.api.spi.NamedFactory;
import io.tiffin.api.spi.PluginContext;

/**
 * Creates an {@link AllocationStrategy}; selected by {@code allocation.strategy=<name>}. The master
 * creates one instance at start-up and closes nothing: strategies hold no resources.
 * Implementations must be thread-safe (see {@link io.tiffin.api.spi.NamedFactory}).
 */
public interface AllocationStrategyFactory extends NamedFactory {
    AllocationStrategy create(PluginContext context);
}
