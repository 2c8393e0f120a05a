package io.tiffin.core.plugin;

import java.net.URL;
import java.net.URLClassLoader;

/**
 * The class loader of one plugin folder: its jars, over an {@link ApiOnlyClassLoader}. A class of
 * Tiffin's own outside the API ({@code io.tiffin.*} but not {@code io.tiffin.api.*}) that the plugin
 * asks for is refused with the reason — the plugin reaches into the engine's internals — instead of
 * {@code URLClassLoader}'s bare class name (which then surfaces as a {@code NoClassDefFoundError} far
 * from its cause, at the plugin's first call).
 *
 * <p>Thread-safe (registered as parallel capable; adds no state to {@link URLClassLoader}).
 */
final class PluginClassLoader extends URLClassLoader {
    static {
        registerAsParallelCapable();
    }

    PluginClassLoader(String name, URL[] urls) {
        super(name, urls, new ApiOnlyClassLoader());
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        try {
            return super.findClass(name);
        } catch (ClassNotFoundException e) {
            if (name.startsWith("io.tiffin.") && !name.startsWith(ApiOnlyClassLoader.API_PACKAGE_PREFIX)) {
                throw new ClassNotFoundException(name + " is part of the Tiffin engine, which plugins cannot use:"
                        + " plugins see the JDK, " + ApiOnlyClassLoader.API_PACKAGE_PREFIX + "* (engine-api) and the"
                        + " jars of their own folder only", e);
            }
            throw e;
        }
    }
}
