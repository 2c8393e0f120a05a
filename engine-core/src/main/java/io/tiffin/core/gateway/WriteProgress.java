package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;

/**
 * Counts each buffer written to a connection's socket as progress of the gateway's memory
 * ({@link MemoryBudget#writeProgressed}): a reply that holds memory while a slow client takes it is no reason for
 * a command waiting for memory to give up, and the reply's own promise says nothing until its last byte when it
 * leaves in many pieces — inside TLS, thousands of records the {@code SslHandler} writes with promises of their
 * own; an MGET's array, a buffer per value. The partial writes of one large buffer are counted through its
 * progressive promise ({@link CommandRunner}). Sits first in the pipeline, next to the socket.
 *
 * <p>Thread-safe (sharable): it only adds a listener to the promise of each buffer of {@value #MIN_BYTES} bytes or
 * more (none to a void promise).
 */
@ChannelHandler.Sharable
final class WriteProgress extends ChannelOutboundHandlerAdapter {
    private final GenericFutureListener<Future<? super Void>> written;

    WriteProgress(MemoryBudget budget) {
        this.written = f -> {
            if (f.isSuccess()) {
                budget.writeProgressed();
            }
        };
    }

    /** Smaller buffers leave at once (a small reply, a command's answer): no listener for them. */
    static final int MIN_BYTES = 8192;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!promise.isVoid() && msg instanceof ByteBuf buf && buf.readableBytes() >= MIN_BYTES) {
            promise.addListener(written);
        }
        ctx.write(msg, promise);
    }
}
