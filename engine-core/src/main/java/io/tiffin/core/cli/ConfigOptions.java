package io.tiffin.core.cli;

import io.tiffin.core.config.TiffinConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Stack;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The options every command accepts for configuration: {@code --config FILE} and repeated
 * {@code -D KEY=VALUE} / {@code --set KEY=VALUE}.
 *
 * <p>Precedence, lowest first: defaults, the properties file, {@code TIFFIN_*} environment variables,
 * {@code -D}/{@code --set}, then the command's own flags (e.g. {@code --port}).
 *
 * <p>Not thread-safe: filled by picocli and read by the command on one thread.
 */
final class ConfigOptions {
    /** The file read when no {@code --config} is given, if it exists. */
    static final String DEFAULT_FILE_NAME = "tiffin.properties";

    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties file with configuration keys; repeatable, a later file wins (default: "
                    + "$TIFFIN_CONF_DIR/tiffin.properties or <tiffin home>/conf/tiffin.properties, if it exists).")
    java.util.List<Path> files = new java.util.ArrayList<>();

    @Option(names = {"-D", "--set"}, paramLabel = "KEY=VALUE", parameterConsumer = KeyValue.class,
            description = "Sets any configuration key, e.g. -D master.lease-ttl=5s; repeatable.")
    Map<String, String> settings = new LinkedHashMap<>();

    /**
     * A builder with the file, the environment and the {@code -D} settings applied; the caller adds
     * its flags and builds.
     */
    TiffinConfig.Builder builder(Map<String, String> env) {
        TiffinConfig.Builder b = TiffinConfig.builder();
        if (files.isEmpty()) {
            defaultFile(env).ifPresent(b::fromFile);
        } else {
            files.forEach(b::fromFile);
        }
        b.fromEnvironment(env);
        settings.forEach((k, v) -> b.set(k, v, "option -D " + k));
        return b;
    }

    /**
     * {@code <conf dir>/tiffin.properties} if it exists, where the conf dir is the system property
     * {@code tiffin.conf.dir} (set by the launcher), else {@code $TIFFIN_CONF_DIR}, else
     * {@code <tiffin.home>/conf}.
     */
    static Optional<Path> defaultFile(Map<String, String> env) {
        String confDir = System.getProperty("tiffin.conf.dir");
        if (confDir == null || confDir.isBlank()) {
            confDir = env.get("TIFFIN_CONF_DIR");
        }
        if (confDir == null || confDir.isBlank()) {
            String home = System.getProperty("tiffin.home");
            confDir = home == null || home.isBlank() ? null : Path.of(home, "conf").toString();
        }
        if (confDir == null) {
            return Optional.empty();
        }
        Path p = Path.of(confDir, DEFAULT_FILE_NAME);
        return Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }

    /**
     * Reads one {@code -D}/{@code --set} value: {@code KEY=VALUE} (split at the first '=', so the value may hold more),
     * else a usage error that names the option once and says what to write. Picocli's own message for a map
     * option's value without '=' says "option" twice ({@code Value for option option '--set' (KEY=VALUE) should
     * be in KEY=VALUE format but was foo}).
     *
     * <p>Thread-safe (stateless).
     */
    static final class KeyValue implements CommandLine.IParameterConsumer {
        @Override
        public void consumeParameters(Stack<String> args, ArgSpec argSpec, CommandSpec commandSpec) {
            if (args.isEmpty()) {
                throw new ParameterException(commandSpec.commandLine(), "Missing value for option '--set' (-D):"
                        + " expected KEY=VALUE, e.g. -D master.lease-ttl=5s", argSpec, null);
            }
            String arg = args.pop();
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new ParameterException(commandSpec.commandLine(), "Invalid value for option '--set' (-D): '"
                        + arg + "' is not KEY=VALUE" + (eq == 0 ? " (the key is empty)" : "")
                        + "; write e.g. -D master.lease-ttl=5s", argSpec, arg);
            }
            Map<String, String> map = argSpec.getValue();
            if (map == null) {
                map = new LinkedHashMap<>();
                argSpec.setValue(map);
            }
            map.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
    }
}
