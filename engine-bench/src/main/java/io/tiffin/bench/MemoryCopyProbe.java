package io.tiffin.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What one memory copy of a value costs on this machine, the floor of a hot-cache hit that copies out:
 * values are copied one after the other out of an off-heap region as large as the cache (so the source is
 * not in the CPU's caches any more than a hit's would be) into one reused off-heap buffer.
 *
 * <p>Thread-safe (stateless).
 */
final class MemoryCopyProbe {
    /** Copies measured (after as many unmeasured ones). */
    private static final int COPIES = 25;

    private MemoryCopyProbe() {
    }

    /** Milliseconds per copy of {@code value} bytes, the median of three passes of {@value #COPIES} copies. */
    static double millisPerCopy(long value, long regionBytes) {
        long slots = Math.max(1, Math.min(COPIES, regionBytes / value));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment region = arena.allocate(slots * value, 4096);
            MemorySegment destination = arena.allocate(value, 4096);
            region.fill((byte) 1); // touch every page first: a hit reads memory a fill has written
            destination.fill((byte) 2);
            double[] passes = new double[4];
            for (int pass = 0; pass < passes.length; pass++) {
                long start = System.nanoTime();
                for (int i = 0; i < COPIES; i++) {
                    MemorySegment.copy(region, (i % slots) * value, destination, 0, value);
                }
                passes[pass] = (System.nanoTime() - start) / 1e6 / COPIES;
            }
            double[] measured = java.util.Arrays.copyOfRange(passes, 1, passes.length); // the first warms up
            java.util.Arrays.sort(measured);
            return measured[1];
        }
    }
}
