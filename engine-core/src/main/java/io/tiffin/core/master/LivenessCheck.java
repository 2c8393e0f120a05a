package io.tiffin.core.master;

import java.util.concurrent.TimeUnit;

/**
 * The master's periodic node-liveness check ({@link MasterService#expireNodes}), run every {@code
 * master.node-check-interval}, which does not count against nodes the time the master itself did not run. It measures
 * on the process's monotonic clock how much later than its period each run comes; beyond a second late (a long GC
 * pause, a stopped or frozen process, the background thread held by long work), every node's deadline moves that much
 * later before expired nodes are looked for. Without it, a master resumed after a stop longer than {@code
 * master.node-ttl} unmounted every live node's segments, and erased their objects, before reading the pings that had
 * waited in its sockets. A node that really died meanwhile is still found, that much later.
 *
 * <p>Not thread-safe: run by the master's one background thread.
 */
final class LivenessCheck implements Runnable {
    /** Lateness below this is scheduling jitter, not a pause. */
    private static final long SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final MasterService service;
    private final long periodNanos;
    private long lastRun = System.nanoTime();

    LivenessCheck(MasterService service, long periodMillis) {
        this.service = service;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
    }

    @Override
    public void run() {
        long now = System.nanoTime();
        long late = now - lastRun - periodNanos;
        lastRun = now;
        service.expireNodes(late > SLACK_NANOS ? TimeUnit.NANOSECONDS.toMillis(late) : 0);
    }
}
