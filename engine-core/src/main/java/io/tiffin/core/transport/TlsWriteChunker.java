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
 * <p>The server's TLS handler encrypts {@value #WRAP_SIZE} bytes per call into one buffer of records, written
 * at once ({@link TlsContexts#newServerHandler}), rather than one 16 KiB record per call, buffer and write.
 * For that, buffers larger than a record are flushed alone, with what came before them (the frame's header)
 * flushed first: the handler joins a pending buffer to the next one, up to its wrap size, by copying both
 * into a new buffer, which for a piece would be a copy of the piece.
 *
 * <p>Thread-safe: stateless, hence {@link Sharable}. Passes on the ownership of the buffers it gets (each
 * piece is a retained slice; the last is the buffer itself).
 */
@Sharable
final class TlsWriteChunker extends ChannelOutboundHandlerAdapter {
    static final TlsWriteChunker INSTANCE = new TlsWriteChunker();

    /** Bytes encrypted and sent before the next piece is encrypted. */
    static final int CHUNK = 256 * 1024;

    /**
     * Plaintext bytes the server's TLS handler encrypts per call: eight records, whose buffer (128 KiB and
     * the records' overhead) stays within the pooled sizes of Netty's allocator even in a JVM of 512 MiB or
     * less (256 KiB there); a larger one would be allocated and zeroed afresh for every call.
     */
    static final int WRAP_SIZE = 128 * 1024;

    /** Buffers up to this size (a TLS record's plaintext) are passed on as they come, to be flushed with others. */
    static final int RECORD = 16 * 1024;

    private TlsWriteChunker() {
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf buf) || buf.readableBytes() <= RECORD) {
            ctx.write(msg, promise);
            return;
        }
        ctx.flush(); // the header before it alone (see the class comment)
        PromiseCombiner pieces = new PromiseCombiner(ctx.executor());
        while (buf.readableBytes() > CHUNK) {
            pieces.add(ctx.write(buf.readRetainedSlice(CHUNK)));
            ctx.flush();
        }
        pieces.add(ctx.write(buf));
        ctx.flush(); // alone too: what follows must not be joined to it
        pieces.finish(promise);
    }
}
