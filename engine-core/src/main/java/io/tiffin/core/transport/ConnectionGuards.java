package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What every server puts at the head of a new connection's pipeline, whatever protocol follows: the
 * connection caps, TLS (and what to do with a plaintext peer of a TLS server), the idle timeout and the
 * backpressure that stops reading a peer whose answers pile up. {@link TransportServer} installs them for
 * the master and nodes; another server (a gateway) installs them the same way with {@link #install} and
 * adds its own protocol after them.
 *
 * <p><b>Refusals.</b> A connection over a cap, or a plaintext peer of a TLS server, is not cut off
 * silently: the guards set {@link #REFUSAL} on the channel, the bytes go on to the protocol's handler, and
 * that handler must answer the peer's first request with that message and close (a peer then sees why,
 * instead of a reset). The protocol's handshake timeout closes those that send nothing. Beyond twice a
 * cap, connections are closed at once.
 *
 * <p>Thread-safe: one instance serves all connections of a server; the counters are concurrent and the
 * per-connection handlers it installs are confined to their channel's event loop.
 */
public final class ConnectionGuards {
    private static final Logger LOG = LogManager.getLogger(ConnectionGuards.class);

    /**
     * Why this connection is refused, set by the guards; the protocol's handler answers the first request
     * with it and closes. Null for a connection that may proceed.
     */
    public static final AttributeKey<Refusal> REFUSAL = AttributeKey.valueOf("tiffin.refusal");

    /**
     * Why a connection is refused: {@code code} for the peer ({@code UNAVAILABLE_IN_CURRENT_STATUS} over a
     * cap, {@code ILLEGAL_CLIENT} for plaintext to a TLS server) and the message it reads. Thread-safe
     * (immutable).
     */
    public record Refusal(io.tiffin.api.ErrorCode code, String message) {
    }

    private final String serverName;
    private final ServerLimits limits;
    private final TlsContexts tls;
    private final java.time.Duration handshakeTimeout;
    private final AtomicInteger open = new AtomicInteger();
    /** Open connections per remote address; an entry goes when its count reaches 0 (each update atomic per key). */
    private final ConcurrentHashMap<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
    private final Counter counter = new Counter();
    private final IdleCloser idleCloser = new IdleCloser();
    private final WritabilityGate gate = new WritabilityGate();
    private final TlsEvents tlsEvents = new TlsEvents();

    /**
     * Guards for server {@code serverName} (for logs and messages) with {@code settings}' limits and
     * handshake timeout; {@code tls} null = plaintext.
     */
    public ConnectionGuards(String serverName, TransportSettings settings, TlsContexts tls) {
        this.serverName = serverName;
        this.limits = settings.limits();
        this.handshakeTimeout = settings.handshakeTimeout();
        this.tls = tls;
    }

    /**
     * The common name of the verified client certificate of {@code ch}'s TLS session, or null (plaintext,
     * no certificate, or a name without CN). Call once the TLS handshake is done.
     */
    public static String clientCertificateName(io.netty.channel.Channel ch) {
        SslHandler tls = ch.pipeline().get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            java.security.cert.Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof java.security.cert.X509Certificate cert)) {
                return null;
            }
            for (javax.naming.ldap.Rdn rdn : new javax.naming.ldap.LdapName(cert.getSubjectX500Principal().getName())
                    .getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    return String.valueOf(rdn.getValue());
                }
            }
            return null;
        } catch (javax.net.ssl.SSLPeerUnverifiedException | javax.naming.InvalidNameException e) {
            return null;
        }
    }

    /**
     * Adds the guards at the head of {@code ch}'s pipeline and sets its write-buffer watermarks; call from
     * the server's channel initializer, before adding the protocol's handlers.
     */
    public void install(Channel ch) {
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(limits.writeBufferLimit() / 4,
                limits.writeBufferLimit()));
        ch.pipeline().addLast("connection-caps", counter);
        if (tls != null) {
            ch.pipeline().addLast("tls", new TlsSniffer()).addLast("tls-events", tlsEvents);
        }
        long idle = limits.idleTimeout().toMillis();
        if (idle > 0) {
            ch.pipeline().addLast("idle", new IdleStateHandler(true, 0, 0, idle, TimeUnit.MILLISECONDS))
                    .addLast("idle-close", idleCloser);
        }
        ch.pipeline().addLast("backpressure", gate);
    }

    /** Connections open now (refused ones included). */
    public int connections() {
        return open.get();
    }

    private static InetAddress addressOf(SocketAddress a) {
        return a instanceof InetSocketAddress isa ? isa.getAddress() : null;
    }

    /** Counts connections per server and per address; refuses those over a cap. Sharable. */
    @Sharable
    private final class Counter extends ChannelInboundHandlerAdapter {
        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            int total = open.incrementAndGet();
            InetAddress address = addressOf(ctx.channel().remoteAddress());
            int fromAddress = address == null ? 0 : perAddress.merge(address, 1, Integer::sum);
            String refusal = null;
            if (total > limits.maxConnections()) {
                refusal = "server " + serverName + " holds " + (total - 1) + " connections, its limit"
                        + " (transport.max-connections = " + limits.maxConnections() + "); retry later or raise it";
            } else if (fromAddress > limits.maxConnectionsPerAddress()) {
                refusal = "server " + serverName + " holds " + (fromAddress - 1) + " connections from " + address
                        .getHostAddress() + ", its limit per address (transport.max-connections-per-address = "
                        + limits.maxConnectionsPerAddress() + "); close idle connections, or raise the limit";
            }
            if (refusal != null) {
                ctx.channel().attr(REFUSAL).set(new Refusal(io.tiffin.api.ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS,
                        refusal));
                if (total > 2L * limits.maxConnections() || fromAddress > 2L * limits.maxConnectionsPerAddress()) {
                    ctx.close(); // far over: no answer, just the cheapest way out
                    return;
                }
                LOG.warn("Refusing a connection from {}: {}", ctx.channel().remoteAddress(), refusal);
            }
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            open.decrementAndGet();
            InetAddress address = addressOf(ctx.channel().remoteAddress());
            if (address != null) {
                perAddress.computeIfPresent(address, (a, n) -> n == 1 ? null : n - 1);
            }
            ctx.fireChannelInactive();
        }
    }

    /**
     * Looks at a connection's first bytes: a TLS record puts the TLS handler in its place; anything else is
     * a plaintext peer of a TLS server, refused ({@link #REFUSAL}) and passed on unencrypted so the
     * protocol's handler can say so in the peer's own protocol. One per connection.
     */
    private final class TlsSniffer extends ByteToMessageDecoder {
        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (in.readableBytes() < 5) {
                return; // a TLS record header is 5 bytes
            }
            if (SslHandler.isEncrypted(in, false)) {
                ctx.pipeline().addAfter(ctx.name(), "tls-chunks", TlsWriteChunker.INSTANCE)
                        .replace(this, "tls", tls.newServerHandler(ctx.alloc(), handshakeTimeout));
                return;
            }
            String refusal = "server " + serverName + " accepts TLS connections only (transport.tls.enabled ="
                    + " true on the server); enable TLS on this client too: transport.tls.enabled = true, with"
                    + " transport.tls.ca naming the authority of the server's certificate";
            ctx.channel().attr(REFUSAL).setIfAbsent(new Refusal(io.tiffin.api.ErrorCode.ILLEGAL_CLIENT, refusal));
            LOG.warn("Connection from {} to server {} speaks plaintext to a TLS server; refusing it",
                    ctx.channel().remoteAddress(), serverName);
            ctx.pipeline().remove(this); // passes the bytes read so far on
        }
    }

    /** Logs a failed TLS handshake in one line (the handler closes the connection itself). Sharable. */
    @Sharable
    private final class TlsEvents extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof SslHandshakeCompletionEvent done && !done.isSuccess()) {
                LOG.warn("TLS handshake of {} with server {} failed: {} (a client that does not trust the server's"
                        + " certificate, presents none or one this server's transport.tls.ca did not issue)",
                        ctx.channel().remoteAddress(), serverName, done.cause().toString());
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof io.netty.handler.codec.DecoderException
                    && cause.getCause() instanceof javax.net.ssl.SSLException) {
                ctx.close(); // said once by userEventTriggered
                return;
            }
            ctx.fireExceptionCaught(cause);
        }
    }

    /** Closes a connection idle for {@code transport.idle-timeout}. Sharable. */
    @Sharable
    private final class IdleCloser extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                LOG.info("Closing connection from {} to server {}: idle for transport.idle-timeout = {}",
                        ctx.channel().remoteAddress(), serverName, limits.idleTimeout());
                ctx.close();
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /**
     * Stops reading a peer while more than {@code transport.write-buffer-limit} bytes of answers wait for it
     * (it does not read them, or reads slowly), and resumes below a quarter: a peer that never reads cannot
     * make the server queue answers without end. Sharable.
     */
    @Sharable
    private static final class WritabilityGate extends ChannelInboundHandlerAdapter {
        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            ctx.channel().config().setAutoRead(ctx.channel().isWritable());
            ctx.fireChannelWritabilityChanged();
        }
    }
}
