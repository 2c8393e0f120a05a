package io.tiffin.core.node;

import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.core.util.Ticker;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The keys of SSD copies that went (evicted, or found corrupt: {@link StorageListener}) and that the
 * master must drop from its listing, queued until it has taken them.
 *
 * <p>The listener runs on the backend's writer or reader thread (the bucket backend evicts under its
 * write lock), so {@link #queue} only records the keys, coalesced: each key queued at most once, none
 * ever dropped. {@link #deliver} sends them ({@code EVICT_DISK_REPLICA}, up to {@value #BATCH} keys a
 * call) on the offload worker's thread; a failed send puts its keys back and the next delivery waits for
 * a back-off of {@value #RETRY_MIN_MILLIS} ms doubling to {@value #RETRY_MAX_MILLIS} ms (on the node's
 * {@link Ticker}), until the master takes them or {@link #stop()}. The master ignores keys it no longer
 * knows.
 *
 * <p><b>Never after a newer copy.</b> A write of a key drops the notices queued for it ({@link #forget}:
 * they were about copies the write replaced, backends evict before they write); a notice of a
 * <i>lost</i> copy (sent by the backend after the drop) whose key the backend holds again when it is sent
 * is dropped too (a newer copy came after the loss). Sends hold {@link DiskReports#lock()}.
 *
 * <p>Thread-safe: {@link #queue}, {@link #forget}, {@link #pending} and {@link #due} from any thread;
 * {@link #deliver} from the offload worker only. Holds no resources.
 */
final class EvictionNotices {
    private static final Logger LOG = LogManager.getLogger(EvictionNotices.class);
    static final int BATCH = 1000;
    static final long RETRY_MIN_MILLIS = 100;
    static final long RETRY_MAX_MILLIS = 5_000;

    private final String nodeId;
    private final StorageBackend backend;
    private final DiskReports reports;
    private final Ticker ticker;
    /**
     * Keys whose SSD copies went and the master has not taken yet, in queue order; the value is true when
     * every notice of the key was a loss (sent by the backend after the copy was dropped). Guarded by itself.
     */
    private final LinkedHashMap<String, Boolean> queued = new LinkedHashMap<>();
    /** {@link Ticker#nanos()} before which no notice is sent (back-off after a failure); written by the offload worker. */
    private volatile long retryAtNanos;
    private volatile boolean stopped;
    /** Offload worker only: the current back-off and how many sends failed in a row. */
    private long backoffMillis = RETRY_MIN_MILLIS;
    private long failures;

    EvictionNotices(String nodeId, StorageBackend backend, DiskReports reports, Ticker ticker) {
        this.nodeId = nodeId;
        this.backend = backend;
        this.reports = reports;
        this.ticker = ticker;
        this.retryAtNanos = ticker.nanos();
    }

    /** The listener's side: records the keys and returns; never blocks on I/O. */
    void queue(List<String> keys, boolean lost) {
        synchronized (queued) {
            for (String key : keys) {
                queued.merge(key, lost, Boolean::logicalAnd);
            }
        }
    }

    /** Forgets queued notices of keys the node has just written; offload worker, under {@link DiskReports#lock()}. */
    void forget(Collection<String> keys) {
        synchronized (queued) {
            if (!queued.isEmpty()) {
                queued.keySet().removeAll(keys);
            }
        }
    }

    /** How many keys wait for the master to take their notice. */
    int pending() {
        synchronized (queued) {
            return queued.size();
        }
    }

    /** Whether notices wait and no back-off runs: a {@link #deliver} now would send. */
    boolean due() {
        return !stopped && ticker.nanos() - retryAtNanos >= 0 && pending() > 0;
    }

    /** No more sends: a running {@link #deliver} ends after its current call. */
    void stop() {
        stopped = true;
    }

    /** Sends the queued notices until none is left or a send fails; offload worker only. */
    void deliver() {
        if (!due()) {
            return;
        }
        reports.lock();
        try {
            while (!stopped) {
                Map<String, Boolean> taken = take();
                if (taken.isEmpty()) {
                    return;
                }
                List<String> keys = new ArrayList<>(taken.size());
                taken.forEach((key, lost) -> {
                    if (!lost || !heldByBackend(key)) {
                        keys.add(key);
                    }
                });
                if (keys.isEmpty()) {
                    continue;
                }
                try {
                    reports.gone(keys);
                } catch (RuntimeException e) {
                    synchronized (queued) {
                        // Back in the queue (a notice queued meanwhile for a key merges with it).
                        taken.forEach((key, lost) -> queued.merge(key, lost, Boolean::logicalAnd));
                    }
                    failed(e);
                    return;
                }
                if (failures > 0) {
                    LOG.info("Node {} told the master about {} gone SSD copies after {} failed attempts", nodeId,
                            keys.size(), failures);
                }
                failures = 0;
                backoffMillis = RETRY_MIN_MILLIS;
            }
        } finally {
            reports.unlock();
        }
    }

    /** Removes up to {@value #BATCH} queued notices, in queue order. */
    private Map<String, Boolean> take() {
        Map<String, Boolean> taken = new LinkedHashMap<>();
        synchronized (queued) {
            var it = queued.entrySet().iterator();
            while (it.hasNext() && taken.size() < BATCH) {
                var e = it.next();
                taken.put(e.getKey(), e.getValue());
                it.remove();
            }
        }
        return taken;
    }

    /**
     * Whether the backend holds {@code key}. A lost copy is dropped before its notice is queued, so a
     * held key is a newer copy written since. If the backend cannot answer, the notice goes out.
     */
    private boolean heldByBackend(String key) {
        try {
            return backend.size(key).isPresent();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void failed(RuntimeException e) {
        failures++;
        backoffMillis = failures == 1 ? RETRY_MIN_MILLIS : Math.min(RETRY_MAX_MILLIS, backoffMillis * 2);
        retryAtNanos = ticker.nanos() + TimeUnit.MILLISECONDS.toNanos(backoffMillis);
        if (failures == 1 || failures % 20 == 0) {
            LOG.warn("Node {} could not tell the master that {} SSD copies are gone ({} attempts failed, last: {});"
                    + " it keeps the notices and retries, at most {} ms apart. Until the master hears, it lists"
                    + " these copies and reads of them fail: check that the master is reachable", nodeId,
                    pending(), failures, e.getMessage(), RETRY_MAX_MILLIS);
        }
    }
}
