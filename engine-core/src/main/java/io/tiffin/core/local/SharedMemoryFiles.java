package io.tiffin.core.local;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Files that back node segments in shared memory ({@code node.shared-memory-dir}, typically the tmpfs
 * {@code /dev/shm}), so that clients on the same host map a segment and copy its bytes directly, as
 * Mooncake's clients do through memfd shared memory.
 *
 * <p>A file is named {@code tiffin-<pid>-<segment>.seg}: the pid of the node process that owns it. A
 * node that crashed leaves its file behind (tmpfs memory that nobody frees); every node that starts
 * with shared memory deletes the files of processes that no longer run ({@link #removeOrphans}). A
 * recycled pid only delays that cleanup, it never deletes a live node's file. Pids are looked up in
 * this process's pid namespace: nodes in different pid namespaces (containers) must not share one
 * directory, or one may delete the other's file (its node and current mappings keep working; new
 * clients then use the socket).
 *
 * <p>The file's memory is reserved at creation with {@code posix_fallocate}, so a full tmpfs is a
 * clear error at start-up instead of a SIGBUS on first touch later.
 *
 * <p>Thread-safe (stateless).
 */
public final class SharedMemoryFiles {
    private static final Logger LOG = LogManager.getLogger(SharedMemoryFiles.class);
    private static final Pattern NAME = Pattern.compile("tiffin-(\\d+)-.+\\.seg");
    private static final int O_RDWR = 2;
    private static final int ENOSPC = 28;
    private static final int EOPNOTSUPP = 95;
    /** File systems whose files live in memory (no write-back to a disk). */
    private static final java.util.Set<String> MEMORY_FILE_SYSTEMS = java.util.Set.of("tmpfs", "ramfs", "hugetlbfs");

    private SharedMemoryFiles() {
    }

    /**
     * This host's identity for same-host checks: the kernel's boot id (new at every boot, equal for all
     * processes of one kernel), or empty when it cannot be read (then nothing is shared).
     */
    public static String hostId() {
        return HostId.VALUE;
    }

    /**
     * This process's pid namespace (the target of {@code /proc/self/ns/pid}, e.g. {@code pid:[4026531836]}),
     * or empty when unknown; a pid names the same process only for processes of one namespace.
     */
    public static String pidNamespace() {
        return HostId.PID_NAMESPACE;
    }

    private static final class HostId {
        static final String PID_NAMESPACE = readPidNamespace();

        private static String readPidNamespace() {
            try {
                return Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
            } catch (IOException | RuntimeException e) {
                return "";
            }
        }

        static final String VALUE = read();

        private static String read() {
            try {
                return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            } catch (IOException | RuntimeException e) {
                LOG.debug("no boot id: shared-memory segments are not used ({})", e.toString());
                return "";
            }
        }
    }

    /** The file for {@code segment} of this process in {@code dir}. */
    static Path fileFor(Path dir, String segment) {
        return dir.resolve("tiffin-" + ProcessHandle.current().pid() + "-" + segment + ".seg");
    }

    /**
     * Creates the file (owner read/write only) and reserves {@code size} bytes of memory for it. Throws
     * INVALID_PARAMS, naming the directory and what is missing, when the directory does not exist or
     * has no room.
     */
    static void create(Path file, long size) {
        Path dir = file.getParent();
        if (!Files.isDirectory(dir)) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.shared-memory-dir = " + dir
                    + ": not a directory (expected a tmpfs such as /dev/shm)");
        }
        try {
            java.nio.file.FileStore store = Files.getFileStore(dir);
            if (!MEMORY_FILE_SYSTEMS.contains(store.type())) {
                LOG.warn("node.shared-memory-dir = {} is on a {} file system, not tmpfs: the kernel will write the"
                        + " segment's bytes back to that disk; use a tmpfs such as /dev/shm", dir, store.type());
            }
            long usable = store.getUsableSpace();
            if (usable < size) {
                throw noRoom(dir, size, usable, null);
            }
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "shared-memory file " + file + " already exists", e);
        } catch (IOException e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "node.shared-memory-dir = " + dir
                    + ": cannot create " + file.getFileName() + " (" + e.getMessage() + ")", e);
        }
        try {
            reserve(file, size);
        } catch (RuntimeException e) {
            deleteQuietly(file);
            throw e;
        }
    }

    private static TiffinException noRoom(Path dir, long size, long usable, Throwable cause) {
        return new TiffinException(ErrorCode.INVALID_PARAMS, "node.shared-memory-dir = " + dir + " has room for "
                + usable + " bytes, the segment needs " + size + " (node.segment-size); enlarge the tmpfs "
                + "(for a container: --shm-size) or lower node.segment-size", cause);
    }

    /** posix_fallocate through the FFM API; without it (not glibc) the free-space check above stands. */
    private static void reserve(Path file, long size) {
        Optional<Natives> natives = Natives.get();
        if (natives.isEmpty()) {
            return;
        }
        Natives n = natives.get();
        try (Arena arena = Arena.ofConfined()) {
            int fd = (int) n.open.invokeExact(arena.allocateFrom(file.toString()), O_RDWR);
            if (fd < 0) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot open " + file + " to reserve its memory");
            }
            int rc;
            try {
                rc = (int) n.fallocate.invokeExact(fd, 0L, size);
            } finally {
                int ignored = (int) n.close.invokeExact(fd);
            }
            if (rc == ENOSPC) {
                long usable = Files.getFileStore(file.getParent()).getUsableSpace();
                throw noRoom(file.getParent(), size, usable, null);
            }
            if (rc != 0 && rc != EOPNOTSUPP) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot reserve " + size + " bytes for "
                        + file + " (posix_fallocate error " + rc + ")");
            }
        } catch (TiffinException e) {
            throw e;
        } catch (Throwable e) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "cannot reserve " + size + " bytes for " + file
                    + " (" + e + ")", e);
        }
    }

    /** The C functions used, looked up once; empty when the platform lacks them. */
    private record Natives(MethodHandle open, MethodHandle fallocate, MethodHandle close) {
        private static final Optional<Natives> INSTANCE = lookup();

        static Optional<Natives> get() {
            return INSTANCE;
        }

        private static Optional<Natives> lookup() {
            try {
                return Optional.of(new Natives(
                        CLibrary.function("open", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                                ValueLayout.JAVA_INT), Linker.Option.firstVariadicArg(2)),
                        CLibrary.function("posix_fallocate", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG)),
                        CLibrary.function("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT))));
            } catch (RuntimeException e) {
                LOG.debug("posix_fallocate unavailable ({}); shared-memory files are checked for room only", e.toString());
                return Optional.empty();
            }
        }
    }

    /**
     * The file's identity {device, inode}, which a client compares after opening the path it was given.
     */
    public static long[] identity(Path file) throws IOException {
        Object dev = Files.getAttribute(file, "unix:dev");
        Object ino = Files.getAttribute(file, "unix:ino");
        return new long[] {((Number) dev).longValue(), ((Number) ino).longValue()};
    }

    /**
     * Deletes the segment files in {@code dir} whose owning process no longer runs; returns how many.
     * Files of live processes (this one included) are left alone.
     */
    public static int removeOrphans(Path dir) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "tiffin-*.seg")) {
            for (Path f : files) {
                Matcher m = NAME.matcher(f.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                long pid;
                try {
                    pid = Long.parseLong(m.group(1));
                } catch (NumberFormatException e) {
                    continue;
                }
                if (ProcessHandle.of(pid).isPresent()) {
                    continue;
                }
                try {
                    long bytes = Files.size(f);
                    Files.delete(f);
                    removed++;
                    LOG.warn("Deleted {} ({} bytes of shared memory) left by node process {}, which no longer runs",
                            f, bytes, pid);
                } catch (NoSuchFileException gone) {
                    // another node cleaned it up first
                } catch (IOException e) {
                    LOG.warn("Cannot delete the orphaned shared-memory file {}: {}", f, e.getMessage());
                }
            }
        } catch (IOException e) {
            LOG.warn("Cannot list {} for orphaned shared-memory files: {}", dir, e.getMessage());
        }
        return removed;
    }

    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.warn("Cannot delete the shared-memory file {}: {}", file, e.getMessage());
        }
    }
}
