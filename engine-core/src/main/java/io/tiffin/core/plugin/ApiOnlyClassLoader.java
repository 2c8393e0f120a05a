package io.tiffin.core.plugin;

import io.tiffin.api.spi.TiffinPlugin;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;

/**
 * The parent of every plugin-folder class loader: it exposes the JDK (through the platform class
 * loader) and the classes of {@code engine-api} ({@code io.tiffin.api.*}, taken from the core's own
 * loader so that a plugin sees the very same {@link TiffinPlugin} class as the host), and nothing
 * else: no core classes, no libraries of the host, no resources of the host.
 *
 * <p>Thread-safe (registered as parallel capable; keeps no state of its own).
 */
public final class ApiOnlyClassLoader extends ClassLoader {
    /** Classes under this package prefix are shared with plugins. */
    public static final String API_PACKAGE_PREFIX = "io.tiffin.api.";

    static {
        registerAsParallelCapable();
    }

    private final ClassLoader apiLoader;

    /** A loader sharing the API classes of the loader that loaded {@link TiffinPlugin}. */
    public ApiOnlyClassLoader() {
        super("tiffin-api-only", ClassLoader.getPlatformClassLoader());
        this.apiLoader = TiffinPlugin.class.getClassLoader();
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        if (name.startsWith(API_PACKAGE_PREFIX)) {
            return apiLoader.loadClass(name);
        }
        throw new ClassNotFoundException(name + " is not visible to plugins (plugins see the JDK and "
                + API_PACKAGE_PREFIX + "* only; bundle other libraries in the plugin's folder)");
    }

    @Override
    protected URL findResource(String name) {
        return null;
    }

    @Override
    protected Enumeration<URL> findResources(String name) {
        return Collections.emptyEnumeration();
    }
}
