package io.tiffin.core.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KvStore;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.PluginContext;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.io.IOException;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Plugin discovery on the class path and in plugin folders, isolation and error reporting. */
class PluginRegistryTest {
    @TempDir
    Path work;

    private Path pluginsDir() throws IOException {
        return Files.createDirectories(work.resolve("plugins"));
    }

    /** A segment snapshot for placement tests. Thread-safe (immutable). */
    private record TestSegment(String name, long capacity, long used, SegmentStatus status) implements SegmentView {
        @Override
        public String nodeId() {
            return "node-" + name;
        }

        @Override
        public long largestFreeRegion() {
            return capacity - used;
        }

        @Override
        public int binCount() {
            return 1;
        }

        @Override
        public int freeRegionsInBin(int bin) {
            return 1;
        }

        @Override
        public long binSize(int bin) {
            return 0;
        }
    }

    /** A sink that records placements and enforces the sink invariants. Not thread-safe: one placement call. */
    private static final class RecordingSink implements ReplicaSink {
        private final long size;
        private final List<String> placed = new ArrayList<>();
        private int remaining;
        private int attempts;

        RecordingSink(AllocationRequest request) {
            this.size = request.size();
            this.remaining = request.replicas();
        }

        @Override
        public boolean tryPlace(SegmentView segment) {
            attempts++;
            if (remaining == 0 || segment.status() != SegmentStatus.OK || placed.contains(segment.name())
                    || segment.largestFreeRegion() < size) {
                return false;
            }
            placed.add(segment.name());
            remaining--;
            return true;
        }

        @Override
        public int remaining() {
            return remaining;
        }

        @Override
        public int attempts() {
            return attempts;
        }

        @Override
        public RandomGenerator random() {
            return RandomGenerator.of("L64X128MixRandom");
        }
    }

    private static List<String> place(AllocationStrategy strategy, AllocationRequest request,
            List<TestSegment> segments) {
        RecordingSink sink = new RecordingSink(request);
        strategy.place(request, segments, sink);
        return sink.placed;
    }

    private static TiffinException loadError(Path dir) {
        try (PluginRegistry r = PluginRegistry.load(dir)) {
            throw new AssertionError("expected a load error, got " + r.plugins());
        } catch (TiffinException e) {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            return e;
        }
    }

    @Test
    void classPathDiscoveryFindsTheBuiltInRandomStrategy() {
        try (PluginRegistry r = PluginRegistry.classPathOnly()) {
            assertThat(r.names(ExtensionPoint.ALLOCATION_STRATEGY)).contains("random");
            AllocationStrategyFactory f = r.allocationStrategy("random");
            assertThat(f.name()).isEqualTo("random");
            assertThat(r.providerOf(ExtensionPoint.ALLOCATION_STRATEGY, "random").source()).startsWith("class path (");
            List<TestSegment> segments = List.of(new TestSegment("a", 1000, 0, SegmentStatus.OK),
                    new TestSegment("b", 1000, 0, SegmentStatus.OK), new TestSegment("c", 1000, 0, SegmentStatus.OK));
            assertThat(place(f.create(PluginContext.empty()), AllocationRequest.of(100, 2), segments)).hasSize(2);
        }
    }

