package io.tiffin.core.metrics;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.tiffin.core.transport.ConnectionGuards;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.ProtectedMode;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The admin HTTP endpoint of a master (default port 9003) or node: {@code GET /metrics} (Prometheus text),
 * {@code GET /health} (JSON), {@code GET /api/status} (the cluster at a glance, JSON) and {@code GET /}, the
 * status page that shows it (one HTML file from the jar, no external assets). The page itself holds no
 * cluster data and is served to anyone who can connect; its data comes from {@code /api/status}, which like
 * the other endpoints follows {@link AdminAccess}'s rule (the page asks for the token when refused).
 *
 * <p>It is a Netty server with the RPC ports' {@link ConnectionGuards} at the head of every connection: the
 * connection caps ({@code transport.max-connections}, {@code transport.max-connections-per-address}), TLS
 * (with {@code transport.tls.enabled}: HTTPS with the process's certificate, client certificates as {@code
 * transport.tls.client-auth} says, a plaintext peer answered why), the idle timeout and the backpressure. A
 * request must arrive whole within {@code transport.handshake-timeout} of the connection's start or of the previous
 * answer ({@link AdminHttpHandler}), so a peer that sends a request byte by byte, or nothing, holds no more than one
 * connection for that long and no thread at all. One event loop reads and writes; the endpoints' text is made on
 * two worker threads, never on the event loop. Like the RPC server it refuses an address beyond loopback without
 * credentials ({@link ProtectedMode}).
 *
 * <p>Thread-safe. Owns its event loop, its workers and its channels; {@link #close()} stops them all.
 */
public final class AdminHttpServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(AdminHttpServer.class);
    /** Longest request line, and the most bytes of headers, a request may have. */
    private static final int MAX_LINE = 4096;
    private static final int MAX_HEADERS = 8192;
    /** Largest request body: the endpoints take none. */
    private static final int MAX_BODY = 8192;

    private final EventLoopGroup loop;
    private final ExecutorService workers;
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final Channel serverChannel;
    private final AdminAccess access;

    /**
     * Binds and starts the server with the TLS and credentials of {@code transport}.
     *
     * @param metrics text for /metrics
     * @param health JSON for /health
     * @throws io.tiffin.api.TiffinException {@code INVALID_PARAMS} for an address beyond loopback without
     *     credentials, or TLS files that cannot be loaded
     * @throws IOException when the address cannot be bound (a port in use)
     */
    public AdminHttpServer(String host, int port, TransportSettings transport, Supplier<String> metrics,
                           Supplier<String> health) throws IOException {
        this(host, port, transport, metrics, health, null);
    }

    /**
     * As {@link #AdminHttpServer(String, int, TransportSettings, Supplier, Supplier)}, with {@code status} as the
     * JSON of {@code /api/status} and the status page at {@code /} (both absent when null).
     */
    public AdminHttpServer(String host, int port, TransportSettings transport, Supplier<String> metrics,
                           Supplier<String> health, Supplier<String> status) throws IOException {
        this(host, port, transport, metrics, health, status, java.util.Map.of());
    }

    /**
     * As {@link #AdminHttpServer(String, int, TransportSettings, Supplier, Supplier, Supplier)}, with {@code extra}
     * endpoints by path (behind the same access rule).
     */
    public AdminHttpServer(String host, int port, TransportSettings transport, Supplier<String> metrics,
                           Supplier<String> health, Supplier<String> status,
                           java.util.Map<String, AdminEndpoint> extra) throws IOException {
        ProtectedMode.check("admin HTTP", host, port, transport);
        access = AdminAccess.of(host, transport);
        TlsContexts tls = TlsContexts.load(transport.tls());
        if (tls != null && !tls.canServe()) {
            tls.newServerHandler(io.netty.buffer.ByteBufAllocator.DEFAULT, transport.handshakeTimeout()); // says why
        }
        AdminRoutes routes = new AdminRoutes(access, metrics, health, status, extra);
        String name = "admin HTTP";
        ConnectionGuards guards = new ConnectionGuards(name, transport, tls);
        long requestTimeoutNanos = transport.handshakeTimeout().toNanos();
        workers = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "tiffin-admin-http");
            t.setDaemon(true);
            return t;
        });
        loop = EventLoops.newGroup("admin-http", 1, transport.useNative());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(loop)
                .channel(EventLoops.serverChannelClass(loop))
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        guards.install(ch);
                        ch.pipeline().addLast("http", new HttpServerCodec(MAX_LINE, MAX_HEADERS, MAX_BODY))
                                .addLast("aggregate", new HttpObjectAggregator(MAX_BODY))
                                .addLast("admin", new AdminHttpHandler(routes, workers, requestTimeoutNanos));
                    }
                });
        ChannelFuture bound = bootstrap.bind(host, port).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            shutdown();
            Throwable cause = bound.cause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause.getMessage()), cause);
        }
        serverChannel = bound.channel();
        LOG.info("Admin {} on {}: {}", tls == null ? "HTTP" : "HTTPS", address(), access);
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** Who may use the endpoints. */
    public AdminAccess access() {
        return access;
    }

    @Override
    public void close() {
        serverChannel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        channels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        shutdown();
    }

    private void shutdown() {
        workers.shutdownNow();
        loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    }
}
