package io.tiffin.core.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.Ticker;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Accepts Tiffin connections and dispatches their requests to registered {@link RequestHandler}s.
 *
 * <p>Every connection starts with a handshake: the client's first frame must be a HELLO request
 * carrying the protocol version and, when the server has tokens configured ({@link Credentials}), the
 * token of the peer's role. The server answers {@code HelloReply} or fails with {@code INVALID_VERSION} /
 * {@code ILLEGAL_CLIENT} and closes. A request whose opcode serves none of the peer's roles
 * ({@link OpcodeRoles}) is answered {@code ILLEGAL_CLIENT}; handlers find the peer on the frame
 * ({@link Frame#peer()}). Any other first frame, a response frame from a client, a second HELLO or no HELLO within the
 * handshake timeout closes the connection. After the handshake, requests are dispatched by opcode;
 * many may be in flight per connection and responses go out in whatever order handlers answer. An
 * opcode without a handler is answered with {@code NOT_SUPPORTED}. Each connection is one {@link
 * ServerConnection} behind the {@link ConnectionGuards} (connection caps, TLS, idle timeout, backpressure)
 * and a server {@link FrameCodec} (a small frame limit until the handshake, a time limit per frame); every
 * limit is one of {@link ServerLimits}. {@link #start} refuses an address beyond loopback without
 * credentials ({@link ProtectedMode}).
 *
 * <p><b>Ownership.</b> The server owns each request frame and releases it after the handler returns;
 * see {@link RequestHandler} for how a handler keeps it longer. Response bulk buffers belong to the
 * {@link Responder} once given to it.
 *
 * <p>Thread-safety: all public methods are thread-safe. Handlers may be registered before or after
 * {@link #start}. {@link #close()} blocks until the event loops have stopped and must not be called
 * from one of them.
 */
public final class TransportServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(TransportServer.class);

    private final String name;
    private final TransportSettings settings;
    /** The grants of the credentials of the moment: replaced when a tokens file changes ({@link #grants()}). */
    private volatile RoleGrants grants;
    /** Which process (peer key) holds each peer id on this server's connections. */
    private final PeerKeys peerIds = new PeerKeys();
    private final Ticker ticker;
    /** Null for plaintext. */
    private final TlsContexts tls;
    private final ConnectionGuards guards;
    private final ConcurrentHashMap<Opcode, ServerConnection.Registration> handlers = new ConcurrentHashMap<>();
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

    private EventLoopGroup acceptGroup;
    private EventLoopGroup ioGroup;
    private volatile Channel serverChannel;
    private boolean started;
    private boolean closed;

    /**
     * A server named {@code name} (used in logs and thread names); call {@link #start} to listen.
     *
     * @throws TiffinException {@code INVALID_PARAMS} when TLS is on and its files cannot be loaded
     */
    public TransportServer(String name, TransportSettings settings) {
        this(name, settings, Ticker.SYSTEM);
    }

    /** As {@link #TransportServer(String, TransportSettings)}, timing frames ({@code transport.frame-timeout}) on {@code ticker}. */
    public TransportServer(String name, TransportSettings settings, Ticker ticker) {
        this.name = Objects.requireNonNull(name, "name");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        this.grants = new RoleGrants(settings.credentials().current());
        if (!settings.credentials().certificateNames().isEmpty()
                && !(settings.tls().enabled() && settings.tls().clientAuth() != TlsSettings.ClientAuth.NONE)) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "server " + name + ": transport.tls.client-names,"
                    + " node-names and admin-names name client certificates, which only mutual TLS asks for; set"
                    + " transport.tls.enabled = true and transport.tls.client-auth = require (or optional)");
        }
        this.tls = TlsContexts.load(settings.tls());
        if (tls != null && !tls.canServe()) {
            tls.newServerHandler(io.netty.buffer.ByteBufAllocator.DEFAULT, settings.handshakeTimeout()); // says what is missing
        }
        this.guards = new ConnectionGuards(name, settings, tls);
    }

    /**
     * Serves {@code opcode} with {@code handler}, run on {@code executor}; a null executor runs it inline
     * on the connection's event loop, which is only allowed for handlers that never block.
     *
     * @throws IllegalArgumentException for {@link Opcode#HELLO}, which the server handles itself
     * @throws IllegalStateException if the opcode already has a handler
     */
    public TransportServer register(Opcode opcode, RequestHandler handler, Executor executor) {
        return register(opcode, handler, executor, null);
    }

    /**
     * As {@link #register(Opcode, RequestHandler, Executor)}, and on plaintext connections the bulk of a large
     * request goes straight from the socket into the memory {@code placer} names for it (null: no placer); the
     * handler then finds {@link Frame#bulkPlaced()}. With TLS the placer is not asked: the socket's bytes are
     * records to decrypt.
     */
    public TransportServer register(Opcode opcode, RequestHandler handler, Executor executor, BulkPlacer placer) {
        Objects.requireNonNull(opcode, "opcode");
        Objects.requireNonNull(handler, "handler");
        if (opcode == Opcode.HELLO) {
            throw new IllegalArgumentException("HELLO is handled by the transport itself; register another opcode");
        }
        if (handlers.putIfAbsent(opcode, new ServerConnection.Registration(handler, executor, placer)) != null) {
            throw new IllegalStateException("server " + name + " already has a handler for " + opcode
                    + "; register each opcode once");
        }
        return this;
    }

    /**
     * Binds to {@code host:port} (port 0 picks a free port, see {@link #localAddress()}) and starts
     * accepting connections. Blocks until bound.
     *
     * @throws TiffinException {@code INVALID_PARAMS} if the address cannot be bound, or if it reaches beyond
     *     this host without credentials ({@link ProtectedMode})
     */
    public synchronized TransportServer start(String host, int port) {
        if (closed) {
            throw new IllegalStateException("server " + name + " is closed; create a new one");
        }
        if (started) {
            throw new IllegalStateException("server " + name + " is already started on " + localAddress());
        }
        ProtectedMode.check(name, host, port, settings);
        acceptGroup = EventLoops.newGroup(name + "-accept", 1, settings.useNative());
        ioGroup = EventLoops.newGroup(name + "-io", settings.ioThreads(), settings.useNative());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptGroup, ioGroup)
                .channel(EventLoops.serverChannelClass(ioGroup))
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        initConnection(ch);
                    }
                });
        ChannelFuture bound = bootstrap.bind(host, port).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            shutdownGroups();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "server " + name + " cannot listen on " + host
                    + ":" + port + " (" + bound.cause() + "); choose another address or port, or stop the"
                    + " process that uses it", bound.cause());
        }
        serverChannel = bound.channel();
        started = true;
        LOG.info("Server {} listening on {} ({}, {}, {})", name, serverChannel.localAddress(),
                EventLoops.isEpoll(ioGroup) ? "epoll" : "nio", tls == null ? "plaintext" : tls, settings);
        return this;
    }

    /**
     * Builds a new connection's pipeline: the guards (caps, TLS, idle timeout, backpressure), then the
     * frames and this server's handlers. Package-private so tests can run it on an embedded channel.
     */
    void initConnection(Channel ch) {
        guards.install(ch);
        FrameCodec codec = new FrameCodec(settings.maxFrameSize(), settings.limits(), ticker);
        // Answers written while the loop handles a read (inline handlers, e.g. a batch of DATA_READs) are
        // flushed together when the read completes: one write (and with TLS, one encryption pass) for all.
        ch.pipeline()
                .addLast("flush-consolidation", new FlushConsolidationHandler(
                        FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false))
                .addLast("frame-codec", codec);
        ServerConnection connection = new ServerConnection(name, settings, grants(), handlers, codec, peerIds);
        ch.pipeline().addLast("server", connection);
        if (tls == null) {
            codec.placeBulks(ch, connection::bulkDestination);
        }
    }

    /** Connections open now; for tests and metrics. */
    public int connections() {
        return guards.connections();
    }

    /** Whether this server speaks TLS, and with which engine; null for plaintext. */
    public TlsContexts tls() {
        return tls;
    }

    /** Event-loop threads serving connections, as resolved at construction (0 stays 0: half the processors). */
    public int ioThreads() {
        return settings.ioThreads() == 0 ? EventLoops.defaultThreads() : settings.ioThreads();
    }

    /** The bound address, with the real port when started with port 0. */
    public InetSocketAddress localAddress() {
        Channel ch = serverChannel;
        if (ch == null) {
            throw new IllegalStateException("server " + name + " is not started; call start() first");
        }
        return (InetSocketAddress) ch.localAddress();
    }

    public String name() {
        return name;
    }

    public TransportSettings settings() {
        return settings;
    }

    /**
     * Stops listening, closes every connection (their pending requests get no answer) and stops the
     * event loops. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Channel ch = serverChannel;
        if (ch != null) {
            ch.close().awaitUninterruptibly();
        }
        channels.close().awaitUninterruptibly();
        shutdownGroups();
        LOG.info("Server {} closed", name);
    }

    private void shutdownGroups() {
        if (acceptGroup != null) {
            acceptGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
        if (ioGroup != null) {
            ioGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
        if (acceptGroup != null) {
            acceptGroup.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
        if (ioGroup != null) {
            ioGroup.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    /** The grants a new connection is checked with: those of the credentials of the moment (a tokens file may change). */
    private RoleGrants grants() {
        RoleGrants g = RoleGrants.of(settings.credentials().current(), grants);
        grants = g;
        return g;
    }

}
