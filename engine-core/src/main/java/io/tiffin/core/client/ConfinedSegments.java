package io.tiffin.core.client;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Which caller segments only their owner thread may touch ({@code Arena.ofConfined()}), and shareable
 * copies of them. Transfers run on Netty threads, so such a segment costs one copy on the calling
 * thread; shared, global, automatic and heap segments are used directly (zero copy).
 *
 * <p>Thread-safe (stateless). The copies live in automatic arenas (freed by the garbage collector).
 */
final class ConfinedSegments {
    /** A thread that never runs: a segment it cannot access is confined to its owner thread. */
    private static final Thread ACCESS_PROBE = Thread.ofVirtual().unstarted(() -> { });

    private ConfinedSegments() {
    }

    /** Whether only its owner thread may touch {@code segment}. */
    static boolean isThreadConfined(MemorySegment segment) {
        return !segment.isAccessibleBy(ACCESS_PROBE);
    }

    /** {@code segment} itself, or a shareable copy of it when it is thread-confined. */
    static MemorySegment shareable(MemorySegment segment) {
        if (!isThreadConfined(segment)) {
            return segment;
        }
        MemorySegment copy = Arena.ofAuto().allocate(segment.byteSize());
        MemorySegment.copy(segment, 0, copy, 0, segment.byteSize());
        return copy;
    }
}
