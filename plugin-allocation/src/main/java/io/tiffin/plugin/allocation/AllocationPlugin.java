package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import java.util.List;
import java.util.function.Supplier;

/** The built-in allocation strategies. */
public final class AllocationPlugin implements TiffinPlugin {
    @Override
    public String name() {
        return "allocation";
    }

    @Override
    public List<AllocationStrategyFactory> allocationStrategies() {
        return List.of(factory("random", RandomAllocationStrategy::new));
    }

    private static AllocationStrategyFactory factory(String name, Supplier<AllocationStrategy> supplier) {
        return new AllocationStrategyFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public AllocationStrategy create(PluginContext context) {
                return supplier.get();
            }
        };
    }
}
