package io.tiffin.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Target {@code memcpy}: a get that is only a copy of the value between two buffers of this process,
 * the bound for a client that reads memory it can map ({@code tiffin-local}, {@code tiffin-shm}).
 *
 * <p>Not thread-safe (see {@link KvTarget}).
 */
final class MemcpyTarget implements KvTarget {
    private final KvLoad load;

    MemcpyTarget(KvLoad load) {
        this.load = load;
    }

    @Override
    public void measure(long size, MemorySegment value, Arena arena) throws Exception {
        load.measure("memcpy", "get", size, 1, t -> {
            MemorySegment src = arena.allocate(size, 64);
            MemorySegment.copy(value, 0, src, 0, size);
            MemorySegment dst = arena.allocate(size, 64);
            return i -> MemorySegment.copy(src, 0, dst, 0, size);
        });
    }
}
