package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.ReferenceCountUtil;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.ErrorReply;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.HelloReply;
import io.tiffin.core.util.Ticker;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One authenticated connection to a {@link TransportServer}, multiplexing many concurrent requests:
 * each gets a request id and responses are matched by it, in any order.
 *
 * <p><b>Ownership.</b> {@link #call} takes ownership of the bulk buffer passed to it (it is released
 * once written, or when the call fails before that). A successful call completes with a response
 * {@link Frame} that the caller owns and must release exactly once.
 *
 * <p><b>Threading.</b> Thread-safe. Futures complete on the connection's Netty event loop, so stages
 * chained on them must not block; use the {@code *Async} variants with an executor for blocking work.
 * {@link #callSync} and {@link #connect} block and must not be called on an event-loop thread.
 */
public final class TransportClient implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(TransportClient.class);

    private final String endpoint;
    private final TransportSettings settings;
    private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Why the TLS session failed, once it did (null = it did not): later failures say so. */
    private volatile String tlsFailure;
    private volatile Channel channel;
    private volatile boolean ready;
    private volatile String serverVersion = "";

    /** A call waiting for its response. */
    private static final class Pending extends CompletableFuture<Frame> {
        final Opcode opcode;
        volatile io.netty.util.concurrent.ScheduledFuture<?> timer;

        Pending(Opcode opcode) {
            this.opcode = opcode;
        }

        void cancelTimer() {
            io.netty.util.concurrent.ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
        }
    }

    private TransportClient(String host, int port, TransportSettings settings) {
        this.endpoint = host + ":" + port;
        this.settings = settings;
    }

    /**
     * Connects to {@code host:port} on {@code group} (which the caller keeps owning) and completes the
     * handshake, identifying as {@code peerId}; connecting and handshaking together are bounded by the
     * settings' handshake timeout.
     *
     * @throws TiffinException {@code RPC_FAIL} if the server cannot be reached or does not answer,
     *     {@code INVALID_VERSION} if it speaks another protocol version, {@code ILLEGAL_CLIENT} if it
     *     rejects the auth token
     */
    public static TransportClient connect(
            String host, int port, TransportSettings settings, String peerId, EventLoopGroup group) {
        return connect(host, port, settings, peerId, group, Ticker.SYSTEM);
    }

    /**
     * As {@link #connect(String, int, TransportSettings, String, EventLoopGroup)}, with the handshake's
     * deadline measured on {@code ticker}. The wait for the TCP connection and the timeouts of calls run
     * on the event loop's own timers.
     */
    public static TransportClient connect(String host, int port, TransportSettings settings, String peerId,
            EventLoopGroup group, Ticker ticker) {
        return connect(host, port, settings, peerId, group, TiffinVersion.PROTOCOL_VERSION, ticker);
    }

    /** {@link #connect} announcing {@code protocolVersion} in HELLO; tests use it to fake another version. */
    static TransportClient connect(String host, int port, TransportSettings settings, String peerId,
            EventLoopGroup group, int protocolVersion) {
        return connect(host, port, settings, peerId, group, protocolVersion, Ticker.SYSTEM);
    }

    private static TransportClient connect(String host, int port, TransportSettings settings, String peerId,
            EventLoopGroup group, int protocolVersion, Ticker ticker) {
        return connect(host, port, settings, TlsContexts.load(settings.tls()), peerId, group, protocolVersion, ticker);
    }

    /**
     * As {@link #connect(String, int, TransportSettings, String, EventLoopGroup, Ticker)} with TLS contexts
     * already loaded from {@code settings.tls()} ({@code tls} null = plaintext), as a pool keeps them.
     */
    static TransportClient connect(String host, int port, TransportSettings settings, TlsContexts tls, String peerId,
            EventLoopGroup group, Ticker ticker) {
        return connect(host, port, settings, tls, peerId, group, TiffinVersion.PROTOCOL_VERSION, ticker);
    }

    private static TransportClient connect(String host, int port, TransportSettings settings, TlsContexts tls,
            String peerId, EventLoopGroup group, int protocolVersion, Ticker ticker) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(ticker, "ticker");
        TransportClient client = new TransportClient(host, port, settings);
        long timeoutNanos = settings.handshakeTimeout().toNanos();
        long deadline = ticker.nanos() + timeoutNanos;
        Bootstrap bootstrap = new Bootstrap()
                .group(group)
                .channel(EventLoops.socketChannelClass(group))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        Math.clamp(settings.handshakeTimeout().toMillis(), 1, Integer.MAX_VALUE))
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast("tls", tls.newClientHandler(ch.alloc(), host, port,
                                    settings.handshakeTimeout()));
                        }
                        ch.pipeline()
                                .addLast("frame-codec", new FrameCodec(settings.maxFrameSize()))
                                .addLast("client", client.new Inbound());
                    }
                });
        ChannelFuture connected;
        try {
            connected = bootstrap.connect(host, port);
        } catch (RuntimeException e) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot connect to " + client.endpoint + " (" + e
                    + "); check the address and that the server is running", e);
        }
        if (!connected.awaitUninterruptibly(timeoutNanos, TimeUnit.NANOSECONDS)) {
            connected.cancel(false);
            connected.channel().close();
            throw new TiffinException(ErrorCode.RPC_FAIL, "connecting to " + client.endpoint + " timed out after "
                    + settings.handshakeTimeout() + "; check the address and that the server is running");
        }
        if (!connected.isSuccess()) {
            throw new TiffinException(ErrorCode.RPC_FAIL, "cannot connect to " + client.endpoint + " ("
                    + connected.cause() + "); check the address and that the server is running",
                    connected.cause());
        }
        client.channel = connected.channel();
        try {
            client.handshake(peerId, protocolVersion, deadline, ticker);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }

    private void handshake(String peerId, int protocolVersion, long deadline, Ticker ticker) {
        Hello hello = Hello.newBuilder()
                .setProtocolVersion(protocolVersion)
                .setToken(settings.credentials().current().presentedToken())
                .setPeerId(peerId == null ? "" : peerId)
                .setPeerKey(PeerKeys.ofThisProcess())
                .build();
        long remaining = Math.max(1, deadline - ticker.nanos());
        CompletableFuture<Frame> answer = send(Opcode.HELLO, hello, null, remaining);
        Frame reply;
        try {
            reply = answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.RPC_FAIL, "interrupted during the handshake with " + endpoint, e);
        } catch (ExecutionException e) {
            TiffinException cause = unwrap(e.getCause());
            ErrorCode code = cause.code() == ErrorCode.RPC_TIMEOUT ? ErrorCode.RPC_FAIL : cause.code();
            throw new TiffinException(code, "handshake with " + endpoint + " failed: " + cause.getMessage(), cause);
        }
        HelloReply helloReply;
        try {
            helloReply = reply.parseControl(HelloReply.parser());
        } finally {
            reply.release();
        }
        if (helloReply.getProtocolVersion() != TiffinVersion.PROTOCOL_VERSION) {
            throw new TiffinException(ErrorCode.INVALID_VERSION, "server " + endpoint + " speaks protocol version "
                    + helloReply.getProtocolVersion() + ", this client " + TiffinVersion.PROTOCOL_VERSION
                    + "; run the same Tiffin version on clients and servers");
        }
        serverVersion = helloReply.getServerVersion();
        ready = true;
    }

    /**
     * Sends a request and returns its response. Takes ownership of {@code bulkOrNull}. The future
     * completes with the response frame (owned by the caller) when the status is OK, or exceptionally
     * with a {@link TiffinException} carrying the server's status and message; with {@code RPC_TIMEOUT}
     * after the settings' RPC timeout; with {@code RPC_FAIL} if the connection is or becomes closed.
     */
    public CompletableFuture<Frame> call(Opcode opcode, MessageLite control, ByteBuf bulkOrNull) {
        Objects.requireNonNull(opcode, "opcode");
        if (opcode == Opcode.HELLO) {
            ReferenceCountUtil.release(bulkOrNull);
            throw new IllegalArgumentException("HELLO is sent by connect(); call another opcode");
        }
        if (!ready || closed.get()) {
            ReferenceCountUtil.release(bulkOrNull);
            return CompletableFuture.failedFuture(closedException(opcode));
        }
        return send(opcode, control, bulkOrNull, settings.rpcTimeout().toNanos());
    }

    /**
     * Sends a control-only request, waits for the response and parses its control part with {@code
     * parser}.
     *
     * @throws TiffinException the server's failure status, {@code RPC_TIMEOUT} or {@code RPC_FAIL}
     */
    public <T extends MessageLite> T callSync(Opcode opcode, MessageLite control, Parser<T> parser) {
        Channel ch = channel;
        if (ch != null && ch.eventLoop().inEventLoop()) {
            throw new IllegalStateException("callSync would block the Netty event loop of " + endpoint
                    + "; use call() and chain on the future instead");
        }
        CompletableFuture<Frame> future = call(opcode, control, null);
        Frame frame;
        try {
            frame = future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            future.cancel(false);
            throw new TiffinException(ErrorCode.RPC_FAIL, "interrupted while waiting for the " + opcode
                    + " answer from " + endpoint, e);
        } catch (ExecutionException e) {
            TiffinException cause = unwrap(e.getCause());
            throw new TiffinException(cause.code(), cause.getMessage(), cause);
        }
        try {
            return frame.parseControl(parser);
        } finally {
            frame.release();
        }
    }

    /** Whether the handshake completed and the connection is open. */
    public boolean isActive() {
        Channel ch = channel;
        return ready && !closed.get() && ch != null && ch.isActive();
    }

    /** {@code host:port} this client connects to. */
    public String endpoint() {
        return endpoint;
    }

    /** The Tiffin version the server reported in the handshake. */
    public String serverVersion() {
        return serverVersion;
    }

    /** Number of calls waiting for a response. */
    public int pendingCalls() {
        return pending.size();
    }

    /** Closes the connection; pending and later calls fail with {@code RPC_FAIL}. Idempotent, non-blocking. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Channel ch = channel;
        if (ch != null) {
            ch.close();
        }
        failAll("the client was closed");
    }

    private CompletableFuture<Frame> send(Opcode opcode, MessageLite control, ByteBuf bulk, long timeoutNanos) {
        Channel ch = channel;
        long requestId = nextRequestId.getAndIncrement();
        Frame frame = Frame.request(opcode, requestId, control, bulk);
        Pending call = new Pending(opcode);
        pending.put(requestId, call);
        if (closed.get()) {
            // close() may have drained the map before this call was registered.
            fail(requestId, closedException(opcode));
        }
        // Arming the timer and writing happen in one event-loop task: one hand-off per call, not two.
        Runnable start = () -> {
            if (call.isDone()) {
                frame.release();
                return;
            }
            call.timer = ch.eventLoop().schedule(() -> timeOut(requestId), timeoutNanos, TimeUnit.NANOSECONDS);
            ch.writeAndFlush(frame).addListener(f -> {
                if (!f.isSuccess()) {
                    String tls = tlsFailure;
                    fail(requestId, new TiffinException(ErrorCode.RPC_FAIL, "cannot send " + opcode + " to " + endpoint
                            + (tls != null ? ": " + tls : " (" + f.cause() + "); check that the server is running and"
                            + " retry"), f.cause()));
                }
            });
        };
        if (ch.eventLoop().inEventLoop()) {
            start.run();
            return call;
        }
        try {
            ch.eventLoop().execute(start);
        } catch (RejectedExecutionException e) {
            pending.remove(requestId);
            frame.release();
            call.completeExceptionally(new TiffinException(ErrorCode.RPC_FAIL, "cannot send " + opcode + " to "
                    + endpoint + ": its event loop is shut down; create a new client", e));
        }
        return call;
    }

    private void timeOut(long requestId) {
        Pending call = pending.remove(requestId);
        if (call != null) {
            call.completeExceptionally(new TiffinException(ErrorCode.RPC_TIMEOUT, "no answer to " + call.opcode
                    + " from " + endpoint + " within " + settings.rpcTimeout()
                    + "; check that the server is running and not overloaded, or raise the RPC timeout"));
        }
    }

    private void fail(long requestId, TiffinException error) {
        Pending call = pending.remove(requestId);
        if (call != null) {
            call.cancelTimer();
            call.completeExceptionally(error);
        }
    }

    private void failAll(String why) {
        String tls = tlsFailure;
        for (Long requestId : pending.keySet()) {
            Pending call = pending.get(requestId);
            if (call != null) {
                fail(requestId, new TiffinException(ErrorCode.RPC_FAIL, tls != null ? "connection to " + endpoint + ": "
                        + tls : "connection to " + endpoint + " closed before " + call.opcode + " was answered ("
                        + why + "); retry on a new connection, the request may or may not have run"));
            }
        }
    }

    private TiffinException closedException(Opcode opcode) {
        String tls = tlsFailure;
        return new TiffinException(ErrorCode.RPC_FAIL, tls != null ? "cannot send " + opcode + " to " + endpoint + ": "
                + tls : "cannot send " + opcode + ": the connection to " + endpoint + " is closed; get a new client"
                + " (TransportClientPool reconnects)");
    }

    private static TiffinException unwrap(Throwable t) {
        if (t instanceof TiffinException te) {
            return te;
        }
        return new TiffinException(ErrorCode.RPC_FAIL, "call failed: " + t, t);
    }

    /** Inbound side of the connection; runs on its event loop and owns the frames it reads. */
    private final class Inbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof Frame frame)) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (frame.kind() != Frame.Kind.RESPONSE) {
                frame.release();
                LOG.warn("Closing connection to {}: the server sent a {} request; servers may only answer",
                        ctx.channel().remoteAddress(), frame.opcode());
                ctx.close();
                return;
            }
            Pending call = pending.remove(frame.requestId());
            if (call == null) {
                LOG.debug("Dropping the {} response {} from {}: the call already timed out or failed",
                        frame.opcode(), frame.requestId(), endpoint);
                frame.release();
                return;
            }
            call.cancelTimer();
            if (frame.status().isOk()) {
                if (!call.complete(frame)) {
                    frame.release(); // the caller cancelled the future
                }
                return;
            }
            String message;
            try {
                message = frame.parseControl(ErrorReply.parser()).getMessage();
            } catch (TiffinException e) {
                message = "";
            } finally {
                frame.release();
            }
            if (message.isEmpty()) {
                message = frame.status().name() + ": " + frame.status().hint();
            }
            call.completeExceptionally(new TiffinException(frame.status(), message));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed.set(true);
            failAll("the connection was lost");
            ctx.fireChannelInactive();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof io.netty.handler.ssl.SslHandshakeCompletionEvent done && !done.isSuccess()) {
                failTls(ctx, "TLS handshake failed: " + done.cause().getMessage() + "; check that the server uses"
                        + " TLS (transport.tls.enabled), that transport.tls.ca names the authority of its certificate"
                        + " and that the certificate names the host dialled, and whether the server requires a"
                        + " client certificate (transport.tls.cert, transport.tls.key)", done.cause());
            }
            ctx.fireUserEventTriggered(evt);
        }

        /**
         * Fails every pending call with a TLS failure's explanation and closes; later calls (the HELLO, when
         * the TLS handshake failed before it was sent) fail with it too.
         */
        private void failTls(ChannelHandlerContext ctx, String why, Throwable cause) {
            tlsFailure = why;
            for (Long requestId : pending.keySet()) {
                fail(requestId, new TiffinException(ErrorCode.RPC_FAIL, "connection to " + endpoint + ": " + why,
                        cause));
            }
            ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause.getCause() instanceof javax.net.ssl.SSLException tls) {
                io.netty.handler.ssl.SslHandler ssl = ctx.pipeline().get(io.netty.handler.ssl.SslHandler.class);
                if (ssl != null && !ssl.handshakeFuture().isSuccess()) {
                    // this client's own side of the handshake failed (e.g. it does not trust the server's
                    // certificate); Netty may report it here before the handshake-completion event
                    failTls(ctx, "TLS handshake failed: " + tls.getMessage() + "; check that the server uses TLS"
                            + " (transport.tls.enabled), that transport.tls.ca names the authority of its certificate"
                            + " and that the certificate names the host dialled, and whether the server requires a"
                            + " client certificate (transport.tls.cert, transport.tls.key)", tls);
                    return;
                }
                // after the client's side of a TLS 1.3 handshake: the server's verdict on this client
                failTls(ctx, "the server refused this client's TLS session (" + tls.getMessage() + "): does it"
                        + " require a client certificate (transport.tls.cert, transport.tls.key) issued by its"
                        + " transport.tls.ca?", tls);
                return;
            }
            if (cause instanceof IOException) {
                LOG.debug("Connection to {} failed: {}", endpoint, cause.toString());
            } else {
                LOG.warn("Closing connection to {} after an error", endpoint, cause);
            }
            ctx.close();
        }
    }
}
