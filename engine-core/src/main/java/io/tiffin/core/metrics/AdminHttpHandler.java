package io.tiffin.core.metrics;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.transport.ConnectionGuards;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One admin HTTP connection: answers each whole request ({@link AdminRoutes}, run on the workers) in the order the
 * requests came, and closes the connection when no whole request arrives within the request timeout of its start or
 * of the last answer (a peer that trickles a request, or sends nothing, or keeps an idle connection). A connection
 * the {@link ConnectionGuards} refused (over a cap, plaintext to HTTPS) gets its reason as a 503 or 400 and is
 * closed, as is one whose request is malformed or too large.
 *
 * <p>Not thread-safe: confined to its channel's event loop (the workers only make the answers).
 */
final class AdminHttpHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LogManager.getLogger(AdminHttpHandler.class);
    /** Requests of one connection waiting for their answers, beyond which it is closed (pipelining is rare). */
    private static final int MAX_PENDING = 8;

    private final AdminRoutes routes;
    private final Executor workers;
    private final long requestTimeoutNanos;
    private ScheduledFuture<?> timer;
    /** The last answer in the making: the next is written after it. */
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    private int pending;

    AdminHttpHandler(AdminRoutes routes, Executor workers, long requestTimeoutNanos) {
        this.routes = routes;
        this.workers = workers;
        this.requestTimeoutNanos = requestTimeoutNanos;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        arm(ctx);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        disarm();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest request)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        try {
            disarm();
            ConnectionGuards.Refusal refusal = ctx.channel().attr(ConnectionGuards.REFUSAL).get();
            if (refusal != null) {
                closeWith(ctx, refusal.code() == ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS
                        ? HttpResponseStatus.SERVICE_UNAVAILABLE : HttpResponseStatus.BAD_REQUEST, refusal.message());
                return;
            }
            if (request.decoderResult().isFailure()) {
                Throwable why = request.decoderResult().cause();
                closeWith(ctx, why instanceof TooLongHttpLineException ? HttpResponseStatus.REQUEST_URI_TOO_LONG
                        : why instanceof TooLongHttpHeaderException
                        ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE : HttpResponseStatus.BAD_REQUEST,
                        "malformed request: " + why.getMessage());
                return;
            }
            if (++pending > MAX_PENDING) {
                LOG.info("Closing admin HTTP connection from {}: more than {} requests waiting for answers",
                        ctx.channel().remoteAddress(), MAX_PENDING);
                ctx.close();
                return;
            }
            HttpMethod method = request.method();
            String uri = request.uri();
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            String certificateName = ConnectionGuards.clientCertificateName(ctx.channel());
            tail = tail.thenComposeAsync(done -> CompletableFuture.supplyAsync(
                            () -> routes.answer(method, uri, authorization, certificateName), workers), ctx.executor())
                    .thenAcceptAsync(answer -> send(ctx, answer, keepAlive), ctx.executor())
                    .exceptionally(e -> {
                        LOG.debug("Admin HTTP request of {} not answered: {}", ctx.channel().remoteAddress(), e.toString());
                        ctx.close();
                        return null;
                    });
        } finally {
            request.release();
        }
    }

    private void send(ChannelHandlerContext ctx, FullHttpResponse answer, boolean keepAlive) {
        pending--;
        HttpUtil.setKeepAlive(answer, keepAlive);
        if (!ctx.channel().isActive()) {
            answer.release();
            return;
        }
        if (!keepAlive) {
            ctx.writeAndFlush(answer).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.writeAndFlush(answer);
        if (pending == 0) {
            arm(ctx);
        }
    }

    private void closeWith(ChannelHandlerContext ctx, HttpResponseStatus status, String message) {
        FullHttpResponse answer = AdminRoutes.text(status, message + "\n");
        HttpUtil.setKeepAlive(answer, false);
        ctx.writeAndFlush(answer).addListener(ChannelFutureListener.CLOSE);
    }

    private void arm(ChannelHandlerContext ctx) {
        disarm();
        timer = ctx.executor().schedule(() -> {
            LOG.info("Closing admin HTTP connection from {}: no whole request within transport.handshake-timeout"
                    + " ({} ms)", ctx.channel().remoteAddress(), TimeUnit.NANOSECONDS.toMillis(requestTimeoutNanos));
            ctx.close();
        }, requestTimeoutNanos, TimeUnit.NANOSECONDS);
    }

    private void disarm() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException) {
            closeWith(ctx, HttpResponseStatus.BAD_REQUEST, "malformed request: " + cause.getMessage());
            return;
        }
        LOG.debug("Admin HTTP connection from {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
