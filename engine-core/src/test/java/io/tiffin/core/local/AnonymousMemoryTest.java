package io.tiffin.core.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A segment's memory is mapped, not cleared: backed as it is written, or all at once when asked; unmapped once. */
class AnonymousMemoryTest {
    private static final long MIB = 1L << 20;

    @BeforeEach
    void onLinux() {
        assumeTrue(AnonymousMemory.mapsLazily(), "mmap through the C library (Linux)");
    }

    /** This process's resident bytes, from /proc/self/statm. */
    private static long residentBytes() throws IOException {
        String[] fields = Files.readString(Path.of("/proc/self/statm")).trim().split(" ");
        return Long.parseLong(fields[1]) * AnonymousMemory.PAGE;
    }

    @Test
    void memoryIsZeroAndBackedOnlyWhereWritten() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            long before = residentBytes();
            MemorySegment m = AnonymousMemory.map(512 * MIB, arena);
            assertThat(m.byteSize()).isEqualTo(512 * MIB);
            assertThat(m.address() % AnonymousMemory.PAGE).isZero();
            assertThat(residentBytes() - before).as("resident growth after mapping 512 MiB").isLessThan(64 * MIB);
            for (long off = 0; off < 128 * MIB; off += AnonymousMemory.PAGE) {
                m.set(ValueLayout.JAVA_BYTE, off, (byte) 7);
            }
            assertThat(residentBytes() - before).as("resident growth after writing 128 MiB of it")
                    .isGreaterThan(120 * MIB).isLessThan(256 * MIB);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 64 * MIB)).isEqualTo((byte) 7);
            assertThat(m.get(ValueLayout.JAVA_LONG, 300 * MIB)).isZero();
            assertThat(m.get(ValueLayout.JAVA_BYTE, 512 * MIB - 1)).isZero();
        }
    }

    @Test
    void populateBacksEveryPageAndLeavesThemZero() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = AnonymousMemory.map(256 * MIB, arena);
            long before = residentBytes();
            assertThat(AnonymousMemory.populate(m)).isPositive();
            assertThat(residentBytes() - before).as("resident growth after populating 256 MiB")
                    .isGreaterThan(240 * MIB);
            for (long off = 0; off < m.byteSize(); off += 16 * MIB + 8) {
                assertThat(m.get(ValueLayout.JAVA_BYTE, off)).isZero();
            }
        }
    }

    @Test
    void touchingEachPageBacksThemAsOnKernelsWithoutPopulate() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = AnonymousMemory.map(128 * MIB, arena);
            m.set(ValueLayout.JAVA_BYTE, 5 * MIB, (byte) 9);
            long before = residentBytes();
            AnonymousMemory.touchEachPage(m);
            assertThat(residentBytes() - before).as("resident growth after touching 128 MiB").isGreaterThan(120 * MIB);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 5 * MIB)).as("a byte written before").isEqualTo((byte) 9);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 6 * MIB)).isZero();
        }
    }

    @Test
    void closingTheArenaUnmapsTheMemory() throws IOException {
        Arena arena = Arena.ofShared();
        MemorySegment m = AnonymousMemory.map(256 * MIB, arena);
        AnonymousMemory.populate(m);
        long populated = residentBytes();
        arena.close();
        assertThat(populated - residentBytes()).as("resident bytes given back by the close").isGreaterThan(240 * MIB);
        assertThatThrownBy(() -> m.get(ValueLayout.JAVA_BYTE, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void availableMemoryIsReadFromTheKernel() throws IOException {
        long total = 0;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                total = Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        assertThat(AnonymousMemory.availableBytes()).isPositive().isLessThanOrEqualTo(total);
    }

    @Test
    void aLazySegmentBeyondTheAvailableMemoryIsWarnedAbout() {
        assertThat(LocalSegment.beyondAvailableMemory("s", 8 * MIB, 16 * MIB)).isNull();
        assertThat(LocalSegment.beyondAvailableMemory("s", 8 * MIB, -1)).as("MemAvailable unknown").isNull();
        assertThat(LocalSegment.beyondAvailableMemory("s", 32 * MIB, 16 * MIB))
                .contains("node.segment-size = " + 32 * MIB).contains(16 * MIB + " bytes")
                .contains("lower node.segment-size").contains("node.segment-prefault=true");
    }

    @Test
    void moreThanTheAddressSpaceIsAClearError() {
        try (Arena arena = Arena.ofShared()) {
            assertThatThrownBy(() -> AnonymousMemory.map(1L << 50, arena))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("node.segment-size = " + (1L << 50))
                    .hasMessageContaining("ENOMEM")
                    .hasMessageContaining("lower it");
        }
    }

    @Test
    void aSegmentMapsLazilyOrPrefaultsAndClosesOnce() throws IOException {
        long before = residentBytes();
        try (LocalSegment lazy = new LocalSegment("lazy", 256 * MIB, null, false)) {
            assertThat(residentBytes() - before).as("a lazy segment at start").isLessThan(64 * MIB);
            lazy.slice(100 * MIB, 8).set(ValueLayout.JAVA_LONG, 0, 42L);
            assertThat(lazy.slice(100 * MIB, 8).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(42L);
        }
        long start = residentBytes();
        LocalSegment eager = new LocalSegment("eager", 256 * MIB, null, true);
        assertThat(residentBytes() - start).as("a prefaulted segment at start").isGreaterThan(240 * MIB);
        eager.close();
        eager.close(); // idempotent: the arena, and with it the mapping, goes once
        assertThat(eager.isClosed()).isTrue();
        assertThatThrownBy(() -> eager.slice(0, 8)).isInstanceOf(TiffinException.class);
    }
}
