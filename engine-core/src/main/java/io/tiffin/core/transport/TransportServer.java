package io.tiffin.core.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.HelloReply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Accepts Tiffin connections and dispatches their requests to registered {@link RequestHandler}s.
 *
 * <p>Every connection starts with a handshake: the client's first frame must be a HELLO request
 * carrying the protocol version and, when the server has an auth token configured, that token. The
 * server answers {@code HelloReply} or fails with {@code INVALID_VERSION} / {@code ILLEGAL_CLIENT} and
 * closes. Any other first frame, a response frame from a client, a second HELLO or no HELLO within the
 * handshake timeout closes the connection. After the handshake, requests are dispatched by opcode;
 * many may be in flight per connection and responses go out in whatever order handlers answer. An
 * opcode without a handler is answered with {@code NOT_SUPPORTED}.
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
    private final byte[] tokenDigest;
    private final ConcurrentHashMap<Opcode, Registration> handlers = new ConcurrentHashMap<>();
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

    private EventLoopGroup acceptGroup;
    private EventLoopGroup ioGroup;
    private volatile Channel serverChannel;
    private boolean started;
    private boolean closed;

    private record Registration(RequestHandler handler, Executor executor) {
    }

    /** A server named {@code name} (used in logs and thread names); call {@link #start} to listen. */
    public TransportServer(String name, TransportSettings settings) {
        this.name = Objects.requireNonNull(name, "name");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.tokenDigest = settings.hasAuthToken() ? sha256(settings.authToken()) : null;
    }

    /**
     * Serves {@code opcode} with {@code handler}, run on {@code executor}; a null executor runs it inline
     * on the connection's event loop, which is only allowed for handlers that never block.
     *
     * @throws IllegalArgumentException for {@link Opcode#HELLO}, which the server handles itself
     * @throws IllegalStateException if the opcode already has a handler
     */
    public TransportServer register(Opcode opcode, RequestHandler handler, Executor executor) {
        Objects.requireNonNull(opcode, "opcode");
        Objects.requireNonNull(handler, "handler");
        if (opcode == Opcode.HELLO) {
            throw new IllegalArgumentException("HELLO is handled by the transport itself; register another opcode");
        }
        if (handlers.putIfAbsent(opcode, new Registration(handler, executor)) != null) {
            throw new IllegalStateException("server " + name + " already has a handler for " + opcode
                    + "; register each opcode once");
        }
        return this;
    }

    /**
     * Binds to {@code host:port} (port 0 picks a free port, see {@link #localAddress()}) and starts
     * accepting connections. Blocks until bound.
     *
     * @throws TiffinException {@code INTERNAL_ERROR} if the address cannot be bound
     */
    public synchronized TransportServer start(String host, int port) {
        if (closed) {
            throw new IllegalStateException("server " + name + " is closed; create a new one");
        }
        if (started) {
            throw new IllegalStateException("server " + name + " is already started on " + localAddress());
        }
        acceptGroup = EventLoops.newGroup(name + "-accept", 1, settings.useNative());
        ioGroup = EventLoops.newGroup(name + "-io", settings.ioThreads(), settings.useNative());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptGroup, ioGroup)
                .channel(EventLoops.serverChannelClass(ioGroup))
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        channels.add(ch);
                        // Answers written while the loop handles a read (inline handlers, e.g. a batch of
                        // DATA_READs) are flushed together when the read completes: one write for all.
                        ch.pipeline()
                                .addLast("flush-consolidation", new FlushConsolidationHandler(
                                        FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, false))
                                .addLast("frame-codec", new FrameCodec(settings.maxFrameSize()))
                                .addLast("server", new Connection());
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
        LOG.info("Server {} listening on {} ({}, {})", name, serverChannel.localAddress(),
                EventLoops.isEpoll(ioGroup) ? "epoll" : "nio", settings);
        return this;
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

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks SHA-256, which every Java platform must provide", e);
        }
    }

    /** Per-connection state; used only on the connection's event loop. Owns the frames it reads. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private boolean authenticated;
        private String peerId = "?";
        private ScheduledFuture<?> handshakeTimer;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            handshakeTimer = ctx.executor().schedule(() -> {
                if (!authenticated && ctx.channel().isActive()) {
                    LOG.warn("Closing connection from {} to server {}: no HELLO within {}; clients must"
                            + " complete the handshake first", ctx.channel().remoteAddress(), name,
                            settings.handshakeTimeout());
                    ctx.close();
                }
            }, settings.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            cancelTimer();
            ctx.fireChannelInactive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof Frame frame)) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (frame.kind() != Frame.Kind.REQUEST) {
                protocolViolation(ctx, frame, "sent a response frame (" + frame.opcode()
                        + "); clients may only send requests");
            } else if (!authenticated) {
                if (frame.opcode() != Opcode.HELLO) {
                    protocolViolation(ctx, frame, "sent " + frame.opcode() + " before HELLO; the first frame"
                            + " must be HELLO (is the peer a Tiffin client of the same version?)");
                } else {
                    try {
                        handshake(ctx, frame);
                    } finally {
                        frame.release();
                    }
                }
            } else if (frame.opcode() == Opcode.HELLO) {
                protocolViolation(ctx, frame, "sent a second HELLO; the handshake happens once per connection");
            } else {
                dispatch(ctx, frame);
            }
        }

        private void protocolViolation(ChannelHandlerContext ctx, Frame frame, String problem) {
            frame.release();
            LOG.warn("Closing connection from {} (peer {}) to server {}: it {}", ctx.channel().remoteAddress(),
                    peerId, name, problem);
            ctx.close();
        }

        private void handshake(ChannelHandlerContext ctx, Frame frame) {
            Hello hello;
            try {
                hello = frame.parseControl(Hello.parser());
            } catch (TiffinException e) {
                refuse(ctx, frame, e.code(), "cannot decode HELLO: " + e.getMessage());
                return;
            }
            peerId = hello.getPeerId().isEmpty() ? "?" : hello.getPeerId();
            if (hello.getProtocolVersion() != TiffinVersion.PROTOCOL_VERSION) {
                refuse(ctx, frame, ErrorCode.INVALID_VERSION, "server " + name + " speaks protocol version "
                        + TiffinVersion.PROTOCOL_VERSION + " but the client speaks " + hello.getProtocolVersion()
                        + "; run the same Tiffin version on clients and servers");
                return;
            }
            if (tokenDigest != null && !MessageDigest.isEqual(tokenDigest, sha256(hello.getToken()))) {
                refuse(ctx, frame, ErrorCode.ILLEGAL_CLIENT, "server " + name + " rejected the auth token of"
                        + " peer " + peerId + "; configure the same transport auth token on clients and servers");
                return;
            }
            authenticated = true;
            cancelTimer();
            HelloReply reply = HelloReply.newBuilder()
                    .setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                    .setServerVersion(TiffinVersion.VERSION)
                    .build();
            ctx.writeAndFlush(Frame.response(Opcode.HELLO, frame.requestId(), ErrorCode.OK, reply, null));
            LOG.debug("Server {} accepted peer {} from {}", name, peerId, ctx.channel().remoteAddress());
        }

        private void refuse(ChannelHandlerContext ctx, Frame hello, ErrorCode code, String message) {
            LOG.warn("Closing connection from {} to server {}: {}", ctx.channel().remoteAddress(), name, message);
            cancelTimer();
            ChannelResponder responder = new ChannelResponder(ctx.channel(), Opcode.HELLO, hello.requestId());
            responder.tryFail(code, message);
            // The response was queued on this event loop before the close, so it is flushed first.
            ctx.channel().close();
        }

        private void dispatch(ChannelHandlerContext ctx, Frame frame) {
            ChannelResponder responder = new ChannelResponder(ctx.channel(), frame.opcode(), frame.requestId());
            Registration registration = handlers.get(frame.opcode());
            if (registration == null) {
                frame.release();
                responder.tryFail(ErrorCode.NOT_SUPPORTED, "server " + name + " does not serve " + frame.opcode()
                        + "; send it to the right kind of server (master or node) running the same Tiffin version");
                return;
            }
            if (registration.executor() == null) {
                invoke(registration.handler(), frame, responder);
                return;
            }
            try {
                registration.executor().execute(() -> invoke(registration.handler(), frame, responder));
            } catch (RejectedExecutionException e) {
                frame.release();
                responder.tryFail(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "server " + name + " cannot take "
                        + frame.opcode() + " requests now (" + e.getMessage() + "); retry later");
            }
        }

        private void invoke(RequestHandler handler, Frame frame, ChannelResponder responder) {
            Opcode opcode = frame.opcode();
            try {
                handler.handle(frame, responder);
            } catch (TiffinException e) {
                LOG.debug("Server {}: {} handler failed with {}: {}", name, opcode, e.code(), e.getMessage());
                ErrorCode code = e.code().isOk() ? ErrorCode.INTERNAL_ERROR : e.code();
                responder.tryFail(code, e.getMessage());
            } catch (Throwable t) {
                LOG.error("Server {}: the {} handler failed on a request from {}", name, opcode,
                        responder.remoteAddress(), t);
                responder.tryFail(ErrorCode.INTERNAL_ERROR, "the " + opcode + " handler of server " + name
                        + " failed: " + t + "; check the server log");
                if (t instanceof Error error) {
                    throw error;
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof IOException) {
                LOG.debug("Connection from {} to server {} failed: {}", ctx.channel().remoteAddress(), name,
                        cause.toString());
            } else {
                LOG.warn("Closing connection from {} (peer {}) to server {} after an error", ctx.channel()
                        .remoteAddress(), peerId, name, cause);
            }
            ctx.close();
        }

        private void cancelTimer() {
            if (handshakeTimer != null) {
                handshakeTimer.cancel(false);
                handshakeTimer = null;
            }
        }
    }
}