    @Test
    void aMissingNameListsTheInstalledOnes() {
        try (PluginRegistry r = PluginRegistry.classPathOnly()) {
            assertThatThrownBy(() -> r.allocationStrategy("foo"))
                    .isInstanceOf(TiffinException.class)
                    .hasMessageStartingWith("allocation.strategy = foo: no such allocation strategy (installed: "
                            + String.join(", ", r.names(ExtensionPoint.ALLOCATION_STRATEGY)) + "). ")
                    .hasMessageContaining("an embedded one needs the plugin's jar on its class path")
                    .hasMessageContaining("random")
                    .extracting(e -> ((TiffinException) e).code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            if (r.names(ExtensionPoint.STORAGE_BACKEND).isEmpty()) {
                assertThatThrownBy(() -> r.storageBackend("bucket"))
                        .hasMessageStartingWith("node.storage-backend = bucket: no such storage backend (installed:"
                                + " none). Plugins are found on the class path and in plugins.dir");
            }
        }
    }

    @Test
    void aMissingPluginsDirectoryMeansClassPathOnly() {
        try (PluginRegistry r = PluginRegistry.load(work.resolve("absent"))) {
            assertThat(r.names(ExtensionPoint.ALLOCATION_STRATEGY)).contains("random");
        }
    }

    @Test
    void aPluginFromAFolderWorksInItsOwnApiOnlyClassLoader() throws Exception {
        Path plugins = pluginsDir();
        TestPluginJars.installAllocationPlugin(work, plugins, "first-fit-test", "test.firstfit.FirstFitPlugin",
                "first-fit-test");
        // A README next to the plugin folders is ignored.
        Files.writeString(plugins.resolve("README.txt"), "plugins go in sub-folders");

        try (PluginRegistry r = PluginRegistry.load(plugins)) {
            assertThat(r.names(ExtensionPoint.ALLOCATION_STRATEGY)).contains("random", "first-fit-test");
            AllocationStrategyFactory f = r.allocationStrategy("first-fit-test");
            assertThat(r.providerOf(ExtensionPoint.ALLOCATION_STRATEGY, "first-fit-test"))
                    .isEqualTo(new PluginInfo("first-fit-test-plugin", "test.firstfit.FirstFitPlugin",
                            "folder " + plugins.resolve("first-fit-test")));

            // (1) it works: segments are offered in order, skipping full and draining ones.
            List<TestSegment> segments = List.of(
                    new TestSegment("full", 1000, 950, SegmentStatus.OK),
                    new TestSegment("draining", 1000, 0, SegmentStatus.DRAINING),
                    new TestSegment("s1", 1000, 0, SegmentStatus.OK),
                    new TestSegment("s2", 1000, 500, SegmentStatus.OK),
                    new TestSegment("s3", 1000, 0, SegmentStatus.OK));
            assertThat(place(f.create(PluginContext.empty()), AllocationRequest.of(100, 2), segments))
                    .containsExactly("s1", "s2");

            // (2) its class loader is its own, not the core's.
            ClassLoader loader = f.getClass().getClassLoader();
            assertThat(loader).isNotSameAs(PluginRegistry.class.getClassLoader()).isInstanceOf(PluginClassLoader.class);
            assertThat(loader.getParent()).isInstanceOf(ApiOnlyClassLoader.class);
            assertThat(loader.loadClass("test.firstfit.FirstFitPlugin").getInterfaces())
                    .containsExactly(TiffinPlugin.class);

            // (3) it sees engine-api (the very same classes) and the JDK, nothing else of the host.
            assertThatThrownBy(() -> loader.loadClass("io.tiffin.core.plugin.PluginRegistry"))
                    .isInstanceOf(ClassNotFoundException.class)
                    .hasMessageContaining("is part of the Tiffin engine, which plugins cannot use");
            assertThatThrownBy(() -> loader.loadClass("com.google.inject.Guice"))
                    .isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> loader.loadClass("io.tiffin.plugin.allocation.AllocationPlugin"))
                    .isInstanceOf(ClassNotFoundException.class);
            assertThat(loader.loadClass("io.tiffin.api.KvStore")).isSameAs(KvStore.class);
            assertThat(loader.loadClass("io.tiffin.api.spi.TiffinPlugin")).isSameAs(TiffinPlugin.class);
            assertThat(loader.loadClass("java.util.List")).isSameAs(List.class);
            assertThat(Collections.list(loader.getResources(TestPluginJars.SERVICE_ENTRY))).hasSize(1);
            assertThat(loader.getResource("log4j2.component.properties")).isNull();
        }
    }

    @Test
    void aPluginMaySpanSeveralJarsInItsFolder() throws IOException {
        Path plugins = pluginsDir();
        String helper = """
                package test.split;

                public final class Names {
                    private Names() {
                    }

                    public static String strategy() {
                        return "split-test";
                    }
                }
                """;
        String plugin = TestPluginJars.allocationPluginSource("test.split.SplitPlugin", "split-test")
                .replace("return \"split-test\";", "return test.split.Names.strategy();");
        Path both = TestPluginJars.compile(work, Map.of("test.split.Names", helper, "test.split.SplitPlugin", plugin));
        Path helperClasses = Files.createTempDirectory(work, "helper");
        Path pluginClasses = Files.createTempDirectory(work, "plugin");
        try (Stream<Path> walk = Files.walk(both)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                Path dest = (p.getFileName().toString().startsWith("Names") ? helperClasses : pluginClasses)
                        .resolve(both.relativize(p));
                Files.createDirectories(dest.getParent());
                Files.copy(p, dest);
            }
        }
        TestPluginJars.jar(plugins.resolve("split").resolve("a-helper.jar"), helperClasses, null);
        TestPluginJars.jar(plugins.resolve("split").resolve("b-plugin.jar"), pluginClasses, "test.split.SplitPlugin");

