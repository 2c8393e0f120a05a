package io.tiffin.bench;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * Runs the load of {@code tiffin bench kv}: for each case, {@code clients} threads, each with one request
 * at a time, first unmeasured for the warm-up, then for the measured duration, with the latency of every
 * call in an HdrHistogram; the figures go to the {@link KvReport}.
 *
 * <p>Not thread-safe: one caller (the bench's main thread) at a time; the load threads it starts are
 * joined before each call returns.
 */
final class KvLoad {
    /** One thread's operation: {@code run(i)} performs the i-th request of that thread. */
    @FunctionalInterface
    interface Op {
        void run(long i) throws Exception;
    }

    /** Builds the per-thread operation (and its buffers) for thread {@code t}. */
    @FunctionalInterface
    interface OpFactory {
        Op create(int thread) throws Exception;
    }

    private final int clients;
    private final double warmupSeconds;
    private final double durationSeconds;
    private final KvReport report;

    /**
     * @param clients threads per case, at least 1
     * @param warmupSeconds unmeasured seconds before each case
     * @param durationSeconds measured seconds per case, &gt; 0
     * @param report where each case's figures go
     */
    KvLoad(int clients, double warmupSeconds, double durationSeconds, KvReport report) {
        this.clients = clients;
        this.warmupSeconds = warmupSeconds;
        this.durationSeconds = durationSeconds;
        this.report = report;
    }

    int clients() {
        return clients;
    }

    /**
     * Runs {@code clients} threads of {@code factory}'s operation for the warm-up and then the measured
     * duration; records and prints one row. {@code keysPerOp} counts keys per call (batch size).
     */
    void measure(String target, String operation, long size, int keysPerOp, OpFactory factory) throws Exception {
        Op[] ops = new Op[clients];
        for (int t = 0; t < clients; t++) {
            ops[t] = factory.create(t);
        }
        runThreads(ops, warmupSeconds, null, null);
        Histogram[] hist = new Histogram[clients];
        long[] calls = new long[clients];
        long elapsed = runThreads(ops, durationSeconds, hist, calls);
        Histogram all = new Histogram(3);
        long totalCalls = 0;
        for (int t = 0; t < clients; t++) {
            all.add(hist[t]);
            totalCalls += calls[t];
        }
        double seconds = elapsed / 1e9;
        double opsPerSec = totalCalls * (double) keysPerOp / seconds;
        report.add(target, operation, size, clients, opsPerSec, all.getValueAtPercentile(50) / 1000.0,
                all.getValueAtPercentile(99) / 1000.0, keysPerOp);
    }

    /** Runs every op on its own thread for {@code seconds}, unmeasured (no-op when {@code seconds <= 0}). */
    void run(Op[] ops, double seconds) throws Exception {
        runThreads(ops, seconds, null, null);
    }

    /**
     * Runs every op on its own thread for {@code seconds}; returns the elapsed nanos. With {@code hist}
     * and {@code calls}, each thread leaves its latencies and call count there.
     */
    private static long runThreads(Op[] ops, double seconds, Histogram[] hist, long[] calls) throws Exception {
        if (seconds <= 0) {
            return 0;
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(ops.length);
        long[] deadline = new long[1];
        for (int t = 0; t < ops.length; t++) {
            int id = t;
            Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            if (hist != null) {
                hist[t] = h;
            }
            Thread th = new Thread(() -> {
                long n = 0;
                try {
                    go.await();
                    long end = deadline[0];
                    long now = System.nanoTime();
                    while (now < end && failure.get() == null) {
                        ops[id].run(n++);
                        long after = System.nanoTime();
                        h.recordValue(Math.min(after - now, h.getHighestTrackableValue()));
                        now = after;
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    if (calls != null) {
                        calls[id] = n;
                    }
                    done.countDown();
                }
            }, "bench-kv-" + t);
            th.setDaemon(true);
            th.start();
        }
        long start = System.nanoTime();
        deadline[0] = start + (long) (seconds * 1e9);
        go.countDown();
        done.await();
        long elapsed = System.nanoTime() - start;
        if (failure.get() != null) {
            throw new IllegalStateException("a bench thread failed: " + failure.get(), failure.get());
        }
        return elapsed;
    }
}
