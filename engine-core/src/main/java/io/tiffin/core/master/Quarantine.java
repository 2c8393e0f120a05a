package io.tiffin.core.master;

import io.tiffin.api.ReplicaStatus;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Buffers whose metadata is gone but which someone may still read or write, kept out of reach of new
 * puts until their release time: replicas of pre-empted puts and of promotions given up (until the
 * writer's release timeout, {@code master.put-start-release-timeout}) and of force-removed or offloaded
 * objects that were leased (until the lease ends). Freed by {@link #releaseDue()}.
 *
 * <p>Thread-safe: guarded by its own monitor, which callers may take while holding a shard lock (lock
 * order: shard → quarantine → segment).
 */
final class Quarantine {
    private record Entry(ReplicaRecord replica, long version, long releaseAtMillis) {
    }

    private final Ticker ticker;
    private final long writerTimeoutMillis;
    private final PriorityQueue<Entry> entries =
            new PriorityQueue<>(Comparator.comparingLong(Entry::releaseAtMillis));

    /**
     * @param writerTimeoutMillis how long a writer may still write into a buffer it was handed
     *     ({@code master.put-start-release-timeout})
     */
    Quarantine(Ticker ticker, long writerTimeoutMillis) {
        this.ticker = ticker;
        this.writerTimeoutMillis = writerTimeoutMillis;
    }

    /** How long a writer may write into a buffer it was handed: its write grant lasts as long. */
    long writerTimeoutMillis() {
        return writerTimeoutMillis;
    }

    /** Keeps {@code replica}'s buffer (of its object's {@code version}) until {@code releaseAtMillis}. */
    synchronized void add(ReplicaRecord replica, long version, long releaseAtMillis) {
        entries.add(new Entry(replica, version, releaseAtMillis));
    }

    /** Keeps the buffers of {@code replicas} (of their object's {@code version}) until {@code releaseAtMillis}. */
    synchronized void addAll(List<ReplicaRecord> replicas, long version, long releaseAtMillis) {
        for (ReplicaRecord r : replicas) {
            entries.add(new Entry(r, version, releaseAtMillis));
        }
    }

    /**
     * Moves replicas still being written (a promotion's, whose node may be copying into it right now) out
     * of the object into quarantine until the writer's release timeout, so no new put is placed where the
     * writer still writes. Returns how many. Caller holds the object's shard lock.
     */
    int takeWriting(ObjectMetadata m) {
        List<ReplicaRecord> writing = null;
        for (ReplicaRecord r : m.replicas()) {
            if (r.status() == ReplicaStatus.PROCESSING) {
                if (writing == null) {
                    writing = new ArrayList<>(1);
                }
                writing.add(r);
            }
        }
        if (writing == null) {
            return 0;
        }
        addAll(writing, m.version, ticker.millis() + writerTimeoutMillis);
        m.replicas().removeAll(writing);
        return writing.size();
    }

    /** Frees the buffers whose release time has passed; returns how many. Cheap when none are due. */
    synchronized int releaseDue() {
        long now = ticker.millis();
        int released = 0;
        while (!entries.isEmpty() && entries.peek().releaseAtMillis() <= now) {
            Entry e = entries.poll();
            e.replica().free(e.version());
            released++;
        }
        return released;
    }
}
