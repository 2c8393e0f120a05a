package io.tiffin.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Something {@code tiffin bench kv} measures the same workload against: a Tiffin client
 * ({@link TiffinTarget}), a plain loopback socket ({@link SocketTarget}), an in-process memory copy
 * ({@link MemcpyTarget}) or Redis ({@link RedisTarget}).
 *
 * <p>Implementations are not thread-safe: the bench's main thread measures one case at a time (each
 * case's load threads are joined before {@link #measure} returns).
 */
interface KvTarget {
    /**
     * Measures this target's cases (its operations) on values of {@code size} bytes, recording a row each.
     *
     * @param size bytes per value
     * @param value a value of that size, {@link KvWorkload#randomValue}
     * @param arena where the cases allocate their buffers; lives at least until this returns
     */
    void measure(long size, MemorySegment value, Arena arena) throws Exception;
}
