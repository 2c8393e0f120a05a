package io.tiffin.core.config;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One typed configuration key: its name, value type, default, unit, validation and a one-line
 * description. Keys are defined in one place, {@link TiffinConfigKeys}; values are read with
 * {@link TiffinConfig#get(ConfigKey)}.
 *
 * <p>The default is given as text and parsed by the key's own parser when the key is created, so a
 * default that the key would reject fails at class initialisation, and the documented default is
 * exactly what a user could write.
 *
 * <p>Thread-safe (immutable).
 *
 * @param <T> the Java type of the value
 */
public final class ConfigKey<T> {
    private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9]*(-[a-z0-9]+)*(\\.[a-z][a-z0-9]*(-[a-z0-9]+)*)+");
    private static final Pattern PLUGIN_NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");

    private final String name;
    private final String type;
    private final Class<T> valueClass;
    private final String defaultText;
    private final T defaultValue;
    private final String unit;
    private final String constraint;
    private final String expected;
    private final String description;
    private final Function<String, T> parser;

    private ConfigKey(String name, String type, Class<T> valueClass, String defaultText, String unit,
            String constraint, String expected, String description, Function<String, T> parser) {
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("key name = " + name
                    + " (expected: dot-separated lower-case words joined by '-', e.g. master.lease-ttl)");
        }
        this.name = name;
        this.type = Objects.requireNonNull(type, "type");
        this.valueClass = Objects.requireNonNull(valueClass, "valueClass");
        this.defaultText = Objects.requireNonNull(defaultText, "defaultText");
        this.unit = Objects.requireNonNull(unit, "unit");
        this.constraint = Objects.requireNonNull(constraint, "constraint");
        this.description = Objects.requireNonNull(description, "description");
        this.parser = Objects.requireNonNull(parser, "parser");
        String example = defaultText.isEmpty() ? "" : ", e.g. " + defaultText;
        this.expected = Objects.requireNonNull(expected, "expected") + example;
        try {
            this.defaultValue = parser.apply(defaultText);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("default of " + name + " = " + defaultText + " is invalid (expected: "
                    + this.expected + ")", e);
        }
    }

    // ----------------------------------------------------------------------------------- factories

    /** A free-form string; any value, including the empty string, is valid. */
    public static ConfigKey<String> string(String name, String defaultValue, String description) {
        return new ConfigKey<>(name, "string", String.class, defaultValue, "", "", "any text", description,
                s -> s);
    }

    /**
     * A host name or IP address: not empty, no blanks. With {@code advertised}, also not a wildcard
     * ({@code 0.0.0.0}, {@code ::}): the value is given to other machines to connect to, and a wildcard
     * would send them to themselves.
     */
    public static ConfigKey<String> host(String name, String defaultValue, boolean advertised, String description) {
        String expected = advertised ? "a host name or address other machines can reach (not 0.0.0.0 or ::)"
                : "a host name or address (0.0.0.0 = every interface)";
        return new ConfigKey<>(name, "host", String.class, defaultValue, "", "", expected, description, s -> {
            String v = s.strip();
            if (v.isEmpty() || v.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException(s);
            }
            if (advertised && WILDCARDS.contains(v)) {
                throw new IllegalArgumentException(s);
            }
            return v;
        });
    }

    private static final java.util.Set<String> WILDCARDS = java.util.Set.of("0.0.0.0", "::", "[::]", "*",
            "0:0:0:0:0:0:0:0");

    /**
     * The name of a plugin factory (lower-case words joined by '-', e.g. {@code random}). Only the
     * form is checked here; whether such a factory is installed is checked when plugins are loaded.
     */
    public static ConfigKey<String> pluginName(String name, String defaultValue, String description) {
        return new ConfigKey<>(name, "name", String.class, defaultValue, "", "",
                "a plugin factory name (lower-case letters, digits and '-')", description, s -> {
                    String v = s.strip();
                    if (!PLUGIN_NAME.matcher(v).matches()) {
                        throw new IllegalArgumentException(s);
                    }
                    return v;
                });
    }

    /** A boolean: {@code true/false}, {@code yes/no}, {@code on/off} or {@code 1/0}, any case. */
    public static ConfigKey<Boolean> bool(String name, boolean defaultValue, String description) {
        return new ConfigKey<>(name, "boolean", Boolean.class, Boolean.toString(defaultValue), "", "",
                "true or false", description, s -> switch (s.strip().toLowerCase(Locale.ROOT)) {
                    case "true", "yes", "on", "1" -> Boolean.TRUE;
                    case "false", "no", "off", "0" -> Boolean.FALSE;
                    default -> throw new IllegalArgumentException(s);
                });
    }

    /** An int in {@code [min, max]}; {@code unit} names what it counts (may be empty). */
    public static ConfigKey<Integer> integer(String name, int defaultValue, int min, int max, String unit,
            String description) {
        String range = min + ".." + max;
        return new ConfigKey<>(name, "int", Integer.class, Integer.toString(defaultValue), unit, range,
                "an integer " + range + (unit.isEmpty() ? "" : " (" + unit + ")"), description, s -> {
                    long v = Long.parseLong(s.strip());
                    if (v < min || v > max) {
                        throw new IllegalArgumentException(s);
                    }
                    return (int) v;
                });
    }

    /** A long in {@code [min, max]}; {@code unit} names what it counts (may be empty). */
    public static ConfigKey<Long> longInteger(String name, long defaultValue, long min, long max, String unit,
            String description) {
        String range = min + ".." + max;
        return new ConfigKey<>(name, "long", Long.class, Long.toString(defaultValue), unit, range,
                "an integer " + range + (unit.isEmpty() ? "" : " (" + unit + ")"), description, s -> {
                    long v = Long.parseLong(s.strip());
                    if (v < min || v > max) {
                        throw new IllegalArgumentException(s);
                    }
                    return v;
                });
    }

    /** A TCP port, 0..65535; 0 means any free port where the key says so. */
    public static ConfigKey<Integer> port(String name, int defaultValue, String description) {
        return integer(name, defaultValue, 0, 65535, "", description);
    }

    /**
     * A size in bytes in {@code [min, max]}, written as described in {@link Sizes}, e.g. {@code 16MiB}.
     */
    public static ConfigKey<Long> size(String name, String defaultValue, long min, long max, String description) {
        String range = max == Long.MAX_VALUE ? ">= " + Sizes.format(min) : Sizes.format(min) + ".." + Sizes.format(max);
        return new ConfigKey<>(name, "size", Long.class, defaultValue, "bytes", range,
                "a size in bytes " + range + " (units: B, KiB, MiB, GiB, TiB; all 1024-based)", description, s -> {
                    long v = Sizes.parse(s);
                    if (v < min || v > max) {
                        throw new IllegalArgumentException(s);
                    }
                    return v;
                });
    }

    /**
     * A duration &gt;= 0 where 0 turns a feature off, written as described in {@link Durations}; a plain
     * number is read in {@code plainUnit}.
     */
    public static ConfigKey<Duration> durationOrZero(String name, String defaultValue, ChronoUnit plainUnit,
            String description) {
        String suffix = Durations.suffix(plainUnit);
        return new ConfigKey<>(name, "duration", Duration.class, defaultValue, suffix, ">= 0",
                "a duration >= 0, 0 = off (units: ms, s, m, h, d; a plain number is in " + suffix + ")", description,
                s -> {
                    Duration d = Durations.parse(s, plainUnit);
                    if (d.isNegative()) {
                        throw new IllegalArgumentException(s);
                    }
                    return d;
                });
    }

    /**
     * A duration &gt; 0, written as described in {@link Durations}; a plain number is read in
     * {@code plainUnit}.
     */
    public static ConfigKey<Duration> duration(String name, String defaultValue, ChronoUnit plainUnit,
            String description) {
        String suffix = Durations.suffix(plainUnit);
        return new ConfigKey<>(name, "duration", Duration.class, defaultValue, suffix, "> 0",
                "a duration > 0 (units: ms, s, m, h, d; a plain number is in " + suffix + ")", description, s -> {
                    Duration d = Durations.parse(s, plainUnit);
                    if (d.isZero() || d.isNegative()) {
                        throw new IllegalArgumentException(s);
                    }
                    return d;
                });
    }

    /** A finite number between {@code min} and {@code max}, each bound inclusive or not. */
    public static ConfigKey<Double> ratio(String name, double defaultValue, double min, boolean minInclusive,
            double max, boolean maxInclusive, String description) {
        String range = (minInclusive ? "[" : "(") + fmt(min) + ", " + fmt(max) + (maxInclusive ? "]" : ")");
        return new ConfigKey<>(name, "ratio", Double.class, fmt(defaultValue), "", range,
                "a number in " + range, description, s -> {
                    double v = Double.parseDouble(s.strip());
                    boolean ok = Double.isFinite(v)
                            && (minInclusive ? v >= min : v > min)
                            && (maxInclusive ? v <= max : v < max);
                    if (!ok) {
                        throw new IllegalArgumentException(s);
                    }
                    return v;
                });
    }

    /** One of a fixed set of strings (compared case-sensitively). */
    public static ConfigKey<String> choice(String name, String defaultValue, List<String> choices,
            String description) {
        List<String> allowed = List.copyOf(choices);
        String list = String.join(", ", allowed);
        return new ConfigKey<>(name, "choice", String.class, defaultValue, "", "one of " + list,
                "one of " + list, description, s -> {
                    String v = s.strip();
                    if (!allowed.contains(v)) {
                        throw new IllegalArgumentException(s);
                    }
                    return v;
                });
    }

    /**
     * Certificate common names separated by commas (blanks around them ignored): each an exact name, or a
     * prefix ending in {@code *}; empty = none.
     */
    public static ConfigKey<List<String>> commonNames(String name, String description) {
        @SuppressWarnings("unchecked")
        Class<List<String>> type = (Class<List<String>>) (Class<?>) List.class;
        return new ConfigKey<>(name, "names", type, "", "", "", "certificate common names separated by commas,"
                + " each exact or a prefix ending in * (e.g. node-*)", description, s -> {
                    List<String> names = new java.util.ArrayList<>();
                    for (String part : s.split(",", -1)) {
                        String n = part.strip();
                        if (n.isEmpty() && s.isBlank()) {
                            continue;
                        }
                        if (n.isEmpty() || n.indexOf('*') >= 0 && n.indexOf('*') != n.length() - 1) {
                            throw new IllegalArgumentException(s);
                        }
                        names.add(n);
                    }
                    return List.copyOf(names);
                });
    }

    /**
     * One or more {@code host:port} addresses separated by commas (each as {@link HostPort}); the value is the list
     * as written, blanks removed.
     */
    public static ConfigKey<String> addressList(String name, String defaultValue, String description) {
        return new ConfigKey<>(name, "addresses", String.class, defaultValue, "", "host:port[,host:port...]",
                "host:port, or several separated by commas", description, s -> {
                    java.util.List<String> parts = new java.util.ArrayList<>();
                    for (String p : s.split(",")) {
                        if (!p.isBlank()) {
                            parts.add(HostPort.parse(p).toString());
                        }
                    }
                    if (parts.isEmpty()) {
                        throw new IllegalArgumentException(s);
                    }
                    return String.join(",", parts);
                });
    }

    /** A {@code host:port} network address (see {@link HostPort}). */
    public static ConfigKey<HostPort> address(String name, String defaultValue, String description) {
        return new ConfigKey<>(name, "address", HostPort.class, defaultValue, "", "host:port",
                "host:port with a port 1..65535", description, HostPort::parse);
    }

    private static String fmt(double d) {
        return d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) : Double.toString(d);
    }

    // ----------------------------------------------------------------------------------- accessors

    /** The key's name, e.g. {@code master.lease-ttl}. */
    public String name() {
        return name;
    }

    /** The type's short name: string, name, boolean, int, long, size, duration, ratio, choice, address. */
    public String type() {
        return type;
    }

    /** The Java class of values. */
    public Class<T> valueClass() {
        return valueClass;
    }

    /** The default value. */
    public T defaultValue() {
        return defaultValue;
    }

    /** The default as written in the reference documentation. */
    public String defaultText() {
        return defaultText;
    }

    /**
     * The unit: {@code bytes} for sizes, the plain-number unit for durations (e.g. {@code ms}), what
     * an integer counts, or empty.
     */
    public String unit() {
        return unit;
    }

    /** The accepted range or form in a few words, e.g. {@code 1KiB..64MiB} or {@code > 0}; may be empty. */
    public String constraint() {
        return constraint;
    }

    /** What a value must look like, for error messages, e.g. {@code a duration > 0 (...), e.g. 10s}. */
    public String expected() {
        return expected;
    }

    /** One line saying what the key does. */
    public String description() {
        return description;
    }

    /** The environment variable that sets the key: {@code TIFFIN_} plus the name in upper case, '.' and '-' as '_'. */
    public String envName() {
        return envName(name);
    }

    static String envName(String keyName) {
        return "TIFFIN_" + keyName.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    /**
     * Parses and validates {@code raw}.
     *
     * @throws IllegalArgumentException with a message {@code <key> = <raw> (expected: ...)} if the
     *     value is invalid
     */
    public T parse(String raw) {
        Objects.requireNonNull(raw, "raw");
        try {
            return parser.apply(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + " = " + quote(raw) + " (expected: " + expected + ")", e);
        }
    }

    static String quote(String raw) {
        return raw.isEmpty() || !raw.strip().equals(raw) ? "\"" + raw + "\"" : raw;
    }

    @Override
    public String toString() {
        return name;
    }
}
