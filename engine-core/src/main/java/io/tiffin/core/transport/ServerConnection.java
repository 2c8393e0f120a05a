package io.tiffin.core.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.HelloReply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One connection of a {@link TransportServer}: the handshake (HELLO, whose token proves the peer's roles,
 * {@link RoleGrants}, and the guards' {@link ConnectionGuards#REFUSAL}), then the dispatch of requests to the
 * registered handlers, each request marked with its {@link Peer} and refused unless the peer holds a role
 * its opcode serves ({@link OpcodeRoles}). While the peer's answers wait unsent above the write-buffer limit it stops dispatching: the
 * guards have stopped reading, and requests already read wait here (a handful of small frames) until the
 * peer reads again.
 *
 * <p>Not thread-safe: one instance per channel, used by its event loop only. Owns the frames it reads
 * (released once: after the handler returns, or when dropped).
 */
final class ServerConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LogManager.getLogger(ServerConnection.class);

    /**
     * A handler, where it runs (null = inline on the event loop) and what names its requests' bulk
     * destination (null = none: bulks are received into Netty buffers).
     */
    record Registration(RequestHandler handler, Executor executor, BulkPlacer placer) {
    }

    private final String serverName;
    private final TransportSettings settings;
    private final RoleGrants grants;
    private final Map<Opcode, Registration> handlers;
    private final FrameCodec codec;
    private final PeerKeys peerIds;
    /** The peer key digest this connection holds its peer id with ({@link PeerKeys}), or null. */
    private String heldWith;
    private boolean authenticated;
    private String peerId = "?";
    /** Set by the handshake. */
    private Peer peer;
    private ScheduledFuture<?> handshakeTimer;
    /** Requests read while the peer's answers were over the limit, in order; dispatched once it reads. */
    private final ArrayDeque<Frame> held = new ArrayDeque<>();

    ServerConnection(String serverName, TransportSettings settings, RoleGrants grants,
                     Map<Opcode, Registration> handlers, FrameCodec codec, PeerKeys peerIds) {
        this.peerIds = peerIds;
        this.serverName = serverName;
        this.settings = settings;
        this.grants = grants;
        this.handlers = handlers;
        this.codec = codec;
    }

    static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM lacks SHA-256, which every Java platform must provide", e);
        }
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        handshakeTimer = ctx.executor().schedule(() -> {
            if (!authenticated && ctx.channel().isActive()) {
                LOG.warn("Closing connection from {} to server {}: no HELLO within {}; clients must"
                        + " complete the handshake first", ctx.channel().remoteAddress(), serverName,
                        settings.handshakeTimeout());
                ctx.close();
            }
        }, settings.handshakeTimeout().toNanos(), TimeUnit.NANOSECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelTimer();
        if (heldWith != null) {
            peerIds.release(peer.id(), heldWith);
            heldWith = null;
        }
        Frame f;
        while ((f = held.poll()) != null) {
            f.release();
        }
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
        } else if (!held.isEmpty() || !ctx.channel().isWritable()) {
            held.add(frame);
        } else {
            dispatch(ctx, frame);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        Frame f;
        while (ctx.channel().isWritable() && (f = held.poll()) != null) {
            dispatch(ctx, f);
        }
        ctx.fireChannelWritabilityChanged();
    }

    private void protocolViolation(ChannelHandlerContext ctx, Frame frame, String problem) {
        frame.release();
        LOG.warn("Closing connection from {} (peer {}) to server {}: it {}", ctx.channel().remoteAddress(),
                peerId, serverName, problem);
        ctx.close();
    }

    private void handshake(ChannelHandlerContext ctx, Frame frame) {
        ConnectionGuards.Refusal refusal = ctx.channel().attr(ConnectionGuards.REFUSAL).get();
        if (refusal != null) {
            // over a connection cap, or plaintext to a TLS server: say so, never authenticate
            refuse(ctx, frame, refusal.code(), refusal.message());
            return;
        }
        Hello hello;
        try {
            hello = frame.parseControl(Hello.parser());
        } catch (TiffinException e) {
            refuse(ctx, frame, e.code(), "cannot decode HELLO: " + e.getMessage());
            return;
        }
        peerId = hello.getPeerId().isEmpty() ? "?" : hello.getPeerId();
        if (hello.getProtocolVersion() != TiffinVersion.PROTOCOL_VERSION) {
            refuse(ctx, frame, ErrorCode.INVALID_VERSION, "server " + serverName + " speaks protocol version "
                    + TiffinVersion.PROTOCOL_VERSION + " but the client speaks " + hello.getProtocolVersion()
                    + "; run the same Tiffin version on clients and servers");
            return;
        }
        String commonName = ConnectionGuards.clientCertificateName(ctx.channel());
        java.util.Set<Role> roles = grants.grant(hello.getToken(), commonName);
        if (roles.isEmpty()) {
            refuse(ctx, frame, ErrorCode.ILLEGAL_CLIENT, "server " + serverName + " rejected the auth token of"
                    + " peer " + peerId + ": it is none of this server's tokens (transport.client-token,"
                    + " transport.node-token, transport.admin-token, or the shared transport.auth-token)"
                    + (commonName == null ? "" : ", and its client certificate's common name " + commonName + " is in"
                    + " none of transport.tls.client-names, node-names, admin-names") + "; give each process its"
                    + " role's token (or certificate), the same on clients and servers");
            return;
        }
        String digest = PeerKeys.digest(hello.getPeerKey());
        PeerKeys.Claim claim = ctx.channel().isActive() ? peerIds.claim(hello.getPeerId(), digest) : PeerKeys.Claim.UNKEYED;
        if (claim == PeerKeys.Claim.HOLDS) {
            heldWith = digest;
        }
        peer = Peer.connected(roles, hello.getPeerId(), String.valueOf(ctx.channel().remoteAddress()),
                grants.nodeOfCertificate(commonName), digest, claim == PeerKeys.Claim.TAKEN);
        authenticated = true;
        cancelTimer();
        codec.handshakeDone();
        HelloReply reply = HelloReply.newBuilder()
                .setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .setServerVersion(TiffinVersion.VERSION)
                .build();
        ctx.writeAndFlush(Frame.response(Opcode.HELLO, frame.requestId(), ErrorCode.OK, reply, null));
        LOG.debug("Server {} accepted {}", serverName, peer);
    }

    private void refuse(ChannelHandlerContext ctx, Frame hello, ErrorCode code, String message) {
        LOG.warn("Closing connection from {} to server {}: {}", ctx.channel().remoteAddress(), serverName, message);
        cancelTimer();
        ChannelResponder responder = new ChannelResponder(ctx.channel(), Opcode.HELLO, hello.requestId());
        responder.tryFail(code, message);
        // The response was queued on this event loop before the close, so it is flushed first.
        ctx.channel().close();
    }

    /**
     * Where the bulk of a request whose header and control part came goes ({@link FrameCodec.Destinations}): the
     * opcode's placer decides, once the peer is authenticated and may send the opcode, and when no request read
     * before waits to be dispatched (placing the bulk must not overtake it). Null otherwise.
     */
    java.lang.foreign.MemorySegment bulkDestination(Opcode opcode, io.netty.buffer.ByteBuf control, int bulkLength) {
        if (!authenticated || !held.isEmpty()) {
            return null;
        }
        Registration registration = handlers.get(opcode);
        if (registration == null || registration.placer() == null || !OpcodeRoles.allows(opcode, peer)) {
            return null;
        }
        return registration.placer().destination(control, bulkLength);
    }

    private void dispatch(ChannelHandlerContext ctx, Frame frame) {
        ChannelResponder responder = new ChannelResponder(ctx.channel(), frame.opcode(), frame.requestId());
        try {
            OpcodeRoles.check(frame.opcode(), peer, serverName);
        } catch (TiffinException e) {
            frame.release();
            LOG.debug("Server {}: {}", serverName, e.getMessage());
            responder.tryFail(e.code(), e.getMessage());
            return;
        }
        frame.peer(peer);
        Registration registration = handlers.get(frame.opcode());
        if (registration == null) {
            frame.release();
            responder.tryFail(ErrorCode.NOT_SUPPORTED, "server " + serverName + " does not serve " + frame.opcode()
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
            responder.tryFail(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "server " + serverName + " cannot take "
                    + frame.opcode() + " requests now (" + e.getMessage() + "); retry later");
        }
    }

    private void invoke(RequestHandler handler, Frame frame, ChannelResponder responder) {
        Opcode opcode = frame.opcode();
        try {
            handler.handle(frame, responder);
        } catch (TiffinException e) {
            LOG.debug("Server {}: {} handler failed with {}: {}", serverName, opcode, e.code(), e.getMessage());
            ErrorCode code = e.code().isOk() ? ErrorCode.INTERNAL_ERROR : e.code();
            responder.tryFail(code, e.getMessage());
        } catch (Throwable t) {
            LOG.error("Server {}: the {} handler failed on a request from {}", serverName, opcode,
                    responder.remoteAddress(), t);
            responder.tryFail(ErrorCode.INTERNAL_ERROR, "the " + opcode + " handler of server " + serverName
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
            LOG.debug("Connection from {} to server {} failed: {}", ctx.channel().remoteAddress(), serverName,
                    cause.toString());
        } else {
            LOG.warn("Closing connection from {} (peer {}) to server {} after an error", ctx.channel()
                    .remoteAddress(), peerId, serverName, cause);
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
