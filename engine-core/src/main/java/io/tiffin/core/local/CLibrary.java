package io.tiffin.core.local;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.NoSuchElementException;

/**
 * Downcalls into the C library the JVM runs with, for the few system calls the JDK does not offer
 * ({@link SharedMemoryFiles}: posix_fallocate; {@link AnonymousMemory}: mmap, madvise).
 *
 * <p>Thread-safe (stateless).
 */
final class CLibrary {
    private CLibrary() {
    }

    /**
     * A handle calling the C library's {@code name} as {@code descriptor} says.
     *
     * @throws NoSuchElementException when the C library has no such function
     * @throws IllegalArgumentException when the platform cannot call it so
     */
    static MethodHandle function(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().find(name)
                .orElseThrow(() -> new NoSuchElementException("no " + name + " in the C library")), descriptor, options);
    }
}
