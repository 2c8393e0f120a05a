package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link TlsWriteChunker} on a real (embedded) channel, with a handler in the TLS handler's place that
 * records what reaches it: the writes, in order, and where the flushes fall between them.
 */
class TlsWriteChunkerTest {

    /** Records writes as their sizes and flushes as "flush"; passes both on. */
    private static final class Recorder extends ChannelOutboundHandlerAdapter {
        final List<String> events = new ArrayList<>();

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            events.add(msg instanceof ByteBuf b ? Integer.toString(b.readableBytes()) : "message");
            ctx.write(msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            events.add("flush");
            ctx.flush();
        }
    }

    private final Recorder recorder = new Recorder();
    private final EmbeddedChannel channel = new EmbeddedChannel(recorder, TlsWriteChunker.INSTANCE);

    private static ByteBuf filled(int size) {
        byte[] bytes = new byte[size];
        new SplittableRandom(size).nextBytes(bytes);
        return Unpooled.directBuffer(size).writeBytes(bytes);
    }

    /** Everything the channel sent, in one array; the sent buffers are released. */
    private byte[] sent() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ByteBuf b;
        while ((b = channel.readOutbound()) != null) {
            bytes.writeBytes(ByteBufUtil.getBytes(b));
            b.release();
        }
        return bytes.toByteArray();
    }

    @Test
    void aLargeBufferGoesInFlushedPiecesAfterWhatCameBeforeIt() {
        int chunk = TlsWriteChunker.CHUNK;
        ByteBuf header = filled(40);
        ByteBuf bulk = filled(4 * chunk + 100);
        byte[] expected = new byte[40 + bulk.readableBytes()];
        header.getBytes(0, expected, 0, 40);
        bulk.getBytes(0, expected, 40, bulk.readableBytes());
        channel.write(header);
        ChannelFuture done = channel.write(bulk);
        assertThat(done.isDone()).isTrue(); // all pieces flushed: the embedded channel has sent them
        assertThat(done.isSuccess()).isTrue();
        String c = Integer.toString(chunk);
        assertThat(recorder.events).containsExactly("40", "flush", c, "flush", c, "flush", c, "flush", c, "flush",
                "100", "flush");
        assertThat(sent()).isEqualTo(expected);
        assertThat(bulk.refCnt()).isZero(); // the pieces' retains and the buffer's own reference, each released once
    }

    @Test
    void aBufferLargerThanARecordIsFlushedAloneEvenWhenItIsOnePiece() {
        int size = TlsWriteChunker.RECORD + 1;
        channel.write(filled(8));
        channel.write(filled(size));
        channel.write(filled(8));
        assertThat(recorder.events).containsExactly("8", "flush", Integer.toString(size), "flush", "8");
        channel.flush();
        assertThat(sent()).hasSize(size + 16);
    }

    @Test
    void buffersUpToARecordPassWithoutFlushes() {
        channel.write(filled(8));
        channel.write(filled(TlsWriteChunker.RECORD));
        channel.write("not a buffer is passed on as it is");
        assertThat(recorder.events).containsExactly("8", Integer.toString(TlsWriteChunker.RECORD), "message");
        channel.finishAndReleaseAll();
    }
}
