package io.tiffin.core.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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

    private static final MethodHandle MINCORE = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mincore").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));

    /**
     * Bytes of {@code m}'s pages that are in memory ({@code mincore}), or -1 when its range is no longer mapped. Only
     * the segment's own pages count, whatever else the JVM maps or gives back meanwhile (this process's resident size
     * moved by tens of MiB while a test populated 256 MiB).
     */
    private static long residentBytes(MemorySegment m) {
        long pages = (m.byteSize() + AnonymousMemory.PAGE - 1) / AnonymousMemory.PAGE;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment vec = a.allocate(pages);
            int rc = (int) MINCORE.invokeExact(MemorySegment.ofAddress(m.address()), m.byteSize(), vec);
            if (rc != 0) {
                return -1; // ENOMEM: not mapped
            }
            long resident = 0;
            for (long i = 0; i < pages; i++) {
                resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
            }
            return resident * AnonymousMemory.PAGE;
        } catch (Throwable e) {
            throw new AssertionError("mincore failed", e);
        }
    }

    @Test
    void memoryIsZeroAndBackedOnlyWhereWritten() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = AnonymousMemory.map(512 * MIB, arena);
            assertThat(m.byteSize()).isEqualTo(512 * MIB);
            assertThat(m.address() % AnonymousMemory.PAGE).isZero();
            assertThat(residentBytes(m)).as("resident after mapping 512 MiB").isZero();
            for (long off = 0; off < 128 * MIB; off += AnonymousMemory.PAGE) {
                m.set(ValueLayout.JAVA_BYTE, off, (byte) 7);
            }
            // (a transparent huge page may back up to 2 MiB beyond the last page written)
            assertThat(residentBytes(m)).as("resident after writing 128 MiB of it").isBetween(128 * MIB, 130 * MIB);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 64 * MIB)).isEqualTo((byte) 7);
            assertThat(m.get(ValueLayout.JAVA_LONG, 300 * MIB)).isZero();
            assertThat(m.get(ValueLayout.JAVA_BYTE, 512 * MIB - 1)).isZero();
        }
    }

    @Test
    void populateBacksEveryPageAndLeavesThemZero() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment m = AnonymousMemory.map(256 * MIB, arena);
            assertThat(AnonymousMemory.populate(m)).isPositive();
            assertThat(residentBytes(m)).as("resident after populating 256 MiB").isEqualTo(256 * MIB);
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
            AnonymousMemory.touchEachPage(m);
            assertThat(residentBytes(m)).as("resident after touching 128 MiB").isEqualTo(128 * MIB);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 5 * MIB)).as("a byte written before").isEqualTo((byte) 9);
            assertThat(m.get(ValueLayout.JAVA_BYTE, 6 * MIB)).isZero();
        }
    }

    @Test
    void closingTheArenaUnmapsTheMemory() throws IOException {
        Arena arena = Arena.ofShared();
        MemorySegment m = AnonymousMemory.map(256 * MIB, arena);
        AnonymousMemory.populate(m);
        assertThat(residentBytes(m)).isEqualTo(256 * MIB);
        arena.close();
        assertThat(residentBytes(m)).as("the range is unmapped by the close").isEqualTo(-1);
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
        try (LocalSegment lazy = new LocalSegment("lazy", 256 * MIB, null, false)) {
            assertThat(residentBytes(lazy.slice(0, 256 * MIB))).as("a lazy segment at start").isZero();
            lazy.slice(100 * MIB, 8).set(ValueLayout.JAVA_LONG, 0, 42L);
            assertThat(lazy.slice(100 * MIB, 8).get(ValueLayout.JAVA_LONG, 0)).isEqualTo(42L);
        }
        LocalSegment eager = new LocalSegment("eager", 256 * MIB, null, true);
        assertThat(residentBytes(eager.slice(0, 256 * MIB))).as("a prefaulted segment at start").isEqualTo(256 * MIB);
        eager.close();
        eager.close(); // idempotent: the arena, and with it the mapping, goes once
        assertThat(eager.isClosed()).isTrue();
        assertThatThrownBy(() -> eager.slice(0, 8)).isInstanceOf(TiffinException.class);
    }
}
