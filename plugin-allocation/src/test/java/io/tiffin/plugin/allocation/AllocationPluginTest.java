package io.tiffin.plugin.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import org.junit.jupiter.api.Test;

/** The plugin offers the four strategies under their configuration names. */
class AllocationPluginTest {
    @Test
    void offersTheFourStrategiesByName() {
        AllocationPlugin plugin = new AllocationPlugin();
        assertThat(plugin.allocationStrategies()).extracting(AllocationStrategyFactory::name)
                .containsExactly("random", "free-ratio-first", "size-class-aware", "hole-fit");
        for (AllocationStrategyFactory f : plugin.allocationStrategies()) {
            assertThat(f.create(PluginContext.empty())).as("strategy %s", f.name()).isNotNull();
        }
    }
}
