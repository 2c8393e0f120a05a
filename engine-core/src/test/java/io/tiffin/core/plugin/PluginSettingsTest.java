package io.tiffin.core.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.Guice;
import com.google.inject.Injector;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.core.TiffinModule;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plugin settings: the keys under a plugin's prefix reach it with the prefix removed, and a plugin that
 * declares its keys ({@code NamedFactory.configKeys()}) has every other key under its prefix refused at
 * start-up, naming the key, where it was set and the nearest declared key.
 */
class PluginSettingsTest {
    private static final String CLASS_NAME = "com.example.settings.SettingsPlugin";

    @TempDir
    Path work;

    @Test
    void builtInPoliciesBackendsAndStrategiesHaveTheirKeysChecked() {
        try (PluginRegistry registry = PluginRegistry.classPathOnly()) {
            TiffinConfig ok = TiffinConfig.builder().set("hotcache.policy.s3-fifo.small-share", "0.25")
                    .set("storage.bucket.capacity", "1GiB").set("storage.bucket.eviction", "lru").build();
            assertThat(registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "s3-fifo", ok))
                    .containsExactly(Map.entry("small-share", "0.25"));
            assertThat(registry.settings(ExtensionPoint.STORAGE_BACKEND, "bucket", ok))
                    .containsOnly(Map.entry("capacity", "1GiB"), Map.entry("eviction", "lru"));
            assertThat(registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "lru", ok)).isEmpty();

