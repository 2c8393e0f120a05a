package io.tiffin.core.util;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * Work on memory cut into numbered chunks that the calling thread and one helper thread claim in turn: large copies
 * and checksums, which one core alone cannot run at the memory's speed (it cannot keep enough cache-line transfers in
 * flight). The caller starts at once and claims whatever the helper has not (a helper still waking, or serving
 * another caller, leaves it all to the caller); it then waits only for a chunk the helper is still working on,
 * spinning briefly, then parking between checks. A failure of any chunk is rethrown to the caller once no chunk is
 * in progress.
 *
 * <p>The helper ({@code tiffin-chunk-helper}) is one daemon thread for the whole process, started at the first shared
 * run and never stopped; it serves runs one at a time, in the order offered, and holds nothing between them (a run
 * its caller finished alone finds no chunk left). A thread of its own rather than the common fork-join pool: copies
 * of hot-cache hits shared with a common-pool task ran 1-4% slower per hit in alternated runs (10 MB values).
 *
 * <p>The caller may wait for another thread, so a Netty event loop's thread (a {@link FastThreadLocalThread}, which
 * must never wait) runs every chunk itself.
 *
 * <p>Thread-safe; every chunk's effects happen-before {@link #run} returns.
 */
public final class TwoThreadChunks {
    /** How long a caller spins for the helper's last chunk before it parks between checks. */
    private static final int SPINS = 1 << 12;
    private static final long PARK_NANOS = 20_000;
    /** Never started: stands for "a thread other than the caller" in {@link MemorySegment#isAccessibleBy}. */
    private static final Thread ANOTHER_THREAD = new Thread(() -> { });
    private static final boolean MANY_CORES = Runtime.getRuntime().availableProcessors() > 1;

    private TwoThreadChunks() {
    }

    /** Whether a thread other than the caller may read and write {@code memory} (not a thread-confined segment). */
    public static boolean sharable(MemorySegment memory) {
        return memory.isAccessibleBy(ANOTHER_THREAD);
    }

    /**
     * Runs {@code chunk.accept(i)} for every i from 0 to {@code count - 1}, each once: on the caller and the helper
     * when {@code share} (and the machine has more than one core, and the caller is no event loop), else on the
     * caller alone, in order.
     *
     * @throws RuntimeException what a chunk threw (the first seen; an {@link Error} likewise), once no chunk runs
     */
    public static void run(int count, boolean share, IntConsumer chunk) {
        if (!share || count < 2 || !MANY_CORES || Thread.currentThread() instanceof FastThreadLocalThread) {
            for (int i = 0; i < count; i++) {
                chunk.accept(i);
            }
            return;
        }
        Claims claims = new Claims(count, chunk);
        Helper.offer(claims);
        claims.work();
        claims.awaitAll();
        Throwable failure = claims.failure;
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
    }

    /** The helper thread and the runs offered to it; initialized at the first shared run. Thread-safe. */
    private static final class Helper {
        private static final ConcurrentLinkedQueue<Claims> OFFERED = new ConcurrentLinkedQueue<>();
        private static final Thread THREAD = Thread.ofPlatform().name("tiffin-chunk-helper").daemon().start(Helper::serve);

        static void offer(Claims claims) {
            OFFERED.offer(claims);
            LockSupport.unpark(THREAD);
        }

        private static void serve() {
            while (true) {
                Claims claims = OFFERED.poll();
                if (claims == null) {
                    LockSupport.park(Helper.class);
                } else {
                    claims.work();
                }
            }
        }
    }

    /** The chunks of one {@link #run}. Thread-safe. */
    private static final class Claims {
        private final int count;
        private final IntConsumer chunk;
        private final AtomicInteger next = new AtomicInteger();
        /** Chunks finished; incremented after each, so reading it makes the chunks' effects visible. */
        private final AtomicInteger done = new AtomicInteger();
        /** The first chunk's failure seen (a RuntimeException or an Error), rethrown by the caller. */
        private volatile Throwable failure;

        Claims(int count, IntConsumer chunk) {
            this.count = count;
            this.chunk = chunk;
        }

        void work() {
            for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
                try {
                    chunk.accept(i);
                } catch (RuntimeException | Error e) {
                    if (failure == null) {
                        failure = e;
                    }
                } finally {
                    done.incrementAndGet();
                }
            }
        }

        void awaitAll() {
            for (int spins = 0; done.get() < count; spins++) {
                if (spins < SPINS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(PARK_NANOS);
                }
            }
        }
    }
}