        try (PluginRegistry r = PluginRegistry.load(plugins)) {
            assertThat(r.allocationStrategy("split-test").name()).isEqualTo("split-test");
        }
    }

    @Test
    void duplicateNamesAcrossTwoFoldersNameBothPlugins() throws IOException {
        Path plugins = pluginsDir();
        TestPluginJars.installAllocationPlugin(work, plugins, "dup-a", "test.dupa.PluginA", "dup-test");
        TestPluginJars.installAllocationPlugin(work, plugins, "dup-b", "test.dupb.PluginB", "dup-test");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).isEqualTo("cannot load plugins: allocation strategy \"dup-test\" is offered by "
                + "two plugins: dup-test-plugin (test.dupa.PluginA, folder " + plugins.resolve("dup-a") + ") and "
                + "dup-test-plugin (test.dupb.PluginB, folder " + plugins.resolve("dup-b") + ") (expected: unique "
                + "names; remove one plugin)");
    }

    @Test
    void aFolderPluginMayNotReuseABuiltInName() throws IOException {
        Path plugins = pluginsDir();
        TestPluginJars.installAllocationPlugin(work, plugins, "my-random", "test.myrandom.MyRandomPlugin", "random");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).contains("allocation strategy \"random\" is offered by two plugins")
                .contains("io.tiffin.plugin.allocation.AllocationPlugin, class path (")
                .contains("test.myrandom.MyRandomPlugin, folder " + plugins.resolve("my-random"));
    }

    @Test
    void anEmptyFolderIsAnError() throws IOException {
        Path plugins = pluginsDir();
        Path empty = Files.createDirectories(plugins.resolve("empty"));
        Files.writeString(empty.resolve("notes.txt"), "not a jar");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).startsWith("cannot load plugins: plugin folder " + empty + " holds no jars");
    }

    @Test
    void aFolderWithJarsButNoProviderIsAnError() throws IOException {
        Path plugins = pluginsDir();
        Path classes = TestPluginJars.compile(work, Map.of("test.none.Nothing", "package test.none; class Nothing {}"));
        TestPluginJars.jar(plugins.resolve("none").resolve("none.jar"), classes, null);
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).contains("plugin folder " + plugins.resolve("none") + " has jars but none declares "
                + "a plugin");
    }

    /** A truncated jar is named (a class loader skipped it silently, and the plugin failed later or seemed absent). */
    @Test
    void aCorruptJarIsAnErrorNamingIt() throws IOException {
        Path plugins = pluginsDir();
        Path bad = Files.createDirectories(plugins.resolve("cut")).resolve("cut.jar");
        Files.write(bad, java.util.Arrays.copyOf(new byte[] {'P', 'K', 3, 4}, 700));
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).contains("plugin jar " + bad + " cannot be read as a jar")
                .contains("truncated or corrupt");
    }

    @Test
    void aProviderThatCannotBeLoadedIsAnErrorNamingTheFolder() throws IOException {
        Path plugins = pluginsDir();
        Path classes = TestPluginJars.compile(work, Map.of("test.none.Nothing", "package test.none; class Nothing {}"));
        TestPluginJars.jar(plugins.resolve("broken").resolve("broken.jar"), classes, "test.none.Missing");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).contains("plugin in folder " + plugins.resolve("broken") + " failed to load")
                .contains("test.none.Missing");
    }

    @Test
    void aFactoryThatFailsToCreateIsReportedAsItsSetting() {
        assertThatThrownBy(() -> PluginRegistry.create("allocation.strategy remote-first", () -> {
            throw new IllegalStateException("plugin.remote-first.url is required");
        })).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            assertThat(e.getMessage()).startsWith("allocation.strategy remote-first could not be created: ")
                    .contains("plugin.remote-first.url is required");
        });
        assertThatThrownBy(() -> PluginRegistry.create("hotcache.policy nil", () -> null))
                .hasMessageContaining("hotcache.policy nil created nothing");
    }

    /** A plugin whose listing recurses without end is a load error naming it, not a raw StackOverflowError. */
    @Test
    void aPluginWhoseListingOverflowsTheStackIsAnErrorNamingIt() throws IOException {
        Path plugins = pluginsDir();
        Path classes = TestPluginJars.compile(work, Map.of("test.deep.DeepPlugin", """
                package test.deep;
                public class DeepPlugin implements io.tiffin.api.spi.TiffinPlugin {
                    @Override public String name() { return "deep"; }
                    @Override public java.util.List<io.tiffin.api.spi.hotcache.HotCachePolicyFactory>
                            hotCachePolicies() { return hotCachePolicies(); }
                }
                """));
        TestPluginJars.jar(plugins.resolve("deep").resolve("deep.jar"), classes, "test.deep.DeepPlugin");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).contains("plugin deep").contains("failed to list its hot cache policy factories")
                .contains("StackOverflowError");
    }

    /** A class the JVM cannot link (here: compiled for a newer Java) is a load error, not a crash. */
    @Test
    void aPluginCompiledForANewerJavaIsAnErrorNamingTheFolder() throws IOException {
        Path plugins = pluginsDir();
        Path classes = TestPluginJars.compile(work, Map.of("test.newer.NewerPlugin",
                TestPluginJars.allocationPluginSource("test.newer.NewerPlugin", "newer")));
        Path type = classes.resolve("test/newer/NewerPlugin.class");
        byte[] bytes = Files.readAllBytes(type);
        bytes[6] = 0;
        bytes[7] = 99; // class file major version 99: a Java far newer than this one
        Files.write(type, bytes);
        TestPluginJars.jar(plugins.resolve("newer").resolve("newer.jar"), classes, "test.newer.NewerPlugin");

        TiffinException e = loadError(plugins);

        assertThat(e.getMessage()).contains("plugin in folder " + plugins.resolve("newer") + " failed to load")
                .contains("UnsupportedClassVersionError");
    }

    @Test
    void aLooseJarInThePluginsDirectoryIsAnError() throws IOException {
        Path plugins = pluginsDir();
        Path classes = TestPluginJars.compile(work, Map.of("test.none.Nothing", "package test.none; class Nothing {}"));
        TestPluginJars.jar(plugins.resolve("loose.jar"), classes, null);
        assertThat(loadError(plugins).getMessage()).contains("plugin jar " + plugins.resolve("loose.jar")
                + " lies directly in the plugins directory");
    }

    @Test
    void aPluginsPathThatIsAFileIsAnError() throws IOException {
        Path file = Files.writeString(work.resolve("plugins"), "oops");
        assertThat(loadError(file).getMessage()).contains("plugins.dir = " + file + " is not a directory");
    }

    @Test
    void allProblemsAreReportedTogether() throws IOException {
        Path plugins = pluginsDir();
        Files.createDirectories(plugins.resolve("empty-1"));
        Files.createDirectories(plugins.resolve("empty-2"));
        TestPluginJars.installAllocationPlugin(work, plugins, "my-random", "test.myrandom.MyRandomPlugin", "random");
        TiffinException e = loadError(plugins);
        assertThat(e.getMessage()).startsWith("cannot load plugins (3 problems):\n")
                .contains(plugins.resolve("empty-1").toString()).contains(plugins.resolve("empty-2").toString())
                .contains("\"random\"");
    }

    @Test
    void aProviderOnTheClassPathAndInAFolderIsLoadedOnce() throws IOException {
        Path plugins = pluginsDir();
        Path builtIn = TestPluginJars.codeSource(io.tiffin.plugin.allocation.AllocationPlugin.class);
        Path jar = plugins.resolve("allocation").resolve("plugin-allocation.jar");
        if (Files.isDirectory(builtIn)) {
            TestPluginJars.jar(jar, builtIn, null);
        } else {
            Files.createDirectories(jar.getParent());
            Files.copy(builtIn, jar);
        }
        try (PluginRegistry r = PluginRegistry.load(plugins)) {
            assertThat(r.names(ExtensionPoint.ALLOCATION_STRATEGY)).containsOnlyOnce("random");
            assertThat(r.plugins()).filteredOn(p -> p.className().equals("io.tiffin.plugin.allocation.AllocationPlugin"))
                    .singleElement().extracting(PluginInfo::source).asString().startsWith("class path (");
            assertThat(r.allocationStrategy("random").getClass().getClassLoader())
                    .isSameAs(PluginRegistry.class.getClassLoader());
        }
    }

    @Test
    void closeIsIdempotent() throws IOException {
        Path plugins = pluginsDir();
        TestPluginJars.installAllocationPlugin(work, plugins, "closing", "test.closing.ClosingPlugin", "closing-test");
        PluginRegistry r = PluginRegistry.load(plugins);
        assertThat(r.allocationStrategy("closing-test")).isNotNull();
        r.close();
        r.close();
        assertThat(r.names(ExtensionPoint.HOT_CACHE_POLICY)).isNotNull();
    }
}