            TiffinConfig typo = TiffinConfig.builder().set("hotcache.policy.s3-fifo.smal-share", "0.25", "flag --x")
                    .build();
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "s3-fifo", typo))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("unknown key hotcache.policy.s3-fifo.smal-share [flag --x]")
                    .hasMessageContaining("did you mean hotcache.policy.s3-fifo.small-share?")
                    .hasMessageContaining("hot cache policy s3-fifo of plugin hotcache reads"
                            + " hotcache.policy.s3-fifo.small-share");

            TiffinConfig twoBad = TiffinConfig.builder().set("storage.bucket.capacty", "1GiB")
                    .set("storage.bucket.path", "/data").build();
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.STORAGE_BACKEND, "bucket", twoBad))
                    .isInstanceOf(TiffinException.class)
                    .hasMessageContaining("unknown keys storage.bucket.capacty")
                    .hasMessageContaining("did you mean storage.bucket.capacity?")
                    .hasMessageContaining("storage.bucket.path")
                    .hasMessageContaining("expected: node.storage-path");

            TiffinConfig strategyKey = TiffinConfig.builder().set("plugin.random.seed", "7").build();
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.ALLOCATION_STRATEGY, "random", strategyKey))
                    .isInstanceOf(TiffinException.class)
                    .hasMessageContaining("unknown key plugin.random.seed")
                    .hasMessageContaining("allocation strategy random of plugin allocation reads none");
            // keys of other plugins under the same root are not this plugin's business
            assertThat(registry.settings(ExtensionPoint.ALLOCATION_STRATEGY, "random", TiffinConfig.builder()
                    .set("plugin.other.seed", "7").build())).isEmpty();
        }
    }

    @Test
    void anUndeclaredNameIsReportedAsNotInstalled() {
        try (PluginRegistry registry = PluginRegistry.classPathOnly()) {
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "arc", TiffinConfig.defaults()))
                    .isInstanceOf(TiffinException.class)
                    .hasMessageContaining("hotcache.policy = arc: no such hot cache policy");
        }
    }

    @Test
    void hotCachePolicySettingsReachTheClientOptions() {
        TiffinConfig config = TiffinConfig.builder().set("hotcache.size", "16MiB").set("hotcache.policy", "w-tinylfu")
                .set("hotcache.policy.w-tinylfu.window-share", "0.05").build();
        TiffinClient.Options options = Guice.createInjector(new TiffinModule(config))
                .getInstance(TiffinClient.Options.class);
        assertThat(options.hotCache().policySettings()).containsExactly(Map.entry("window-share", "0.05"));

        TiffinConfig typo = TiffinConfig.builder().set("hotcache.size", "16MiB").set("hotcache.policy", "w-tinylfu")
                .set("hotcache.policy.w-tinylfu.windowshare", "0.05").build();
        assertThatThrownBy(() -> Guice.createInjector(new TiffinModule(typo)).getInstance(TiffinClient.Options.class))
                .hasMessageContaining("unknown key hotcache.policy.w-tinylfu.windowshare")
                .hasMessageContaining("did you mean hotcache.policy.w-tinylfu.window-share?");
    }

    @Test
    void policyKeysAreCheckedWithTheHotCacheOffToo() {
        TiffinConfig typo = TiffinConfig.builder().set("hotcache.policy", "s3-fifo")
                .set("hotcache.policy.s3-fifo.small-shar", "0.2").build();
        assertThatThrownBy(() -> Guice.createInjector(new TiffinModule(typo)).getInstance(TiffinClient.Options.class))
                .hasMessageContaining("unknown key hotcache.policy.s3-fifo.small-shar");
        // no policy keys, cache off: the policy need not even be installed
        TiffinConfig none = TiffinConfig.builder().set("hotcache.policy", "not-installed").build();
        assertThat(Guice.createInjector(new TiffinModule(none)).getInstance(TiffinClient.Options.class).hotCache())
                .isNull();
    }

    @Test
    void aPolicyWrittenBeforeSettingsReadsNoneAndOneThatReadsThemGetsThemUnchecked() throws IOException {
        Path plugins = work.resolve("policies");
        String className = "com.example.policies.PoliciesPlugin";
        Path classes = TestPluginJars.compile(work, Map.of(className, """
                package com.example.policies;

                import io.tiffin.api.spi.PluginContext;
                import io.tiffin.api.spi.TiffinPlugin;
                import io.tiffin.api.spi.hotcache.HotCachePolicy;
                import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
                import java.util.List;

                public final class PoliciesPlugin implements TiffinPlugin {
                    @Override
                    public String name() {
                        return "policies";
                    }

                    @Override
                    public List<HotCachePolicyFactory> hotCachePolicies() {
                        return List.of(new HotCachePolicyFactory() {
                            @Override
                            public String name() {
                                return "old-policy";
                            }

                            @Override
                            public HotCachePolicy create(long capacityBlocks) {
                                throw new UnsupportedOperationException();
                            }
                        }, new HotCachePolicyFactory() {
                            @Override
                            public String name() {
                                return "open-policy";
                            }

                            @Override
                            public HotCachePolicy create(long capacityBlocks) {
                                throw new UnsupportedOperationException();
                            }

                            @Override
                            public HotCachePolicy create(long capacityBlocks, PluginContext context) {
                                throw new UnsupportedOperationException();
                            }
                        });
                    }
                }
                """));
        TestPluginJars.jar(plugins.resolve("policies").resolve("policies.jar"), classes, className);
        try (PluginRegistry registry = PluginRegistry.load(plugins)) {
            TiffinConfig config = TiffinConfig.builder().set("hotcache.policy.old-policy.size", "1")
                    .set("hotcache.policy.open-policy.size", "2").build();
            assertThat(registry.declaresSettings(ExtensionPoint.HOT_CACHE_POLICY, "old-policy"))
                    .as("create(long) only: it cannot read settings").isTrue();
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "old-policy", config))
                    .hasMessageContaining("unknown key hotcache.policy.old-policy.size")
                    .hasMessageContaining("hot cache policy old-policy of plugin policies reads none");
            assertThat(registry.declaresSettings(ExtensionPoint.HOT_CACHE_POLICY, "open-policy")).isFalse();
            assertThat(registry.settings(ExtensionPoint.HOT_CACHE_POLICY, "open-policy", config))
                    .containsExactly(Map.entry("size", "2"));
        }
    }

    @Test
    void aStrategyThatDeclaresItsKeysGetsItsOwnAndOthersAreRefused() throws IOException {
        Path plugins = install();
        TiffinConfig config = TiffinConfig.builder().set("plugins.dir", plugins.toString())
                .set("allocation.strategy", "declared-fit").set("plugin.declared-fit.fan-out", "3")
                .set("plugin.open-fit.anything", "1").build();
        Injector injector = Guice.createInjector(new TiffinModule(config));
        try (PluginRegistry registry = injector.getInstance(PluginRegistry.class)) {
            assertThat(registry.declaresSettings(ExtensionPoint.ALLOCATION_STRATEGY, "declared-fit")).isTrue();
            assertThat(injector.getInstance(AllocationStrategy.class).toString()).isEqualTo("{fan-out=3}");
        }

        TiffinConfig typo = TiffinConfig.builder().set("plugins.dir", plugins.toString())
                .set("allocation.strategy", "declared-fit").set("plugin.declared-fit.fan-uot", "3").build();
        Injector typoInjector = Guice.createInjector(new TiffinModule(typo));
        try (PluginRegistry registry = typoInjector.getInstance(PluginRegistry.class)) {
            assertThatThrownBy(() -> typoInjector.getInstance(AllocationStrategy.class))
                    .hasMessageContaining("unknown key plugin.declared-fit.fan-uot")
                    .hasMessageContaining("did you mean plugin.declared-fit.fan-out?")
                    .hasMessageContaining("of plugin settings-plugin reads plugin.declared-fit.fan-out");
        }
    }

    @Test
    void aStrategyThatDeclaresNothingGetsEveryPluginKeyUnchecked() throws IOException {
        Path plugins = install();
        TiffinConfig config = TiffinConfig.builder().set("plugins.dir", plugins.toString())
                .set("allocation.strategy", "open-fit").set("plugin.open-fit.anything", "1")
                .set("plugin.x.y", "2").build();
        Injector injector = Guice.createInjector(new TiffinModule(config));
        try (PluginRegistry registry = injector.getInstance(PluginRegistry.class)) {
            assertThat(registry.declaresSettings(ExtensionPoint.ALLOCATION_STRATEGY, "open-fit")).isFalse();
            assertThat(registry.settings(ExtensionPoint.ALLOCATION_STRATEGY, "open-fit", config))
                    .containsExactly(Map.entry("anything", "1"));
            // as before declared keys existed: all of plugin.*, prefix removed
            assertThat(injector.getInstance(AllocationStrategy.class).toString())
                    .isEqualTo("{open-fit.anything=1, x.y=2}");
        }
    }

    @Test
    void aFactoryWhoseKeyListThrowsIsReportedByName() throws IOException {
        Path plugins = install();
        try (PluginRegistry registry = PluginRegistry.load(plugins)) {
            assertThatThrownBy(() -> registry.settings(ExtensionPoint.ALLOCATION_STRATEGY, "broken-fit",
                    TiffinConfig.defaults()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("the allocation strategy broken-fit could not list its configuration keys")
                    .hasMessageContaining("no list today");
        }
    }

    /** A plugin with three strategies: one declaring {@code fan-out}, one declaring nothing, one whose list throws. */
    private Path install() throws IOException {
        Path plugins = work.resolve("plugins");
        Path classes = TestPluginJars.compile(work, Map.of(CLASS_NAME, """
                package com.example.settings;

                import io.tiffin.api.spi.PluginContext;
                import io.tiffin.api.spi.TiffinPlugin;
                import io.tiffin.api.spi.allocation.AllocationRequest;
                import io.tiffin.api.spi.allocation.AllocationStrategy;
                import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
                import io.tiffin.api.spi.allocation.ReplicaSink;
                import io.tiffin.api.spi.allocation.SegmentView;
                import java.util.List;
                import java.util.Optional;
                import java.util.Set;
                import java.util.TreeMap;

                public final class SettingsPlugin implements TiffinPlugin {
                    @Override
                    public String name() {
                        return "settings-plugin";
                    }

                    @Override
                    public List<AllocationStrategyFactory> allocationStrategies() {
                        return List.of(factory("declared-fit", Optional.of(Set.of("fan-out"))),
                                factory("open-fit", Optional.empty()), factory("broken-fit", null));
                    }

                    private static AllocationStrategyFactory factory(String name, Optional<Set<String>> keys) {
                        return new AllocationStrategyFactory() {
                            @Override
                            public String name() {
                                return name;
                            }

                            @Override
                            public Optional<Set<String>> configKeys() {
                                if (keys == null) {
                                    throw new IllegalStateException("no list today");
                                }
                                return keys;
                            }

                            @Override
                            public AllocationStrategy create(PluginContext context) {
                                String seen = new TreeMap<>(context.properties()).toString();
                                return new AllocationStrategy() {
                                    @Override
                                    public void place(AllocationRequest request, List<? extends SegmentView> segments,
                                                         ReplicaSink sink) {
                                    }

                                    @Override
                                    public String toString() {
                                        return seen;
                                    }
                                };
                            }
                        };
                    }
                }
                """));
        TestPluginJars.jar(plugins.resolve("settings").resolve("settings.jar"), classes, CLASS_NAME);
        return plugins;
    }
}
