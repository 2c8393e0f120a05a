package io.tiffin.core.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link CpuCaches}: the last-level cache as sysfs lists it, and a fallback where it cannot be read. */
class CpuCachesTest {
    @TempDir
    Path dir;

    @Test
    void theLargestCacheOfTheHighestLevelIsTheLastLevel() throws IOException {
        cache(0, "1", "32K");
        cache(1, "1", "32K");
        cache(2, "2", "1024K");
        cache(3, "3", "32768K");
        assertThat(CpuCaches.lastLevelBytes(dir)).isEqualTo(32L << 20);
    }

    @Test
    void anUnreadableEntryIsSkippedAndNoCacheAtAllGivesTheFallback() throws IOException {
        assertThat(CpuCaches.lastLevelBytes(dir.resolve("absent"))).isEqualTo(CpuCaches.FALLBACK_BYTES);
        cache(0, "1", "48K");
        cache(1, "2", "2M");
        cache(2, "3", "unknown");
        assertThat(CpuCaches.lastLevelBytes(dir)).isEqualTo(2L << 20);
    }

    @Test
    void sizesAreReadInTheUnitsSysfsWrites() {
        assertThat(CpuCaches.parseSize("512")).isEqualTo(512);
        assertThat(CpuCaches.parseSize("32768K")).isEqualTo(32L << 20);
        assertThat(CpuCaches.parseSize("2M")).isEqualTo(2L << 20);
        assertThat(CpuCaches.parseSize("1G")).isEqualTo(1L << 30);
        assertThatThrownBy(() -> CpuCaches.parseSize("K")).isInstanceOf(NumberFormatException.class);
    }

    @Test
    void thisMachinesLastLevelIsAPlausibleSize() {
        assertThat(CpuCaches.lastLevelBytes()).isBetween(64L << 10, 4L << 30);
    }

    private void cache(int index, String level, String size) throws IOException {
        Path d = Files.createDirectories(dir.resolve("index" + index));
        Files.writeString(d.resolve("level"), level + "\n");
        Files.writeString(d.resolve("size"), size + "\n");
    }
}
