package io.tiffin.bench.jmh;

import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterService;
import io.tiffin.core.master.MasterSettings;
import io.tiffin.core.plugin.PluginRegistry;
import io.tiffin.core.util.Ticker;

/**
 * The masters the JMH benchmarks run in process: a {@link MasterService} with the {@code random} allocation
 * strategy, as a master with default settings places objects.
 *
 * <p>Thread-safe (no state).
 */
final class JmhMasters {
    private JmhMasters() {
    }

    /** A master with {@code settings}, the {@code random} strategy and {@code ticker}'s clock (no failover). */
    static MasterService randomPlacement(PluginRegistry plugins, MasterSettings settings, Ticker ticker) {
        AllocationStrategy strategy = plugins.allocationStrategy("random")
                .create(new PluginContext(TiffinConfig.defaults().withPrefix("plugin."), "master"));
        return new MasterService(settings, strategy, ticker, null);
    }

    /**
     * A master with default settings, the {@code random} strategy and the system clock, with {@code segments}
     * segments of 64 GiB mounted for one node ({@code jmh-seg0}, ...).
     */
    static MasterService withSegments(PluginRegistry plugins, int segments) {
        MasterService master = randomPlacement(plugins, MasterSettings.defaults(), Ticker.SYSTEM);
        for (int i = 0; i < segments; i++) {
            master.mountSegment("jmh-seg" + i, "jmh-node", "127.0.0.1:" + (40000 + i), 64L << 30);
        }
        return master;
    }
}
