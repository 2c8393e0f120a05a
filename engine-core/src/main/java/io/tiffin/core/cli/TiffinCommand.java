package io.tiffin.core.cli;

import com.google.inject.Guice;
import com.google.inject.Stage;
import io.tiffin.core.TiffinModule;
import io.tiffin.core.config.TiffinConfig;
import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Base of every {@code tiffin} command: the configuration options and access to the streams and
 * environment of the {@link TiffinCli} that runs it.
 *
 * <p>Not thread-safe: picocli fills one instance and calls it once, on one thread.
 */
abstract class TiffinCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOptions configOptions;

    /** The root of this command line. */
    final TiffinCli cli() {
        return (TiffinCli) spec.root().userObject();
    }

    final PrintStream out() {
        return cli().out();
    }

    /**
     * Builds the configuration: file, environment, {@code -D} settings, then {@code flags} (config key
     * to value; null values are skipped), each flag recorded with the source {@code flag --name}.
     *
     * @param flags config key → (flag name, value), in order
     * @throws io.tiffin.core.config.ConfigException listing every problem
     */
    final TiffinConfig config(Map<String, Flag> flags) {
        TiffinConfig.Builder b = configOptions.builder(cli().env());
        flags.forEach((key, flag) -> {
            if (flag.value() != null) {
                b.set(key, flag.value(), "flag " + flag.name());
            }
        });
        return b.build();
    }

    /**
     * One component's settings (e.g. {@code TiffinClient.Options}) from the wiring of
     * {@link TiffinModule}, creating only what that component needs (no plugins are loaded for a
     * client or a node).
     */
    static <T> T component(TiffinConfig config, Class<T> type) {
        return io.tiffin.core.Tiffin.unwrapped(
                () -> Guice.createInjector(Stage.DEVELOPMENT, new TiffinModule(config)).getInstance(type));
    }

    /** An empty, ordered flag map for {@link #config(Map)}. */
    static Map<String, Flag> flags() {
        return new LinkedHashMap<>();
    }

    /**
     * A flag's name and value (null when the flag was not given).
     *
     * <p>Thread-safe (immutable).
     */
    record Flag(String name, String value) {
    }
}
