package io.tiffin.core.master;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * Paces the master's eviction checks ({@link MasterService#runEvictionOnce}): one every
 * {@code master.eviction-interval} while the pool is near its high watermark or an allocation failed
 * ({@link MasterService#evictionPressed}), one every {@value #IDLE_FACTOR} intervals otherwise, and one at
 * once when an allocation fails ({@link #wake}). A check at a fixed 10 ms woke the master's background
 * thread a hundred times a second on a pool far from full: on a 2-core machine those wake-ups alone cost
 * 0.5–0.8% of a core, a tenth of the budget of a thousand nodes' heartbeats (docs/BENCHMARKS.md, "Master at
 * scale").
 *
 * <p>Thread-safe: {@link #wake} may be called from any thread, an event loop under a shard lock included (it
 * never blocks: it cancels the pending check and submits one). Checks run one at a time on the executor,
 * which must have a single thread; the pacer does not own it.
 */
final class EvictionPacer {
    /** The idle pace, in checks at the busy pace. */
    static final int IDLE_FACTOR = 10;

    private final ScheduledExecutorService executor;
    private final Runnable check;
    private final BooleanSupplier pressed;
    private final long intervalNanos;
    private final long idleNanos;
    private final AtomicReference<ScheduledFuture<?>> next = new AtomicReference<>();

    /**
     * @param check one eviction check; must not throw
     * @param pressed whether the next check is due at the busy pace
     */
    EvictionPacer(ScheduledExecutorService executor, Runnable check, BooleanSupplier pressed, Duration interval) {
        this.executor = executor;
        this.check = check;
        this.pressed = pressed;
        this.intervalNanos = Math.max(1, interval.toNanos());
        this.idleNanos = intervalNanos * IDLE_FACTOR;
    }

    /** Schedules the first check, one interval from now. */
    void start() {
        schedule(intervalNanos);
    }

    private void tick() {
        check.run();
        boolean busy = pressed.getAsBoolean();
        schedule(busy ? intervalNanos : idleNanos);
        if (!busy && pressed.getAsBoolean()) {
            wake(); // an allocation failed after the check looked: its wake-up found no pending check to cancel
        }
    }

    private void schedule(long delayNanos) {
        try {
            next.set(executor.schedule(this::tick, delayNanos, TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException e) {
            // the master is shutting down
        }
    }

    /**
     * Brings the next check forward to now (an allocation failed): unless it is due within an interval anyway or
     * is running (then it looks at {@code pressed} when it ends).
     */
    void wake() {
        ScheduledFuture<?> f = next.get();
        if (f != null && f.getDelay(TimeUnit.NANOSECONDS) > intervalNanos && f.cancel(false)) {
            try {
                executor.execute(this::tick);
            } catch (RejectedExecutionException e) {
                // the master is shutting down
            }
        }
    }
}
