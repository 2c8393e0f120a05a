package io.tiffin.core.client;

import io.tiffin.core.client.hotcache.LocalHotCache;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Sends this client's hot-cache and location-cache counters to the master (for /metrics and {@code tiffin
 * stat}): every 2 s on its own daemon thread ({@code tiffin-client-report}) when either cache is on, and
 * on demand ({@link #report()}). A failed report is logged at debug level and the next one tried.
 *
 * <p>Thread-safe. Owns its thread: {@link #close()} stops it.
 */
final class CacheReporter implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(CacheReporter.class);

    private final MasterStub master;
    private final String clientId;
    /** Null when disabled. */
    private final LocalHotCache hotCache;
    /** Null when disabled. */
    private final LocationCache locations;
    private final ClientLifecycle lifecycle;
    /** Null when neither cache is on. */
    private final ScheduledExecutorService thread;

    CacheReporter(MasterStub master, String clientId, ClientCaches caches, ClientLifecycle lifecycle) {
        this.master = master;
        this.clientId = clientId;
        this.hotCache = caches.hotCache();
        this.locations = caches.locations();
        this.lifecycle = lifecycle;
        if (hotCache != null || locations != null) {
            thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "tiffin-client-report");
                t.setDaemon(true);
                return t;
            });
            thread.scheduleWithFixedDelay(this::report, 1, 2, TimeUnit.SECONDS);
        } else {
            thread = null;
        }
    }

    /** Sends the counters now (nothing when neither cache is on or the client is closed). */
    void report() {
        if ((hotCache == null && locations == null) || lifecycle.isClosed()) {
            return;
        }
        CacheCounters counters = CacheCounters.of(hotCache == null ? null : hotCache.stats(),
                locations == null ? null : locations.stats());
        try {
            master.reportCaches(clientId, counters);
        } catch (RuntimeException e) {
            LOG.debug("cache report failed", e);
        }
    }

    /** Stops the reporting thread (interrupting a report under way). */
    @Override
    public void close() {
        if (thread != null) {
            thread.shutdownNow();
        }
    }
}
