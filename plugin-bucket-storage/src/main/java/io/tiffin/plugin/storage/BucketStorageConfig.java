package io.tiffin.plugin.storage;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.math.BigDecimal;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Configuration of a {@link BucketStorageBackend}, read from the plugin's properties (host prefix, e.g.
 * {@code storage.bucket.}, removed). Thread-safe (immutable record).
 *
 * <table>
 *   <caption>Keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code path}</td><td>(required)</td><td>directory of the bucket files and the index; created
 *       if missing</td></tr>
 *   <tr><td>{@code capacity}</td><td>0</td><td>bytes the bucket files may take; 0 = the free space of the
 *       file system holding {@code path} when the backend opens, plus the bucket files already there. Either way
 *       never more than the disk holds at each write (the bucket files plus its free space, less a twentieth, at
 *       most 64 MiB, for the index and whatever else grows there): the watermarks apply to that, so a disk that
 *       fills makes the backend evict ({@code DiskRoom}); a larger value is accepted with a warning</td></tr>
 *   <tr><td>{@code high-watermark}</td><td>0.90</td><td>fraction of the capacity above which a write first
 *       evicts buckets</td></tr>
 *   <tr><td>{@code low-watermark}</td><td>0.80</td><td>fraction of the capacity eviction brings usage
 *       down to</td></tr>
 *   <tr><td>{@code eviction}</td><td>fifo</td><td>{@code fifo} (oldest bucket first) or {@code lru} (least
 *       recently read bucket first)</td></tr>
 *   <tr><td>{@code bucket-max-bytes}</td><td>256MiB</td><td>most bytes per bucket file (an object larger
 *       than this gets a bucket of its own)</td></tr>
 *   <tr><td>{@code bucket-max-keys}</td><td>500</td><td>most objects per bucket file</td></tr>
 *   <tr><td>{@code direct-io}</td><td>true</td><td>read with O_DIRECT (falling back to buffered reads per
 *       file where the file system refuses it); false = buffered reads only</td></tr>
 * </table>
 * Sizes take a plain number of bytes or a 1024-based unit: {@code 64KiB}, {@code 256MiB}, {@code 2GiB}.
 *
 * @param path directory of the backend
 * @param capacityBytes 0 = the file system's free space at open plus the bucket files there
 * @param highWatermark in (0, 1]
 * @param lowWatermark in (0, highWatermark)
 * @param eviction bucket eviction order
 * @param bucketMaxBytes > 0
 * @param bucketMaxKeys > 0
 * @param directIo whether reads use O_DIRECT
 */
