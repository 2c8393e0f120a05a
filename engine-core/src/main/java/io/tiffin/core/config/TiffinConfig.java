package io.tiffin.core.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The resolved configuration of a Tiffin process: every key of {@link TiffinConfigKeys} with a
 * validated, typed value, plus the raw entries under the open prefixes ({@code storage.},
 * {@code plugin.}, {@code hotcache.policy.}) that are handed to plugins, which declare the keys they read
 * (checked by {@link io.tiffin.core.plugin.PluginRegistry#settings}) or check them themselves.
 *
 * <p>Built by {@link #builder()} from sources in increasing precedence:
 * <ol>
 *   <li>the defaults in {@link TiffinConfigKeys};</li>
 *   <li>properties files ({@link Builder#fromFile(Path)}; a later file wins over an earlier one);</li>
 *   <li>the environment ({@link Builder#fromEnvironment(Map)}): {@code TIFFIN_MASTER_LEASE_TTL} sets
 *       {@code master.lease-ttl}, plus the Mooncake aliases of {@link TiffinConfigKeys#ENV_ALIASES};</li>
 *   <li>explicit overrides ({@link Builder#set(String, String)}), e.g. from command-line flags.</li>
 * </ol>
 * {@link Builder#build()} reports every problem it finds (unknown keys with the nearest known key,
 * invalid values, broken rules between keys) together in one {@link ConfigException}.
 *
 * <p>Thread-safe (immutable).
 */
public final class TiffinConfig {
    private static final String DEFAULT_SOURCE = "default";

    private final Map<String, Object> values;
    private final Map<String, Setting> settings;
    private final Map<String, Setting> open;

    private TiffinConfig(Map<String, Object> values, Map<String, Setting> settings, Map<String, Setting> open) {
        this.values = Map.copyOf(values);
        this.settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
        this.open = Collections.unmodifiableMap(new TreeMap<>(open));
    }

    /** A new builder; without sources it yields the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /** The configuration made of the defaults only. */
    public static TiffinConfig defaults() {
        return builder().build();
    }

    /**
     * The value of {@code key}.
     *
     * @throws IllegalArgumentException if the key is not one of {@link TiffinConfigKeys#all()}
     */
    public <T> T get(ConfigKey<T> key) {
        Object v = values.get(known(key).name());
        return key.valueClass().cast(v);
    }

    /** The value of {@code key} as text: as the user wrote it, or the default's text. */
    public String raw(ConfigKey<?> key) {
        return settings.get(known(key).name()).raw();
    }

    /**
     * Where the value of {@code key} came from: {@code default}, {@code file <path>},
     * {@code environment variable <name>} or the override's source (e.g. {@code command line}).
     */
    public String source(ConfigKey<?> key) {
        return settings.get(known(key).name()).source();
    }

    /**
     * The raw entries under {@code prefix}, with the prefix removed, sorted by key. {@code prefix}
     * must lie under an open prefix, e.g. {@code storage.} or {@code storage.bucket.}; these entries
     * are not validated here (see {@link io.tiffin.core.plugin.PluginRegistry#settings}).
     *
     * @throws IllegalArgumentException if {@code prefix} is not under one of
     *     {@link TiffinConfigKeys#OPEN_PREFIXES}
     */
    public Map<String, String> withPrefix(String prefix) {
        Objects.requireNonNull(prefix, "prefix");
        if (TiffinConfigKeys.OPEN_PREFIXES.stream().noneMatch(prefix::startsWith)) {
            throw new IllegalArgumentException("prefix = " + prefix + " (expected: a prefix under one of "
                    + TiffinConfigKeys.OPEN_PREFIXES + ", e.g. storage.bucket.)");
        }
        Map<String, String> result = new TreeMap<>();
        open.forEach((k, s) -> {
            if (k.startsWith(prefix) && k.length() > prefix.length()) {
                result.put(k.substring(prefix.length()), s.raw());
            }
        });
        return Collections.unmodifiableMap(result);
    }

    /**
     * Where the open-prefix entry {@code key} (full name) was set, e.g. {@code file conf/tiffin.properties},
     * or empty if it is not set.
     */
    public Optional<String> openSource(String key) {
        Setting s = open.get(key);
        return s == null ? Optional.empty() : Optional.of(s.source());
    }

    /**
     * Every key with its raw value, known keys in definition order followed by open-prefix entries
     * in key order; for showing the effective configuration. Values of the token keys
     * ({@code transport.*-token}) are masked.
     */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        settings.forEach((k, s) -> m.put(k,
                k.startsWith("transport.") && k.endsWith("-token") && !s.raw().isEmpty() ? "****" : s.raw()));
        open.forEach((k, s) -> m.put(k, s.raw()));
        return Collections.unmodifiableMap(m);
    }

    private ConfigKey<?> known(ConfigKey<?> key) {
        Objects.requireNonNull(key, "key");
        Optional<ConfigKey<?>> k = TiffinConfigKeys.byName(key.name());
        if (k.isEmpty() || k.get() != key) {
            throw new IllegalArgumentException("key " + key.name() + " is not defined in TiffinConfigKeys");
        }
        return key;
    }

    /** A raw value and where it came from. */
    private record Setting(String raw, String source) {
    }

    /**
     * Collects configuration sources and resolves them. Sources may be added in any order;
     * precedence is fixed (defaults &lt; files &lt; environment &lt; overrides). Files are read and
     * everything is validated in {@link #build()}.
     *
     * <p>Not thread-safe: use from one thread.
     */
    public static final class Builder {
        private final List<Path> files = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private final Map<String, Setting> overrides = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Adds a properties file ({@link Properties} format, UTF-8). A file that does not exist is an
         * error reported by {@link #build()}, naming the path.
         */
        public Builder fromFile(Path file) {
            files.add(Objects.requireNonNull(file, "file"));
            return this;
        }

        /**
         * Adds the environment, e.g. {@code System.getenv()}. Variables named {@code TIFFIN_<KEY>}
         * ({@code KEY} = the key's name in upper case with '.' and '-' as '_') and the Mooncake
         * aliases in {@link TiffinConfigKeys#ENV_ALIASES} set keys; the launcher's own variables
         * ({@link TiffinConfigKeys#LAUNCHER_ENV}) are ignored; any other {@code TIFFIN_*} variable is
         * an error; variables without the prefix are ignored.
         */
        public Builder fromEnvironment(Map<String, String> environment) {
            env.putAll(environment);
            return this;
        }

        /** Sets {@code key} explicitly, with source {@code command line}; the highest precedence. */
        public Builder set(String key, String value) {
            return set(key, value, "command line");
        }

        /**
         * Sets {@code key} explicitly; {@code source} names where the value came from in messages,
         * e.g. {@code flag --port}. A later call for the same key wins.
         */
        public Builder set(String key, String value, String source) {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
            Objects.requireNonNull(source, "source");
            overrides.remove(key);
            overrides.put(key, new Setting(value, source));
            return this;
        }

        /**
         * Reads the files, applies the sources by precedence and validates every value and the rules
         * between keys.
         *
         * @throws ConfigException listing every problem found, one per line
         */
        public TiffinConfig build() {
            List<String> problems = new ArrayList<>();
            Map<String, Setting> known = new LinkedHashMap<>();
            Map<String, Setting> open = new HashMap<>();

            for (Path file : files) {
                readFile(file, problems).forEach((k, v) -> accept(k, v, "file " + file, known, open, problems));
            }
            applyEnvironment(known, problems);
            overrides.forEach((k, s) -> accept(k, s.raw(), s.source(), known, open, problems));

            Map<String, Object> values = new HashMap<>();
            Map<String, Setting> settings = new LinkedHashMap<>();
            for (ConfigKey<?> key : TiffinConfigKeys.all()) {
                Setting s = known.get(key.name());
                if (s == null) {
                    settings.put(key.name(), new Setting(key.defaultText(), DEFAULT_SOURCE));
                    values.put(key.name(), key.defaultValue());
                    continue;
                }
                settings.put(key.name(), s);
                try {
                    values.put(key.name(), key.parse(s.raw()));
                } catch (IllegalArgumentException e) {
                    problems.add(e.getMessage() + " [" + s.source() + "]");
                }
            }
            TiffinConfigKeys.crossCheck(new TiffinConfigKeys.Resolved() {
                @Override
                public <T> Optional<T> value(ConfigKey<T> key) {
                    return Optional.ofNullable(key.valueClass().cast(values.get(key.name())));
                }

                @Override
                public String describe(ConfigKey<?> key) {
                    Setting s = settings.get(key.name());
                    return key.name() + " = " + ConfigKey.quote(s.raw()) + " [" + s.source() + "]";
                }
            }, problems);

            if (!problems.isEmpty()) {
                throw new ConfigException(problems);
            }
            return new TiffinConfig(values, settings, open);
        }

        private static Map<String, String> readFile(Path file, List<String> problems) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (NoSuchFileException e) {
                problems.add("file " + file + " does not exist (expected: a readable properties file)");
                return Map.of();
            } catch (java.nio.file.AccessDeniedException e) {
                problems.add("file " + file + " cannot be read: permission denied (expected: a file this user may read)");
                return Map.of();
            } catch (java.nio.charset.CharacterCodingException e) {
                problems.add("file " + file + " is not UTF-8 text (expected: a properties file in UTF-8)");
                return Map.of();
            } catch (IOException | IllegalArgumentException e) {
                problems.add("file " + file + " cannot be read: " + (Files.isDirectory(file) ? "it is a directory"
                        : e.toString()) + " (expected: a readable properties file)");
                return Map.of();
            }
            Map<String, String> m = new TreeMap<>();
            p.stringPropertyNames().forEach(k -> m.put(k.strip(), p.getProperty(k).strip()));
            return m;
        }

        private static void accept(String key, String raw, String source, Map<String, Setting> known,
                Map<String, Setting> open, List<String> problems) {
            if (TiffinConfigKeys.byName(key).isPresent()) {
                known.put(key, new Setting(raw, source));
            } else if (TiffinConfigKeys.isOpen(key)) {
                open.put(key, new Setting(raw, source));
            } else {
                problems.add("unknown key " + key + " [" + source + "]" + suggestKey(key));
            }
        }

        private void applyEnvironment(Map<String, Setting> known, List<String> problems) {
            Map<String, ConfigKey<?>> byEnv = new LinkedHashMap<>();
            for (ConfigKey<?> k : TiffinConfigKeys.all()) {
                byEnv.put(k.envName(), k);
            }
            Map<String, String> firstVar = new HashMap<>();
            for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
                String var = e.getKey();
                ConfigKey<?> key = TiffinConfigKeys.ENV_ALIASES.get(var);
                if (key == null && var.startsWith("TIFFIN_") && !TiffinConfigKeys.LAUNCHER_ENV.contains(var)) {
                    key = byEnv.get(var);
                    if (key == null) {
                        problems.add(unknownVariable(var, byEnv));
                        continue;
                    }
                }
                if (key == null) {
                    continue;
                }
                String value = e.getValue();
                String other = firstVar.putIfAbsent(key.name(), var);
                if (other != null && !env.get(other).equals(value)) {
                    problems.add("environment variables " + other + " = " + ConfigKey.quote(env.get(other)) + " and "
                            + var + " = " + ConfigKey.quote(value) + " both set " + key.name()
                            + " (expected: only one of them, or the same value)");
                    continue;
                }
                known.put(key.name(), new Setting(value, "environment variable " + var));
            }
        }

        private static String unknownVariable(String var, Map<String, ConfigKey<?>> byEnv) {
            for (String prefix : TiffinConfigKeys.OPEN_PREFIXES) {
                String envPrefix = ConfigKey.envName(prefix.substring(0, prefix.length() - 1)) + "_";
                if (var.startsWith(envPrefix)) {
                    return "environment variable " + var + " cannot set a key under " + prefix
                            + " (expected: set such keys in the properties file or with a flag)";
                }
            }
            String best = nearest(var, byEnv.keySet());
            return "unknown environment variable " + var + " (expected: TIFFIN_ followed by a known key"
                    + (best == null ? ", see docs/CONFIGURATION.md)" : "; did you mean " + best + ", which sets "
                    + byEnv.get(best).name() + "?)");
        }

        private static String suggestKey(String key) {
            List<String> names = TiffinConfigKeys.all().stream().map(ConfigKey::name).toList();
            for (String n : names) {
                if (n.endsWith("." + key)) {
                    return " (did you mean " + n + "?)";
                }
            }
            String best = nearest(key, names);
            return best == null ? " (expected: a key listed in docs/CONFIGURATION.md, or one under "
                    + String.join(" or ", TiffinConfigKeys.OPEN_PREFIXES) + ")" : " (did you mean " + best + "?)";
        }
    }

    /** The candidate closest to {@code s} by edit distance, or null if none is close. */
    public static String nearest(String s, Iterable<String> candidates) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String c : candidates) {
            int d = levenshtein(s, c);
            if (d < bestDistance) {
                bestDistance = d;
                best = c;
            }
        }
        int limit = Math.max(2, Math.min(s.length() / 3, 4));
        return bestDistance <= limit ? best : null;
    }

    /** The edit distance (insertions, deletions, substitutions) between {@code a} and {@code b}. */
    static int levenshtein(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
