package io.tiffin.core.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.ReceiveWindows;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.util.Ticker;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The Redis-protocol (RESP2 and RESP3) gateway: a server that LMCache's {@code redis://} backend,
 * redis-py, redis-cli and redis-benchmark use as if it were Redis, storing the values in Tiffin through a
 * {@link GatewayStore}. docs/REDIS.md lists the commands and how they differ from Redis's.
 *
 * <p>Netty's event loops only parse and write; store calls run on virtual threads, one connection's
 * commands one at a time and in order ({@link CommandRunner}). Memory is bounded by the settings' limits
 * ({@link RespConnection}, {@link MemoryBudget}).
 *
 * <p>Thread-safe. {@link #close()} stops listening, closes the connections, waits for running commands to
 * end and closes the store; it must not be called from an event loop.
 */
public final class GatewayServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(GatewayServer.class);

    private final GatewayContext gw;
    private final CommandTable table;
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final ExecutorService commandThreads;
    /** The batch of each event loop, made when the loop's first connection comes. */
    private final java.util.concurrent.ConcurrentHashMap<io.netty.channel.EventLoop, LoopBatch> batches =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** RESP over TLS ({@code transport.tls.*}); null = plaintext. */
    private final TlsContexts tls;
    /** Counts what connections write to their sockets as progress of {@link GatewayContext#budget}. */
    private final WriteProgress writeProgress;
    private final EventLoopGroup acceptGroup;
    private final EventLoopGroup ioGroup;
    private final Channel serverChannel;
    private boolean closed;

    private GatewayServer(GatewayStore store, GatewaySettings settings, Ticker ticker, TlsContexts tls,
                          Duration handshakeTimeout) {
        this.tls = tls;
        this.gw = new GatewayContext(store, settings, ticker);
        this.writeProgress = new WriteProgress(gw.budget);
        this.table = new CommandTable(gw);
        this.commandThreads = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("tiffin-resp").factory());
        this.acceptGroup = EventLoops.newGroup("resp-accept", 1, settings.useNative());
        this.ioGroup = EventLoops.newGroup("resp-io", settings.ioThreads(), settings.useNative());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptGroup, ioGroup)
                .channel(EventLoops.serverChannelClass(ioGroup))
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(settings.writeBuffer() / 2, settings.writeBuffer()))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        if (!settings.idleTimeout().isZero()) {
                            ch.pipeline().addLast("idle", new IdleStateHandler(true, 0, 0,
                                    settings.idleTimeout().toNanos(), TimeUnit.NANOSECONDS));
                        }
                        RespConnection connection = new RespConnection(gw, table, commandThreads,
                                GatewayServer.this::loopBatch);
                        if (tls != null) {
                            // RESP inside TLS, as Redis 6 serves it; the socket's bytes are records to decrypt
                            ch.pipeline().addFirst("tls", tls.newServerHandler(ch.alloc(), handshakeTimeout));
                        } else {
                            // a long value arriving is read from the socket straight into its own buffer
                            ch.config().setRecvByteBufAllocator(new ReceiveWindows(ch.config().getRecvByteBufAllocator(),
                                    connection::receiveWindow));
                            connection.receiveValuesInPlace();
                        }
                        ch.pipeline().addFirst("write-progress", writeProgress); // next to the socket, before TLS
                        ch.pipeline().addLast("resp-encoder", new RespEncoder()).addLast("resp", connection);
                    }
                });
        ChannelFuture bound = bootstrap.bind(settings.host(), settings.port()).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            shutdownLoops();
            commandThreads.close();
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the Redis gateway cannot listen on "
                    + settings.host() + ":" + settings.port() + " (" + bound.cause().getMessage() + ")", bound.cause());
        }
        serverChannel = bound.channel();
        gw.bound(address().getPort(), EventLoops.isEpoll(ioGroup));
        LOG.info("Redis gateway listening on {} ({}, {}{})", address(), gw.epoll() ? "epoll" : "nio", settings,
                tls == null ? "" : ", TLS: " + tls);
    }

    /**
     * Starts a gateway over {@code store} (which it closes with itself, once started).
     *
     * @throws TiffinException {@code INVALID_PARAMS} when the address cannot be bound (the store is then
     *     the caller's to close)
     */
    public static GatewayServer start(GatewayStore store, GatewaySettings settings) {
        return start(store, settings, Ticker.SYSTEM);
    }

    /** As {@link #start(GatewayStore, GatewaySettings)}, with {@code ticker} as the clock of deadlines and INFO. */
    public static GatewayServer start(GatewayStore store, GatewaySettings settings, Ticker ticker) {
        return start(store, settings, ticker, null, Duration.ZERO);
    }

    /**
     * As {@link #start(GatewayStore, GatewaySettings, Ticker)}, serving RESP inside TLS with {@code tls} (its
     * certificate, key and client-certificate policy: the {@code transport.tls.*} keys; null = plaintext), each
     * connection's handshake bounded by {@code handshakeTimeout}.
     *
     * @throws TiffinException also {@code INVALID_PARAMS} when {@code tls} has no certificate to present
     */
    public static GatewayServer start(GatewayStore store, GatewaySettings settings, Ticker ticker, TlsContexts tls,
                                      Duration handshakeTimeout) {
        if (tls != null && !tls.canServe()) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "the Redis gateway serves RESP over TLS"
                    + " (transport.tls.enabled = true) and needs transport.tls.cert and transport.tls.key (the PEM"
                    + " certificate chain and private key it presents)");
        }
        return new GatewayServer(Objects.requireNonNull(store, "store"), Objects.requireNonNull(settings, "settings"),
                Objects.requireNonNull(ticker, "ticker"), tls, handshakeTimeout);
    }

    /** The batch of {@code loop}'s connections (made with the loop's first connection). */
    private LoopBatch loopBatch(io.netty.channel.EventLoop loop) {
        return batches.computeIfAbsent(loop, l -> new LoopBatch(l, gw, table.strings(), commandThreads));
    }

    /** The bound address (with the real port when started on port 0). */
    public boolean tls() {
        return tls != null;
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** Connections open now. */
    public int connections() {
        return gw.stats.connected.get();
    }

    /** Bytes of commands and replies in flight now (counted in {@code gateway.max-memory}). */
    public long bufferedBytes() {
        return gw.budget.used();
    }

    /** Values lent by the store for replies and not yet released (0 once every such reply is written or dropped). */
    public long lentValues() {
        return gw.stats.lentOpen.get();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        serverChannel.close().awaitUninterruptibly();
        channels.close().awaitUninterruptibly();
        commandThreads.close();
        shutdownLoops();
        gw.store.close();
        LOG.info("Redis gateway on {} closed", serverChannel.localAddress());
    }

    private void shutdownLoops() {
        acceptGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        ioGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        acceptGroup.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
        ioGroup.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
