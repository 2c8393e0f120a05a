package io.tiffin.core.plugin;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.NamedFactory;
import io.tiffin.api.spi.TiffinPlugin;
import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
import io.tiffin.api.spi.hotcache.HotCachePolicyFactory;
import io.tiffin.api.spi.storage.StorageBackendFactory;
import io.tiffin.core.config.TiffinConfig;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Finds the installed {@link TiffinPlugin}s and indexes the named factories they contribute to each
 * {@link ExtensionPoint}.
 *
 * <p>Plugins come from two places:
 * <ol>
 *   <li>the class path, through {@link ServiceLoader} on the core's class loader (the built-in
 *       plugins);</li>
 *   <li>each sub-folder of the plugins directory: {@code plugins/<name>/} holding one or more jars is
 *       one plugin, loaded by its own {@link URLClassLoader} over all of the folder's jars, whose
 *       parent is an {@link ApiOnlyClassLoader}; so a plugin sees the JDK and {@code engine-api}
 *       only, and cannot clash with the host's libraries.</li>
 * </ol>
 * A provider class found on the class path and in a folder is loaded once, from the class path. Two
 * factories with the same name for one extension point, a folder without jars, or with jars but no
 * provider, stop start-up: {@link #load(Path)} reports all such problems together.
 *
 * <p>Thread-safe after construction: the indexes are immutable. {@link #close()} closes the folder
 * class loaders; call it once no plugin code runs any more.
 */
public final class PluginRegistry implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(PluginRegistry.class);
    private static final Pattern FACTORY_NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");

    private final List<PluginInfo> plugins;
    private final Map<ExtensionPoint<?>, Map<String, Registration>> factories;
    private final List<URLClassLoader> loaders;
    private final AtomicBoolean closed = new AtomicBoolean();

    private record Registration(NamedFactory factory, PluginInfo plugin) {
    }

    private PluginRegistry(List<PluginInfo> plugins, Map<ExtensionPoint<?>, Map<String, Registration>> factories,
            List<URLClassLoader> loaders) {
        this.plugins = List.copyOf(plugins);
        Map<ExtensionPoint<?>, Map<String, Registration>> copy = new LinkedHashMap<>();
        factories.forEach((p, m) -> copy.put(p, Collections.unmodifiableMap(new LinkedHashMap<>(m))));
        this.factories = Collections.unmodifiableMap(copy);
        this.loaders = List.copyOf(loaders);
    }

    /** The plugins on the class path only. */
    public static PluginRegistry classPathOnly() {
        return load(null);
    }

    /**
     * Loads the plugins on the class path and those in the sub-folders of {@code pluginsDir}. A
     * {@code pluginsDir} that is null or does not exist contributes nothing.
     *
     * @throws TiffinException with {@link ErrorCode#INVALID_PARAMS} listing every problem, one per
     *     line: a path that is not a directory, a loose jar, a folder without jars or without a
     *     provider, a plugin that fails to load, two factories with the same name
     */
    public static PluginRegistry load(Path pluginsDir) {
        List<String> problems = new ArrayList<>();
        List<PluginInfo> infos = new ArrayList<>();
        List<URLClassLoader> loaders = new ArrayList<>();
        Map<ExtensionPoint<?>, Map<String, Registration>> factories = new LinkedHashMap<>();
        for (ExtensionPoint<?> point : ExtensionPoint.all()) {
            factories.put(point, new LinkedHashMap<>());
        }

        Set<String> classPathProviders = new HashSet<>();
        ServiceLoader<TiffinPlugin> core = ServiceLoader.load(TiffinPlugin.class, PluginRegistry.class.getClassLoader());
        try {
            core.stream().forEach(provider -> {
                try {
                    Class<? extends TiffinPlugin> type = provider.type();
                    classPathProviders.add(type.getName());
                    register(provider.get(), "class path (" + location(type) + ")", infos, factories, problems);
                } catch (ServiceConfigurationError | LinkageError e) {
                    problems.add("a plugin on the class path failed to load: " + describe(e));
                }
            });
        } catch (ServiceConfigurationError | LinkageError e) {
            problems.add("the class path's plugin list cannot be read: " + describe(e));
        }

        if (pluginsDir != null && Files.exists(pluginsDir)) {
            if (!Files.isDirectory(pluginsDir)) {
                problems.add("plugins.dir = " + pluginsDir + " is not a directory (expected: a directory of "
                        + "plugin folders)");
            } else {
                for (Path entry : list(pluginsDir, problems)) {
                    if (Files.isDirectory(entry)) {
                        loadFolder(entry, classPathProviders, infos, loaders, factories, problems);
                    } else if (entry.getFileName().toString().endsWith(".jar")) {
                        problems.add("plugin jar " + entry + " lies directly in the plugins directory (expected: "
                                + "each plugin in its own folder, " + pluginsDir.resolve("<name>").resolve(
                                        entry.getFileName()) + ")");
                    }
                }
            }
        } else if (pluginsDir != null) {
            LOG.info("Plugins directory {} does not exist; using class-path plugins only", pluginsDir);
        }

        if (!problems.isEmpty()) {
            closeAll(loaders);
            String msg = problems.size() == 1 ? "cannot load plugins: " + problems.getFirst()
                    : "cannot load plugins (" + problems.size() + " problems):\n  " + String.join("\n  ", problems);
            throw new TiffinException(ErrorCode.INVALID_PARAMS, msg);
        }
        PluginRegistry registry = new PluginRegistry(infos, factories, loaders);
        LOG.info("Loaded plugins: {}", registry.plugins);
        return registry;
    }

    private static void loadFolder(Path folder, Set<String> classPathProviders, List<PluginInfo> infos,
            List<URLClassLoader> loaders, Map<ExtensionPoint<?>, Map<String, Registration>> factories,
            List<String> problems) {
        List<Path> jars = list(folder, problems).stream()
                .filter(p -> Files.isRegularFile(p) && p.getFileName().toString().endsWith(".jar"))
                .toList();
        if (jars.isEmpty()) {
            problems.add("plugin folder " + folder + " holds no jars (expected: the plugin's jar and the jars it "
                    + "needs, one of them listing its class in META-INF/services/" + TiffinPlugin.class.getName()
                    + ")");
            return;
        }
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            // a class loader skips a jar it cannot open without a word: a truncated or corrupt one is said here
            try (java.util.jar.JarFile ignored = new java.util.jar.JarFile(jars.get(i).toFile())) {
                // readable
            } catch (java.io.IOException e) {
                problems.add("plugin jar " + jars.get(i) + " cannot be read as a jar (" + e.getMessage()
                        + "): a truncated or corrupt copy; copy it again from the plugin's release");
                return;
            }
            try {
                urls[i] = jars.get(i).toUri().toURL();
            } catch (MalformedURLException e) {
                problems.add("plugin jar " + jars.get(i) + " has no valid URL: " + e.getMessage());
                return;
            }
        }
        String source = "folder " + folder;
        URLClassLoader loader = new PluginClassLoader("tiffin-plugin-" + folder.getFileName(), urls);
        int found = 0;
        int used = 0;
        try {
            for (ServiceLoader.Provider<TiffinPlugin> provider
                    : ServiceLoader.load(TiffinPlugin.class, loader).stream().toList()) {
                found++;
                try {
                    Class<? extends TiffinPlugin> type = provider.type();
                    if (classPathProviders.contains(type.getName())) {
                        LOG.info("Plugin {} in {} is also on the class path; using the class path's copy",
                                type.getName(), folder);
                        continue;
                    }
                    register(provider.get(), source, infos, factories, problems);
                    used++;
                } catch (ServiceConfigurationError | LinkageError e) {
                    problems.add("plugin in " + source + " failed to load: " + describe(e));
                }
            }
        } catch (ServiceConfigurationError | LinkageError e) {
            // e.g. a class compiled for a newer Java, or one whose superclass is in a jar not shipped
            found = Math.max(found, 1);
            problems.add("plugin in " + source + " failed to load: " + describe(e));
        }
        if (found == 0) {
            problems.add("plugin folder " + folder + " has jars but none declares a plugin (expected: a jar with "
                    + "META-INF/services/" + TiffinPlugin.class.getName() + " naming the plugin class)");
        }
        if (used > 0) {
            loaders.add(loader);
        } else {
            closeAll(List.of(loader));
        }
    }

    private static void register(TiffinPlugin plugin, String source, List<PluginInfo> infos,
            Map<ExtensionPoint<?>, Map<String, Registration>> factories, List<String> problems) {
        PluginInfo info;
        try {
            info = new PluginInfo(Objects.requireNonNullElse(plugin.name(), plugin.getClass().getName()),
                    plugin.getClass().getName(), source);
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            problems.add("plugin " + plugin.getClass().getName() + " from " + source + " failed: " + describe(e));
            return;
        }
        infos.add(info);
        for (ExtensionPoint<?> point : ExtensionPoint.all()) {
            List<? extends NamedFactory> contributed;
            try {
                contributed = point.contributionsOf(plugin);
            } catch (RuntimeException | LinkageError | StackOverflowError e) {
                problems.add("plugin " + info + " failed to list its " + point.description() + " factories: "
                        + describe(e));
                continue;
            }
            if (contributed == null) {
                problems.add("plugin " + info + " returned null " + point.description() + " factories "
                        + "(expected: a list, possibly empty)");
                continue;
            }
            Map<String, Registration> byName = factories.get(point);
            for (NamedFactory f : contributed) {
                String name;
                try {
                    name = f == null ? null : f.name();
                } catch (RuntimeException | LinkageError | StackOverflowError e) {
                    problems.add("plugin " + info + " offers a " + point.description() + " whose name() failed: "
                            + describe(e));
                    continue;
                }
                if (name == null || !FACTORY_NAME.matcher(name).matches()) {
                    problems.add("plugin " + info + " offers a " + point.description() + " named " + name
                            + " (expected: lower-case letters, digits and '-', e.g. random)");
                    continue;
                }
                Registration previous = byName.putIfAbsent(name, new Registration(f, info));
                if (previous != null) {
                    problems.add(point.description() + " \"" + name + "\" is offered by two plugins: "
                            + previous.plugin() + " and " + info + " (expected: unique names; remove one plugin)");
                }
            }
        }
    }

    // --------------------------------------------------------------------------------- lookups

    /**
     * The factory named {@code name} for {@code point}.
     *
     * @throws TiffinException with {@link ErrorCode#INVALID_PARAMS} naming the installed factories
     *     if there is none with that name
     */
    public <F extends NamedFactory> F factory(ExtensionPoint<F> point, String name) {
        Objects.requireNonNull(point, "point");
        Registration r = factories.get(point).get(name);
        if (r == null) {
            List<String> names = names(point);
            throw new TiffinException(ErrorCode.INVALID_PARAMS, point.configKey() + " = " + name + ": no such "
                    + point.description() + " (installed: " + (names.isEmpty() ? "none" : String.join(", ", names))
                    + "). Plugins are found on the class path and in plugins.dir: a Tiffin of the tarball reads"
                    + " <tiffin home>/plugins; an embedded one needs the plugin's jar on its class path (the built-in"
                    + " allocation strategies are io.tiffin:plugin-allocation), or plugins.dir set to such a directory");
        }
        return point.factoryType().cast(r.factory());
    }

    /** The allocation strategy factory named {@code name}; see {@link #factory}. */
    public AllocationStrategyFactory allocationStrategy(String name) {
        return factory(ExtensionPoint.ALLOCATION_STRATEGY, name);
    }

    /** The storage backend factory named {@code name}; see {@link #factory}. */
    public StorageBackendFactory storageBackend(String name) {
        return factory(ExtensionPoint.STORAGE_BACKEND, name);
    }

    /** The hot cache policy factory named {@code name}; see {@link #factory}. */
    public HotCachePolicyFactory hotCachePolicy(String name) {
        return factory(ExtensionPoint.HOT_CACHE_POLICY, name);
    }

    /**
     * The settings of the {@code point} factory named {@code name}: the entries of {@code config} under
     * {@link ExtensionPoint#settingsPrefix}, prefix removed, checked against the keys the factory declares
     * ({@link NamedFactory#configKeys()}). A factory that declares none gets them unchecked.
     *
     * @throws TiffinException with {@link ErrorCode#INVALID_PARAMS} if there is no such factory, or
     *     naming every entry the factory does not declare (full key, where it was set, the nearest declared
     *     key), the factory, its plugin and the keys it reads
     */
    public Map<String, String> settings(ExtensionPoint<?> point, String name, TiffinConfig config) {
        NamedFactory factory = factory(point, name);
        String prefix = point.settingsPrefix(name);
        Map<String, String> settings = config.withPrefix(prefix);
        Optional<Set<String>> declared = declaredKeys(factory, point, name);
        if (declared.isEmpty()) {
            return settings;
        }
        List<String> problems = new ArrayList<>();
        for (String key : settings.keySet()) {
            if (declared.get().contains(key)) {
                continue;
            }
            String where = config.openSource(prefix + key).map(src -> " [" + src + "]").orElse("");
            String hint;
            if (point == ExtensionPoint.STORAGE_BACKEND && key.equals("path")) {
                hint = " (expected: node.storage-path, which the backend gets as its path)";
            } else {
                String best = TiffinConfig.nearest(key, declared.get());
                hint = best == null ? "" : " (did you mean " + prefix + best + "?)";
            }
            problems.add(prefix + key + where + hint);
        }
        if (!problems.isEmpty()) {
            String reads = declared.get().isEmpty() ? "none" : String.join(", ",
                    declared.get().stream().sorted().map(k -> prefix + k).toList());
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "unknown " + (problems.size() == 1 ? "key " : "keys ")
                    + String.join(", ", problems) + ": the " + point.description() + " " + name + " of plugin "
                    + factories.get(point).get(name).plugin().name() + " reads " + reads);
        }
        return settings;
    }

    /** Whether the {@code point} factory named {@code name} declares its configuration keys. */
    public boolean declaresSettings(ExtensionPoint<?> point, String name) {
        return settingKeys(point, name).isPresent();
    }

    /**
     * The configuration keys the {@code point} factory named {@code name} declares, without its prefix,
     * sorted; empty if it declares none.
     *
     * @throws TiffinException with {@link ErrorCode#INVALID_PARAMS} if there is no such factory or it
     *     fails to list its keys
     */
    public Optional<java.util.SortedSet<String>> settingKeys(ExtensionPoint<?> point, String name) {
        return declaredKeys(factory(point, name), point, name).map(java.util.TreeSet::new);
    }

    /**
     * The keys {@code factory} declares, copied. A hot-cache policy that declares none and does not
     * override {@code create(long, PluginContext)} (one written before policies had settings) reads
     * none: it is treated as declaring an empty set, so a key under its prefix is refused rather than
     * dropped unread.
     */
    private static Optional<Set<String>> declaredKeys(NamedFactory factory, ExtensionPoint<?> point, String name) {
        try {
            Optional<Set<String>> declared = Objects.requireNonNull(factory.configKeys(), "configKeys() returned null");
            if (declared.isEmpty() && factory instanceof HotCachePolicyFactory && !readsSettings(factory)) {
                return Optional.of(Set.of());
            }
            return declared.map(Set::copyOf); // rejects a null key
        } catch (RuntimeException | LinkageError e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the " + point.description() + " " + name
                    + " could not list its configuration keys: " + describe(e), e);
        }
    }

    /** Whether a hot-cache policy factory overrides {@code create(long, PluginContext)}. */
    private static boolean readsSettings(NamedFactory factory) {
        try {
            return factory.getClass().getMethod("create", long.class, io.tiffin.api.spi.PluginContext.class)
                    .getDeclaringClass() != HotCachePolicyFactory.class;
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException("a HotCachePolicyFactory without create(long, PluginContext)", e);
        }
    }

    /** The names of the factories installed for {@code point}, in discovery order (class path first). */
    public List<String> names(ExtensionPoint<?> point) {
        return List.copyOf(factories.get(Objects.requireNonNull(point, "point")).keySet());
    }

    /** The plugin that provides the factory {@code name} for {@code point}, for listings. */
    public PluginInfo providerOf(ExtensionPoint<?> point, String name) {
        factory(point, name);
        return factories.get(point).get(name).plugin();
    }

    /** The loaded plugins, class-path plugins first. */
    public List<PluginInfo> plugins() {
        return plugins;
    }

    /** Closes the class loaders of folder plugins. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            closeAll(loaders);
        }
    }

    // --------------------------------------------------------------------------------- helpers

    private static List<Path> list(Path dir, List<String> problems) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (IOException e) {
            problems.add("directory " + dir + " cannot be listed: " + e);
            return List.of();
        }
    }

    private static void closeAll(List<URLClassLoader> loaders) {
        for (URLClassLoader l : loaders) {
            try {
                l.close();
            } catch (IOException e) {
                LOG.warn("Closing plugin class loader {} failed", l.getName(), e);
            }
        }
    }

    private static String location(Class<?> type) {
        CodeSource cs = type.getProtectionDomain().getCodeSource();
        return cs == null || cs.getLocation() == null ? "unknown location" : cs.getLocation().toString();
    }

    /**
     * A plugin class and where it was loaded from ({@code <class> (<jar or directory>)}), for messages about a plugin
     * object whose {@link PluginInfo} is not at hand (one handed to a component directly, as tests and embedders do).
     */
    public static String origin(Class<?> type) {
        return type.getName() + " (" + location(type) + ")";
    }

    /**
     * Runs a plugin factory's {@code create}: what it throws (plugin code refusing its settings, or
     * failing) becomes {@code INVALID_PARAMS} naming the factory, so the user learns which plugin and
     * setting to look at instead of reading a provisioning stack trace.
     *
     * @param what e.g. {@code "allocation.strategy random"}
     */
    public static <T> T create(String what, java.util.function.Supplier<T> creation) {
        try {
            return Objects.requireNonNull(creation.get(), () -> what + " created nothing (null)");
        } catch (TiffinException e) {
            throw e;
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, what + " could not be created: " + describe(e)
                    + " (check the plugin's settings, or choose another)", e);
        }
    }

    /** {@code e} and its causes, for a message: {@code e.toString()} followed by {@code "; caused by <cause>"} each. */
    public static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder(e.toString());
        for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            sb.append("; caused by ").append(c);
        }
        return sb.toString();
    }
}
