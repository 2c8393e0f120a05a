package io.tiffin.core.transport;

import io.netty.channel.EventLoopGroup;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Caches one {@link TransportClient} per endpoint, all sharing one event-loop group owned by the pool.
 * {@link #get} returns the cached connection while it is alive and reconnects otherwise.
 *
 * <p>Thread-safe. {@link #get} may block while connecting (at most the handshake timeout) and must not
 * be called on an event-loop thread; concurrent gets for one endpoint connect only once. Clients
 * returned by the pool belong to it: callers must not close them. Holds no buffers; holds the TLS contexts
 * ({@link TlsContexts}) loaded from the settings at construction, when TLS is on.
 */
public final class TransportClientPool implements AutoCloseable {

    private final TransportSettings settings;
    private final String peerId;
    private final Ticker ticker;
    private final EventLoopGroup group;
    /** Loaded once from the settings; null for plaintext. */
    private final TlsContexts tls;
    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Guards connecting to one endpoint; {@code client} is written under the slot's monitor. */
    private static final class Slot {
        volatile TransportClient client;
    }

    /**
     * A pool whose connections identify as {@code peerId} and whose event-loop threads are named after
     * {@code name}.
     */
    public TransportClientPool(String name, TransportSettings settings, String peerId) {
        this(name, settings, peerId, Ticker.SYSTEM);
    }

    /**
     * As {@link #TransportClientPool(String, TransportSettings, String)}, with connection deadlines on
     * {@code ticker} (see {@link TransportClient#connect(String, int, TransportSettings, String,
     * EventLoopGroup, Ticker)}).
     */
    public TransportClientPool(String name, TransportSettings settings, String peerId, Ticker ticker) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.peerId = Objects.requireNonNull(peerId, "peerId");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.tls = TlsContexts.load(settings.tls());
        this.group = EventLoops.newGroup(Objects.requireNonNull(name, "name") + "-client", settings.ioThreads(),
                settings.useNative());
    }

    /**
     * The live connection to {@code hostPort} ({@code host:port}, IPv6 hosts in brackets), connecting
     * if there is none.
     *
     * @throws TiffinException {@code INVALID_PARAMS} for a malformed endpoint, {@code RPC_FAIL} if the
     *     pool is closed, or whatever {@link TransportClient#connect} throws
     */
    public TransportClient get(String hostPort) {
        Endpoint e = Endpoint.parse(hostPort);
        return get(e.host(), e.port(), hostPort);
    }

    /** The live connection to {@code host:port}, connecting if there is none. */
    public TransportClient get(String host, int port) {
        return get(host, port, host + ":" + port);
    }

    private TransportClient get(String host, int port, String key) {
        checkOpen();
        Slot slot = slots.computeIfAbsent(key, k -> new Slot());
        TransportClient client = slot.client;
        if (client != null && client.isActive()) {
            return client;
        }
        synchronized (slot) {
            client = slot.client;
            if (client != null && client.isActive()) {
                return client;
            }
            checkOpen();
            if (client != null) {
                client.close();
            }
            client = TransportClient.connect(host, port, settings, tls, peerId, group, ticker);
            slot.client = client;
        }
        if (closed) {
            client.close();
            checkOpen();
        }
        return client;
    }

    public TransportSettings settings() {
        return settings;
    }

    private void checkOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "the transport client pool is closed; create a new one");
        }
    }

    /** Closes every connection and stops the event loops. Idempotent; blocks until the loops stopped. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Slot slot : slots.values()) {
            TransportClient client = slot.client;
            if (client != null) {
                client.close();
            }
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
