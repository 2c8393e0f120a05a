package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The built-in allocation strategies: {@code random} and {@code free-ratio-first} (Mooncake Store's),
 * {@code size-class-aware} (proposed upstream) and {@code hole-fit} (Tiffin's; see
 * docs/ALLOCATION.md).
 *
 * <p>They have no settings: the host refuses any key under {@code plugin.<strategy>.} for them.
 *
 * <p>Thread-safe: stateless; the factories create stateless strategies.
 */
public final class AllocationPlugin implements TiffinPlugin {
    @Override
    public String name() {
        return "allocation";
    }

    @Override
    public List<AllocationStrategyFactory> allocationStrategies() {
        return List.of(
                factory("random", RandomAllocationStrategy::new),
                factory("free-ratio-first", FreeRatioFirstAllocationStrategy::new),
                factory("size-class-aware", SizeClassAwareAllocationStrategy::new),
                factory("hole-fit", HoleFitAllocationStrategy::new));
    }

    private static AllocationStrategyFactory factory(String name, Supplier<AllocationStrategy> supplier) {
        return new AllocationStrategyFactory() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<Set<String>> configKeys() {
                return Optional.of(Set.of());
            }

            @Override
            public AllocationStrategy create(PluginContext context) {
                return supplier.get();
            }
        };
    }
}
