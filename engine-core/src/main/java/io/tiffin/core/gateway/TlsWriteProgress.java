package io.tiffin.core.gateway;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;

/**
 * Counts the encrypted records of a TLS connection reaching its socket as progress of the gateway's memory
 * ({@link MemoryBudget#writeProgressed}). Inside TLS a large reply leaves as thousands of records written with
 * promises of their own, and the reply's promise — whose partial writes count as progress in plaintext
 * ({@link CommandRunner}) — completes only with its last record: without this, a client reading a 32 MiB reply
 * slowly over TLS would hold memory with no sign of progress, and GETs waiting for it would fail. Sits between the
 * socket and the {@code SslHandler}.
 *
 * <p>Thread-safe (sharable): it only adds a listener to each write's promise.
 */
@ChannelHandler.Sharable
final class TlsWriteProgress extends ChannelOutboundHandlerAdapter {
    private final GenericFutureListener<Future<? super Void>> written;

    TlsWriteProgress(MemoryBudget budget) {
        this.written = f -> {
            if (f.isSuccess()) {
                budget.writeProgressed();
            }
        };
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!promise.isVoid()) {
            promise.addListener(written);
        }
        ctx.write(msg, promise);
    }
}
