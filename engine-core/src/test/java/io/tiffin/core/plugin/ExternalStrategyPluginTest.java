package io.tiffin.core.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.Guice;
import com.google.inject.Injector;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.TiffinModule;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.plugins.testkit.AllocationStrategyContract;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A strategy written against engine-api alone, as docs/PLUGINS.md describes, compiled here from source
 * (so it is not on the core's class path), dropped into {@code plugins/<name>/}, loaded, selected by
 * {@code allocation.strategy} and checked with the plugin test kit's contract.
 */
class ExternalStrategyPluginTest {
    private static final String CLASS_NAME = "com.example.tiny.TinyAllocationPlugin";
    private static final String STRATEGY = "tiny-first-fit";

    @TempDir
    Path work;

    /** A tiny first-fit strategy: preferred segments first, then every segment in order, OK ones only. */
    private static String source(boolean checkStatus) {
        return """
                package com.example.tiny;

                import io.tiffin.api.spi.PluginContext;
                import io.tiffin.api.spi.TiffinPlugin;
                import io.tiffin.api.spi.allocation.AllocationStrategy;
                import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
                import io.tiffin.api.spi.allocation.SegmentStatus;
                import io.tiffin.api.spi.allocation.SegmentView;
                import java.util.ArrayList;
                import java.util.List;

                /** First fit, preferred segments first. Thread-safe: stateless. */
                public final class TinyAllocationPlugin implements TiffinPlugin {
                    @Override
                    public List<AllocationStrategyFactory> allocationStrategies() {
                        return List.of(new AllocationStrategyFactory() {
                            @Override
                            public String name() {
                                return "%s";
                            }

                            @Override
                            public AllocationStrategy create(PluginContext context) {
                                return (request, segments, sink) -> {
                                    List<SegmentView> order = new ArrayList<>();
                                    for (String name : request.preferredSegments()) {
                                        for (SegmentView s : segments) {
                                            if (s.name().equals(name) && !order.contains(s)) {
                                                order.add(s);
                                            }
                                        }
                                    }
                                    for (SegmentView s : segments) {
                                        if (!order.contains(s)) {
                                            order.add(s);
                                        }
                                    }
                                    for (SegmentView s : order) {
                                        if (sink.remaining() == 0) {
                                            return;
                                        }
                                        if ((%s || s.status() == SegmentStatus.OK)
                                                && s.largestFreeRegion() >= request.size()) {
                                            sink.tryPlace(s);
                                        }
                                    }
                                };
                            }
                        });
                    }
                }
                """.formatted(STRATEGY, checkStatus ? "false" : "true");
    }

    private Path install(boolean checkStatus) throws IOException {
        Path plugins = work.resolve("plugins");
        Path classes = TestPluginJars.compile(work, Map.of(CLASS_NAME, source(checkStatus)));
        TestPluginJars.jar(plugins.resolve("tiny").resolve("tiny-allocation.jar"), classes, CLASS_NAME);
        return plugins;
    }

    @Test
    void strategyFromPluginFolderIsSelectedByNameAndPassesTheContract() throws IOException {
        Path plugins = install(true);
        assertThatThrownBy(() -> Class.forName(CLASS_NAME))
                .as("the tiny plugin must not be on the core's class path").isInstanceOf(ClassNotFoundException.class);

        TiffinConfig config = TiffinConfig.builder()
                .set("plugins.dir", plugins.toString())
                .set("allocation.strategy", STRATEGY)
                .build();
        Injector injector = Guice.createInjector(new TiffinModule(config));
        try (PluginRegistry registry = injector.getInstance(PluginRegistry.class)) {
            assertThat(registry.names(ExtensionPoint.ALLOCATION_STRATEGY))
                    .contains("random", "free-ratio-first", "size-class-aware", "hole-fit", STRATEGY);
            assertThat(registry.providerOf(ExtensionPoint.ALLOCATION_STRATEGY, STRATEGY).toString())
                    .contains(plugins.resolve("tiny").toString());

            AllocationStrategy selected = injector.getInstance(AllocationStrategy.class);
            assertThat(selected.getClass().getName()).startsWith("com.example.tiny.");
            assertThat(selected.getClass().getClassLoader()).isNotSameAs(getClass().getClassLoader());

            AllocationStrategyContract.verify(selected);
        }
    }

    @Test
    void contractCatchesAnExternalStrategyThatOffersDrainingSegments() throws IOException {
        Path plugins = install(false);
        try (PluginRegistry registry = PluginRegistry.load(plugins)) {
            AllocationStrategy broken = registry.allocationStrategy(STRATEGY).create(PluginContext.empty());
            assertThatThrownBy(() -> AllocationStrategyContract.verify(broken))
                    .isInstanceOf(AssertionError.class)
                    .hasMessageContaining("neverOffersDrainingOrUnmountingSegments");
        }
    }
}
