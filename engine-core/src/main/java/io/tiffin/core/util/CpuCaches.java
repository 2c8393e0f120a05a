package io.tiffin.core.util;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The size of this machine's last-level CPU cache, read once from Linux's sysfs ({@code
 * /sys/devices/system/cpu/cpu0/cache/index*}): the largest cache of the highest level listed. Large copies use it
 * to tell whether their destination can still be in the caches.
 *
 * <p>Thread-safe (immutable after class initialization).
 */
public final class CpuCaches {
    /** Where sysfs is absent or unreadable (another OS, a container hiding it): a server CPU's usual size. */
    static final long FALLBACK_BYTES = 32L << 20;
    private static final long LAST_LEVEL_BYTES = lastLevelBytes(Path.of("/sys/devices/system/cpu/cpu0/cache"));

    private CpuCaches() {
    }

    /** Bytes of the last-level cache of the CPU the process runs on. */
    public static long lastLevelBytes() {
        return LAST_LEVEL_BYTES;
    }

    /** The largest cache of the highest level under {@code cacheDir}, or {@link #FALLBACK_BYTES} if none is read. */
    static long lastLevelBytes(Path cacheDir) {
        int bestLevel = 0;
        long bestBytes = 0;
        for (int i = 0; i < 16; i++) {
            Path index = cacheDir.resolve("index" + i);
            if (!Files.isDirectory(index)) {
                break;
            }
            try {
                int level = Integer.parseInt(Files.readString(index.resolve("level")).strip());
                long bytes = parseSize(Files.readString(index.resolve("size")).strip());
                if (level > bestLevel || (level == bestLevel && bytes > bestBytes)) {
                    bestLevel = level;
                    bestBytes = bytes;
                }
            } catch (IOException | RuntimeException unreadable) {
                // an entry the kernel does not fill in: skip it
            }
        }
        return bestBytes > 0 ? bestBytes : FALLBACK_BYTES;
    }

    /** sysfs sizes: {@code 32768K}, {@code 2M}, or plain bytes. */
    static long parseSize(String text) {
        String s = text.toUpperCase(Locale.ROOT);
        long unit = 1;
        if (s.endsWith("K")) {
            unit = 1L << 10;
        } else if (s.endsWith("M")) {
            unit = 1L << 20;
        } else if (s.endsWith("G")) {
            unit = 1L << 30;
        }
        return Long.parseLong(unit == 1 ? s : s.substring(0, s.length() - 1)) * unit;
    }
}
