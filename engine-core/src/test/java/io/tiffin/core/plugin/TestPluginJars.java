package io.tiffin.core.plugin;

import io.tiffin.api.spi.TiffinPlugin;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Builds plugin jars for tests: compiles Java sources against the engine-api classes with the
 * system compiler and packages them with a {@code META-INF/services} entry.
 *
 * <p>Not thread-safe; each test uses its own directories.
 */
final class TestPluginJars {
    static final String SERVICE_ENTRY = "META-INF/services/" + TiffinPlugin.class.getName();

    private TestPluginJars() {
    }

    /** Where the engine-api classes live (a directory or a jar). */
    static Path apiLocation() {
        return codeSource(TiffinPlugin.class);
    }

    static Path codeSource(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("code source of " + type + " is not a path", e);
        }
    }

    /**
     * Compiles {@code sources} (fully qualified class name to source text) against engine-api into a
     * fresh directory under {@code work} and returns that directory.
     */
    static Path compile(Path work, Map<String, String> sources) throws IOException {
        Path src = Files.createTempDirectory(work, "src");
        Path out = Files.createTempDirectory(work, "classes");
        List<Path> files = new ArrayList<>();
        for (Map.Entry<String, String> e : sources.entrySet()) {
            Path f = src.resolve(e.getKey().replace('.', '/') + ".java");
            Files.createDirectories(f.getParent());
            Files.writeString(f, e.getValue(), StandardCharsets.UTF_8);
            files.add(f);
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException("no system Java compiler (expected: tests run on a JDK, not a JRE)");
        }
        StringWriter diagnostics = new StringWriter();
        try (StandardJavaFileManager fm = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            boolean ok = compiler.getTask(diagnostics, fm, null,
                    List.of("-classpath", apiLocation().toString(), "-d", out.toString(), "-proc:none"),
                    null, fm.getJavaFileObjectsFromPaths(files)).call();
            if (!ok) {
                throw new IllegalStateException("test plugin did not compile:\n" + diagnostics);
            }
        }
        return out;
    }

    /**
     * Writes a jar of everything under {@code classes} (a directory) to {@code jar}; if
     * {@code provider} is not null, adds a service entry naming it.
     */
    static Path jar(Path jar, Path classes, String provider) throws IOException {
        Files.createDirectories(jar.getParent());
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os);
                Stream<Path> walk = Files.walk(classes)) {
            for (Path p : walk.filter(Files::isRegularFile).sorted().toList()) {
                String name = classes.relativize(p).toString().replace('\\', '/');
                if (provider != null && name.equals(SERVICE_ENTRY)) {
                    continue;
                }
                out.putNextEntry(new JarEntry(name));
                Files.copy(p, out);
                out.closeEntry();
            }
            if (provider != null) {
                out.putNextEntry(new JarEntry(SERVICE_ENTRY));
                out.write((provider + "\n").getBytes(StandardCharsets.UTF_8));
                out.closeEntry();
            }
        }
        return jar;
    }

    /** Source of a plugin {@code className} offering one allocation strategy named {@code strategy}. */
    static String allocationPluginSource(String className, String strategy) {
        int dot = className.lastIndexOf('.');
        return """
                package %s;

                import io.tiffin.api.spi.PluginContext;
                import io.tiffin.api.spi.TiffinPlugin;
                import io.tiffin.api.spi.allocation.AllocationStrategy;
                import io.tiffin.api.spi.allocation.AllocationStrategyFactory;
                import io.tiffin.api.spi.allocation.SegmentStatus;
                import io.tiffin.api.spi.allocation.SegmentView;
                import java.util.List;

                /** Offers segments in the order given: first fit. */
                public final class %s implements TiffinPlugin {
                    @Override
                    public String name() {
                        return "%s";
                    }

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
                                    for (SegmentView s : segments) {
                                        if (sink.remaining() == 0) {
                                            return;
                                        }
                                        if (s.status() == SegmentStatus.OK && s.largestFreeRegion() >= request.size()) {
                                            sink.tryPlace(s);
                                        }
                                    }
                                };
                            }
                        });
                    }
                }
                """.formatted(className.substring(0, dot), className.substring(dot + 1), strategy + "-plugin",
                strategy);
    }

    /** Compiles an allocation plugin and installs it as {@code pluginsDir/<folder>/<folder>.jar}. */
    static Path installAllocationPlugin(Path work, Path pluginsDir, String folder, String className,
            String strategy) throws IOException {
        Path classes = compile(work, Map.of(className, allocationPluginSource(className, strategy)));
        return jar(pluginsDir.resolve(folder).resolve(folder + ".jar"), classes, className);
    }
}
