package io.tiffin.core.local;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Locale;
import java.util.Optional;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A node segment's (or a client hot cache's) anonymous memory, mapped with {@code mmap} (Linux): its pages are zero
 * until written and are backed by the kernel as they are first touched, so a node of any segment size starts at once. The JDK's
 * {@link Arena#allocate} clears the whole block before it returns, touching every page: on a 2 GiB segment that
 * took 2 s on a warm machine and 19 s in a virtual machine whose host had taken the guest's free memory back
 * (docs/BENCHMARKS.md, "Machine and conditions"), all of it before the node could serve. {@link #populate} touches
 * the pages up front instead, for a node that should hold its memory from the start ({@code node.segment-prefault}).
 *
 * <p>Elsewhere than on Linux, or when the C library's functions cannot be found, {@link #map} falls back to
 * {@link Arena#allocate} (cleared, every page touched).
 *
 * <p><b>Ownership</b>: the mapping belongs to the arena passed to {@link #map}; closing that arena unmaps it,
 * once (the arena closes once).
 *
 * <p>Thread-safe (stateless).
 */
public final class AnonymousMemory {
    private static final Logger LOG = LogManager.getLogger(AnonymousMemory.class);
    /** The page size the mappings are aligned to and touched by. */
    static final long PAGE = 4096;
    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    /** Linux 5.14 and later: fault every page of a range in, writable, without writing it. */
    private static final int MADV_POPULATE_WRITE = 23;
    private static final int EINVAL = 22;
    private static final int ENOMEM = 12;

    private AnonymousMemory() {
    }

    /** Whether {@link #map} maps memory itself (else it falls back to {@link Arena#allocate}). */
    public static boolean mapsLazily() {
        return Natives.get().isPresent();
    }

    /**
     * {@code size} bytes of zeroed memory, page-aligned, unmapped when {@code arena} closes.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when the kernel refuses the mapping (more than the machine can
     *     promise under its overcommit policy, or more address space than there is), naming the size
     */
    public static MemorySegment map(long size, Arena arena) {
        return map(size, arena, "node.segment-size");
    }

    /**
     * As {@link #map(long, Arena)}, for memory sized by configuration key {@code setting} (named in the error).
     */
    public static MemorySegment map(long size, Arena arena, String setting) {
        if (size <= 0) {
            throw new IllegalArgumentException("size = " + size + " (expected: > 0)");
        }
        Optional<Natives> natives = Natives.get();
        if (natives.isEmpty()) {
            try {
                return arena.allocate(size, PAGE);
            } catch (OutOfMemoryError | IllegalArgumentException e) {
                throw cannotReserve(setting, size, e.getMessage());
            }
        }
        Natives n = natives.get();
        MemorySegment address;
        int errno;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment state = call.allocate(Natives.CALL_STATE);
            address = (MemorySegment) n.mmap.invokeExact(state, MemorySegment.NULL, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
            errno = (int) Natives.ERRNO.get(state, 0L);
        } catch (Throwable e) {
            throw cannotReserve(setting, size, e.toString());
        }
        if (address.address() == -1L) {
            throw cannotReserve(setting, size, errno == ENOMEM ? "the kernel refused it (ENOMEM)" : "mmap error " + errno);
        }
        long base = address.address();
        return address.reinterpret(size, arena, s -> unmap(n, base, size));
    }

    private static void unmap(Natives n, long base, long size) {
        try {
            int rc = (int) n.munmap.invokeExact(MemorySegment.ofAddress(base), size);
            if (rc != 0) {
                LOG.warn("munmap of {} bytes at {} failed ({}); the memory stays mapped until the process ends", size,
                        Long.toHexString(base), rc);
            }
        } catch (Throwable e) {
            LOG.warn("munmap of {} bytes failed: {}", size, e.toString());
        }
    }

    /**
     * Backs every page of {@code memory} (a mapping of {@link #map}, before anything is stored in it) now:
     * {@code madvise(MADV_POPULATE_WRITE)}, or, on kernels before 5.14, {@link #touchEachPage}. Returns the
     * nanoseconds it took.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when the kernel cannot back them
     */
    public static long populate(MemorySegment memory) {
        return populate(memory, "node.segment-size");
    }

    /** As {@link #populate(MemorySegment)}, for memory sized by configuration key {@code setting} (named in the error). */
    public static long populate(MemorySegment memory, String setting) {
        long start = System.nanoTime();
        Optional<Natives> natives = Natives.get();
        int errno = EINVAL;
        if (natives.isPresent()) {
            try (Arena call = Arena.ofConfined()) {
                MemorySegment state = call.allocate(Natives.CALL_STATE);
                int rc = (int) natives.get().madvise.invokeExact(state, memory, memory.byteSize(), MADV_POPULATE_WRITE);
                errno = rc == 0 ? 0 : (int) Natives.ERRNO.get(state, 0L);
            } catch (Throwable e) {
                errno = EINVAL;
            }
        }
        if (errno == EINVAL) {
            touchEachPage(memory);
        } else if (errno != 0) {
            throw cannotReserve(setting, memory.byteSize(), errno == ENOMEM ? "the kernel could not back its pages (ENOMEM)"
                    : "madvise error " + errno);
        }
        return System.nanoTime() - start;
    }

    /**
     * The memory the kernel could give without swapping ({@code MemAvailable} of {@code /proc/meminfo}), or -1 when
     * it cannot be read (not Linux).
     */
    public static long availableBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    String[] f = line.substring("MemAvailable:".length()).trim().split("\\s+");
                    return Long.parseLong(f[0]) * 1024; // kB
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            LOG.debug("cannot read MemAvailable: {}", e.toString());
        }
        return -1;
    }

    /**
     * Writes each page's first byte back to it, which makes the kernel back the page; nothing changes in the bytes,
     * provided no other thread writes {@code memory} meanwhile.
     */
    static void touchEachPage(MemorySegment memory) {
        for (long off = 0; off < memory.byteSize(); off += PAGE) {
            memory.set(ValueLayout.JAVA_BYTE, off, memory.get(ValueLayout.JAVA_BYTE, off));
        }
    }

    private static TiffinException cannotReserve(String setting, long size, String why) {
        return new TiffinException(ErrorCode.INVALID_PARAMS, setting + " = " + size
                + ": cannot reserve that much memory (" + why + "); lower it");
    }

    /** The C functions used, looked up once; empty off Linux or when they cannot be found. */
    private record Natives(MethodHandle mmap, MethodHandle munmap, MethodHandle madvise) {
        private static final Optional<Natives> INSTANCE = lookup();
        static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
        static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

        static Optional<Natives> get() {
            return INSTANCE;
        }

        private static Optional<Natives> lookup() {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux")) {
                return Optional.empty();
            }
            try {
                Linker.Option errno = Linker.Option.captureCallState("errno");
                return Optional.of(new Natives(
                        CLibrary.function("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_LONG), errno),
                        CLibrary.function("munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG)),
                        CLibrary.function("madvise", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT), errno)));
            } catch (RuntimeException e) {
                LOG.debug("mmap unavailable ({}); segments are allocated and cleared by the JDK", e.toString());
                return Optional.empty();
            }
        }
    }
}
