package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.PromiseCombiner;

/**
 * Sits just after a TLS handler (towards the application) and cuts a large outbound buffer into
 * {@value #CHUNK}-byte pieces, flushing after each. Netty's TLS handler encrypts everything written
 * before a flush and only then hands it to the socket, so a 1 MiB answer was encrypted whole before its
 * first byte left, and the peer decrypted it whole after its last byte came: encryption, transfer and
 * decryption one after another. In pieces they overlap (the server encrypts a piece while the peer
 * decrypts the one before).
 *
 * <p>Thread-safe: stateless, hence {@link Sharable}. Passes on the ownership of the buffers it gets (each
 * piece is a retained slice; the last is the buffer itself).
 */
@Sharable
final class TlsWriteChunker extends ChannelOutboundHandlerAdapter {
    static final TlsWriteChunker INSTANCE = new TlsWriteChunker();

    /** Bytes encrypted and sent before the next piece is encrypted. */
    static final int CHUNK = 256 * 1024;

    private TlsWriteChunker() {
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf buf) || buf.readableBytes() <= CHUNK) {
            ctx.write(msg, promise);
            return;
        }
        PromiseCombiner pieces = new PromiseCombiner(ctx.executor());
        while (buf.readableBytes() > CHUNK) {
            pieces.add(ctx.write(buf.readRetainedSlice(CHUNK)));
            ctx.flush();
        }
        pieces.add(ctx.write(buf));
        pieces.finish(promise);
    }
}