public record BucketStorageConfig(Path path, long capacityBytes, double highWatermark, double lowWatermark,
        EvictionPolicy eviction, long bucketMaxBytes, int bucketMaxKeys, boolean directIo) {

    public static final long DEFAULT_BUCKET_MAX_BYTES = 256L << 20;
    public static final int DEFAULT_BUCKET_MAX_KEYS = 500;
    public static final double DEFAULT_HIGH_WATERMARK = 0.90;
    public static final double DEFAULT_LOW_WATERMARK = 0.80;

    /** The keys a node's configuration sets, as {@code storage.bucket.<key>}; {@code path} comes from the node. */
    static final Set<String> SETTINGS = Set.of("capacity", "high-watermark", "low-watermark", "eviction",
            "bucket-max-bytes", "bucket-max-keys", "direct-io");
    private static final Set<String> KEYS = union(SETTINGS, "path");

    public BucketStorageConfig {
        if (path == null) {
            throw new IllegalArgumentException("path = null (expected: the directory for bucket files)");
        }
        if (capacityBytes < 0) {
            throw new IllegalArgumentException("capacity = " + capacityBytes
                    + " (expected: >= 0 bytes; 0 = the size of the file system)");
        }
        if (!(highWatermark > 0 && highWatermark <= 1)) {
            throw new IllegalArgumentException("high-watermark = " + highWatermark + " (expected: in (0, 1], e.g. 0.90)");
        }
        if (!(lowWatermark > 0 && lowWatermark < highWatermark)) {
            throw new IllegalArgumentException("low-watermark = " + lowWatermark + " (expected: > 0 and below "
                    + "high-watermark = " + highWatermark + ", e.g. 0.80)");
        }
        if (eviction == null) {
            throw new IllegalArgumentException("eviction = null (expected: fifo or lru)");
        }
        if (bucketMaxBytes <= 0) {
            throw new IllegalArgumentException("bucket-max-bytes = " + bucketMaxBytes + " (expected: > 0, e.g. 256MiB)");
        }
        if (bucketMaxKeys <= 0) {
            throw new IllegalArgumentException("bucket-max-keys = " + bucketMaxKeys + " (expected: > 0, e.g. 500)");
        }
    }

    /** The defaults for a directory. */
    public static BucketStorageConfig defaults(Path path) {
        return new BucketStorageConfig(path, 0, DEFAULT_HIGH_WATERMARK, DEFAULT_LOW_WATERMARK, EvictionPolicy.FIFO,
                DEFAULT_BUCKET_MAX_BYTES, DEFAULT_BUCKET_MAX_KEYS, true);
    }

    public BucketStorageConfig withCapacity(long bytes) {
        return new BucketStorageConfig(path, bytes, highWatermark, lowWatermark, eviction, bucketMaxBytes,
                bucketMaxKeys, directIo);
    }

    public BucketStorageConfig withWatermarks(double high, double low) {
        return new BucketStorageConfig(path, capacityBytes, high, low, eviction, bucketMaxBytes, bucketMaxKeys,
                directIo);
    }

    public BucketStorageConfig withEviction(EvictionPolicy policy) {
        return new BucketStorageConfig(path, capacityBytes, highWatermark, lowWatermark, policy, bucketMaxBytes,
                bucketMaxKeys, directIo);
    }

    public BucketStorageConfig withBucketLimits(long maxBytes, int maxKeys) {
        return new BucketStorageConfig(path, capacityBytes, highWatermark, lowWatermark, eviction, maxBytes, maxKeys,
                directIo);
    }

    public BucketStorageConfig withDirectIo(boolean direct) {
        return new BucketStorageConfig(path, capacityBytes, highWatermark, lowWatermark, eviction, bucketMaxBytes,
                bucketMaxKeys, direct);
    }

    /**
     * Reads the configuration from plugin properties.
     *
     * @throws TiffinException {@link ErrorCode#INVALID_PARAMS} naming the key, the value and what was
     *     expected, for a missing {@code path}, an unknown key or a bad value
     */
    public static BucketStorageConfig from(Map<String, String> properties) {
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(KEYS);
        if (!unknown.isEmpty()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "unknown bucket storage keys " + unknown
                    + " (expected: some of " + new TreeSet<>(KEYS) + ")");
        }
        String pathText = properties.get("path");
        if (pathText == null || pathText.isBlank()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "path is not set (expected: the directory for "
                    + "bucket files; on a node, node.storage-path=/data/tiffin/ssd)");
        }
        try {
            Path path;
            try {
                path = Path.of(pathText.strip());
            } catch (InvalidPathException e) {
                throw new IllegalArgumentException("path = " + pathText + " (expected: a directory path)", e);
            }
            return new BucketStorageConfig(path,
                    size(properties, "capacity", 0),
                    fraction(properties, "high-watermark", DEFAULT_HIGH_WATERMARK),
                    fraction(properties, "low-watermark", DEFAULT_LOW_WATERMARK),
                    properties.containsKey("eviction") ? EvictionPolicy.parse("eviction", properties.get("eviction"))
                            : EvictionPolicy.FIFO,
                    size(properties, "bucket-max-bytes", DEFAULT_BUCKET_MAX_BYTES),
                    (int) Math.min(Integer.MAX_VALUE, integer(properties, "bucket-max-keys", DEFAULT_BUCKET_MAX_KEYS)),
                    bool(properties, "direct-io", true));
        } catch (IllegalArgumentException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "bucket storage: " + e.getMessage(), e);
        }
    }

    private static double fraction(Map<String, String> p, String key, double def) {
        String v = p.get(key);
        if (v == null) {
            return def;
        }
        try {
            return Double.parseDouble(v.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a fraction such as 0.85)", e);
        }
    }

    private static long integer(Map<String, String> p, String key, long def) {
        String v = p.get(key);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a whole number such as 500)", e);
        }
    }

    private static boolean bool(Map<String, String> p, String key, boolean def) {
        String v = p.get(key);
        if (v == null) {
            return def;
        }
        return switch (v.strip().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(key + " = " + v + " (expected: true or false)");
        };
    }

    /** Parses a size: bytes, or a number with a 1024-based unit (k/KiB/KB, m/MiB/MB, g/GiB/GB, t/TiB/TB). */
    static long size(Map<String, String> p, String key, long def) {
        String v = p.get(key);
        if (v == null) {
            return def;
        }
        String s = v.strip();
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
            i++;
        }
        String unit = s.substring(i).strip().toLowerCase(Locale.ROOT);
        long multiplier = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kb", "kib" -> 1L << 10;
            case "m", "mb", "mib" -> 1L << 20;
            case "g", "gb", "gib" -> 1L << 30;
            case "t", "tb", "tib" -> 1L << 40;
            default -> throw new IllegalArgumentException(key + " = " + v
                    + " (expected: bytes or a size with unit B, KiB, MiB, GiB or TiB, e.g. 256MiB)");
        };
        try {
            return new BigDecimal(s.substring(0, i)).multiply(BigDecimal.valueOf(multiplier)).longValueExact();
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(key + " = " + v + " (expected: a whole number of bytes up to "
                    + Long.MAX_VALUE + ", e.g. 256MiB)", e);
        }
    }

    private static Set<String> union(Set<String> keys, String key) {
        Set<String> all = new java.util.HashSet<>(keys);
        all.add(key);
        return Set.copyOf(all);
    }
}
