package io.tiffin.plugin.allocation;

import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.plugins.testkit.AllocationStrategyContract;

/** Runs the allocation strategy contract on {@link FreeRatioFirstAllocationStrategy}. */
class FreeRatioFirstAllocationStrategyContractTest extends AllocationStrategyContract {
    @Override
    protected AllocationStrategy strategy() {
        return new FreeRatioFirstAllocationStrategy();
    }
}
