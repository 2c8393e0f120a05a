package io.tiffin.bench;

import com.google.inject.Injector;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.plugin.PluginRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Helpers shared by the {@code tiffin bench} commands: an in-process master on a free loopback port and
 * CSV output. Stateless and thread-safe.
 */
final class BenchSupport {
    private BenchSupport() {
    }

    /**
     * A master on 127.0.0.1 with a free port and no admin server, configured from defaults plus
     * {@code overrides} ({@code key=value}). The caller owns it and must close it; the plugin registry it
     * used is closed when the JVM exits (plugins of the class path hold no resources).
     */
    static MasterServer startLocalMaster(String... overrides) {
        TiffinConfig.Builder b = TiffinConfig.builder().set("master.host", "127.0.0.1").set("master.port", "0");
        for (String o : overrides) {
            int eq = o.indexOf('=');
            b.set(o.substring(0, eq), o.substring(eq + 1));
        }
        Injector injector = Tiffin.injector(b.build());
        MasterServer.Options o = injector.getInstance(MasterServer.Options.class);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> injector.getInstance(PluginRegistry.class).close()));
        return MasterServer.start(new MasterServer.Options(o.host(), 0, -1, o.workerThreads(), o.settings(),
                o.transport(), o.strategy()));
    }

    /**
     * A hot-cache policy with settings, {@code name[:key=value]...}: the factory and its settings
     * ({@code hotcache.policy.<name>.*}, prefix removed), checked as a client checks them, and their values
     * tried once by creating the policy.
     *
     * @throws IllegalArgumentException naming {@code text} and what is wrong: the form, an unknown policy
     *     or key, a bad value
     */
    static PolicySpec policySpec(PluginRegistry registry, String text) {
        String[] parts = text.split(":", -1);
        String name = parts[0].strip();
        io.tiffin.core.config.TiffinConfig.Builder config = io.tiffin.core.config.TiffinConfig.builder();
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(text + " (expected: a policy name, optionally followed by"
                        + " :key=value settings, e.g. s3-fifo:small-share=0.2)");
            }
            config.set(io.tiffin.core.plugin.ExtensionPoint.HOT_CACHE_POLICY.settingsPrefix(name)
                    + parts[i].substring(0, eq).strip(), parts[i].substring(eq + 1).strip(), "policy " + text);
        }
        try {
            io.tiffin.api.spi.hotcache.HotCachePolicyFactory factory = registry.hotCachePolicy(name);
            PolicySpec spec = new PolicySpec(text.strip(), factory, registry.settings(
                    io.tiffin.core.plugin.ExtensionPoint.HOT_CACHE_POLICY, name, config.build()));
            factory.create(100, spec.context()); // the values, before a long run: a policy checks them when created
            return spec;
        } catch (io.tiffin.api.TiffinException | IllegalArgumentException e) { // ConfigException included
            throw new IllegalArgumentException(text + ": " + e.getMessage(), e);
        }
    }

    /**
     * A hot-cache policy to run: its factory with its settings, shown as {@code label}.
     *
     * @param label e.g. {@code s3-fifo} or {@code s3-fifo:small-share=0.2}
     * @param factory the policy factory
     * @param settings the policy's settings, prefix removed, already checked
     */
    record PolicySpec(String label, io.tiffin.api.spi.hotcache.HotCachePolicyFactory factory,
                      Map<String, String> settings) {
        PolicySpec {
            settings = Map.copyOf(settings);
        }

        io.tiffin.api.spi.PluginContext context() {
            return new io.tiffin.api.spi.PluginContext(settings, "bench");
        }
    }

    /**
     * The installed plugins: the {@code plugins/} folders of the installation when run through
     * {@code bin/tiffin} (which sets {@code tiffin.home}), plus those on the class path (tests, IDE).
     * The caller closes the registry.
     */
    public static PluginRegistry plugins() {
        String home = System.getProperty("tiffin.home");
        Path dir = home == null ? null : Path.of(home, "plugins");
        return dir != null && Files.isDirectory(dir) ? PluginRegistry.load(dir) : PluginRegistry.classPathOnly();
    }

    /**
     * Writes {@code header} (if the file is new or empty) and {@code rows} to {@code csv}, appending so
     * several runs collect in one file; does nothing when {@code csv} is null.
     */
    static void writeCsv(Path csv, String header, List<String> rows) {
        if (csv == null) {
            return;
        }
        try {
            if (csv.toAbsolutePath().getParent() != null) {
                Files.createDirectories(csv.toAbsolutePath().getParent());
            }
            StringBuilder sb = new StringBuilder();
            if (!Files.exists(csv) || Files.size(csv) == 0) {
                sb.append(header).append('\n');
            }
            for (String r : rows) {
                sb.append(r).append('\n');
            }
            Files.writeString(csv, sb, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the CSV file " + csv + ": " + e.getMessage(), e);
        }
    }

    /** {@code value} with {@code decimals} decimals and a dot, whatever the locale. */
    static String fmt(double value, int decimals) {
        return String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    /** Parses {@code host:port}. */
    static String[] hostPort(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("address '" + text + "' is not host:port (e.g. 127.0.0.1:50051)");
        }
        return new String[] {text.substring(0, colon), text.substring(colon + 1)};
    }

    /**
     * Deletes {@code dir} and everything under it; nothing if it does not exist.
     *
     * @throws UncheckedIOException naming the directory when a file cannot be deleted
     */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
