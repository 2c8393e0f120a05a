package io.tiffin.bench;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * How a benchmark names the keys it writes. The master keeps every key in an ordered index, whose cost per new key
 * depends on where keys land in that order: next to the last one written, or anywhere.
 *
 * <p>Thread-safe (no state); the {@link SplittableRandom} passed in is the caller's.
 */
public enum KeyShape {
    /** {@code <prefix><n>}: numbered keys, each writer's in ascending runs (Mooncake's master_bench names keys so). */
    NUMBERED,
    /**
     * {@code <prefix>@1@0@<chunk hash>@bfloat16}: as LMCache names its chunks ({@code
     * model@world_size@worker_id@chunk_hash@dtype}), the chunk hash a random 64-bit number in hex, so every key lands
     * at a random place among the others.
     */
    LMCACHE;

    /** The shape named {@code name} ({@code numbered} or {@code lmcache}, any case). */
    public static KeyShape named(String name) {
        try {
            return valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": expected numbered or lmcache", e);
        }
    }

    /** The {@code n}th key of a writer whose keys begin with {@code prefix}; {@code random} gives LMCache's hashes. */
    public String key(String prefix, long n, SplittableRandom random) {
        return switch (this) {
            case NUMBERED -> prefix + n;
            case LMCACHE -> prefix + "@1@0@" + Long.toHexString(random.nextLong()) + "@bfloat16";
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
