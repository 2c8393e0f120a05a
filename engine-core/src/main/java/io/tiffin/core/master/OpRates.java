package io.tiffin.core.master;

import io.tiffin.core.transport.Opcode;
import io.tiffin.core.util.Ticker;
import java.util.ArrayDeque;

/**
 * Operations per second for the status page: {@link #sample()} (run every second by the master) records
 * the running totals of puts, gets, removals and evictions; {@link #rates()} divides the change over the
 * last {@link #WINDOW_MILLIS} by the time it took. Puts are PutStarts, gets are replica lookups, as the
 * master counts requests (a batch counts once; a read through a client's location cache never reaches it).
 *
 * <p>Thread-safe: samples and reads are serialised on this object.
 */
final class OpRates {
    /** How far back the rates look. */
    static final long WINDOW_MILLIS = 10_000;

    /** Per-second rates over {@code windowSeconds}. */
    record Rates(double windowSeconds, double puts, double gets, double removes, double evictedKeys,
                 double evictedBytes) {
    }

    private record Sample(long nanos, long puts, long gets, long removes, long evictedKeys, long evictedBytes) {
    }

    private final MasterMetrics metrics;
    private final MasterCounters counters;
    private final Ticker ticker;
    private final ArrayDeque<Sample> samples = new ArrayDeque<>();

    OpRates(MasterMetrics metrics, MasterCounters counters, Ticker ticker) {
        this.metrics = metrics;
        this.counters = counters;
        this.ticker = ticker;
    }

    /** Records the current totals and drops samples older than the window (keeping one at its edge). */
    synchronized void sample() {
        Sample s = new Sample(ticker.nanos(),
                metrics.requestCount(Opcode.PUT_START, Opcode.BATCH_PUT_START),
                metrics.requestCount(Opcode.GET_REPLICA_LIST, Opcode.BATCH_GET_REPLICA_LIST),
                metrics.requestCount(Opcode.REMOVE, Opcode.BATCH_REMOVE, Opcode.REMOVE_BY_REGEX, Opcode.REMOVE_ALL),
                counters.evictedKeys(), counters.evictedBytes());
        samples.addLast(s);
        long windowNanos = WINDOW_MILLIS * 1_000_000L;
        while (samples.size() > 2) {
            java.util.Iterator<Sample> it = samples.iterator();
            it.next();
            if (s.nanos() - it.next().nanos() < windowNanos) {
                break;
            }
            samples.removeFirst();
        }
    }

    /** The rates over the window, or null before two samples exist. */
    synchronized Rates rates() {
        if (samples.size() < 2) {
            return null;
        }
        Sample a = samples.getFirst();
        Sample b = samples.getLast();
        double seconds = (b.nanos() - a.nanos()) / 1e9;
        if (seconds <= 0) {
            return null;
        }
        return new Rates(seconds, (b.puts() - a.puts()) / seconds, (b.gets() - a.gets()) / seconds,
                (b.removes() - a.removes()) / seconds, (b.evictedKeys() - a.evictedKeys()) / seconds,
                (b.evictedBytes() - a.evictedBytes()) / seconds);
    }
}
