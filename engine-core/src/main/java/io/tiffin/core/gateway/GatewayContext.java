package io.tiffin.core.gateway;

import io.tiffin.core.util.Ticker;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What every connection of one gateway shares: the store, the settings, the memory budget, the counters
 * and facts INFO reports (run id, start time, port).
 *
 * <p>Thread-safe.
 */
final class GatewayContext {
    final GatewayStore store;
    final GatewaySettings settings;
    final MemoryBudget budget;
    final GatewayStats stats = new GatewayStats();
    /** Puts of all connections, batched together. */
    final PutCombiner puts;
    final String runId;
    /** The clock of deadlines (EX, EXPIRE), uptime and INFO's server time. */
    final Ticker ticker;
    final long startMillis;
    private final AtomicLong clientIds = new AtomicLong();
    private volatile int port;
    private volatile boolean epoll;

    GatewayContext(GatewayStore store, GatewaySettings settings, Ticker ticker) {
        this.ticker = ticker;
        this.startMillis = ticker.millis();
        this.store = store;
        this.settings = settings;
        this.budget = new MemoryBudget(settings.maxMemory());
        this.puts = new PutCombiner(store, stats);
        byte[] id = new byte[20];
        ThreadLocalRandom.current().nextBytes(id);
        this.runId = HexFormat.of().formatHex(id);
    }

    long nextClientId() {
        return clientIds.incrementAndGet();
    }

    int port() {
        return port;
    }

    boolean epoll() {
        return epoll;
    }

    /** Records where the server listens, once bound. */
    void bound(int boundPort, boolean usesEpoll) {
        this.port = boundPort;
        this.epoll = usesEpoll;
    }
}
