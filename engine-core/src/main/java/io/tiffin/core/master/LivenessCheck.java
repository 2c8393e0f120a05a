package io.tiffin.core.master;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The master's periodic node-liveness check ({@link MasterService#expireNodes}), run every {@code
 * master.node-check-interval}, which does not count against nodes the time the master itself did not run. It measures
 * on the process's monotonic clock how much later than its period each run comes; beyond a second late (a long GC
 * pause, a stopped or frozen process, the background thread held by long work), every node's deadline moves that much
 * later before expired nodes are looked for. A master that does not lead (a standby, a leader outside its lease) looks
 * for none, and the lateness it measured meanwhile counts at its next check as leader; so does the whole time a leader
 * spent outside its lease, during which it refused the nodes' pings. Without it, a master resumed after a stop longer than {@code
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
    private final BooleanSupplier acting;
    private final BooleanSupplier lapsed;
    private final LongSupplier nanos;
    private long lastRun;
    /** Time not counted against nodes, measured and not yet applied to their deadlines. */
    private long unreported;

    /**
     * {@code acting}: whether this master leads now (a standby, or a leader outside its lease, expires no node);
     * {@code lapsed}: whether it is a leader outside its lease, which refuses the nodes' pings, so that time does not
     * count against them either.
     */
    LivenessCheck(MasterService service, long periodMillis, BooleanSupplier acting, BooleanSupplier lapsed) {
        this(service, periodMillis, acting, lapsed, System::nanoTime);
    }

    /** As above, on the monotonic clock {@code nanos} (tests give their own). */
    LivenessCheck(MasterService service, long periodMillis, BooleanSupplier acting, BooleanSupplier lapsed,
                  LongSupplier nanos) {
        this.service = service;
        this.periodNanos = TimeUnit.MILLISECONDS.toNanos(periodMillis);
        this.acting = acting;
        this.lapsed = lapsed;
        this.nanos = nanos;
        this.lastRun = nanos.getAsLong();
    }

    @Override
    public void run() {
        long now = nanos.getAsLong();
        long since = now - lastRun;
        lastRun = now;
        if (lapsed.getAsBoolean()) {
            unreported += since; // the nodes' pings were refused meanwhile
        } else if (since - periodNanos > SLACK_NANOS) {
            unreported += since - periodNanos;
        }
        if (acting.getAsBoolean()) {
            // a pause or a lapse seen while not acting still moves the deadlines
            service.expireNodes(TimeUnit.NANOSECONDS.toMillis(unreported));
            unreported = 0;
        }
    }
}
