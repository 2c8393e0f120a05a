package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.unix.IntegerUnixChannelOption;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReceiveLowWater} on a real epoll server channel fed by a plain socket: the mark it sets is the kernel's,
 * it wakes the event loop once for bytes that arrive in many pieces, never stays above what is still to come, and
 * does nothing on a channel of the JDK's transport.
 */
class ReceiveLowWaterTest {
    private static final IntegerUnixChannelOption SO_RCVLOWAT = new IntegerUnixChannelOption("SO_RCVLOWAT", 1, 18);

    private EventLoopGroup group;
    private Channel server;
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    /** Wake-ups of the event loop that read the socket (its read loops, each ending in channelReadComplete). */
    private final AtomicInteger reads = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    /** The channel's mark, as {@link FrameCodec} keeps it: lowered to what is still to come after every read. */
    private volatile ReceiveLowWater following;
    /** Bytes still to come while {@link #following} is set (event loop only). */
    private long toCome;

    private void start(boolean epoll) throws InterruptedException {
        group = EventLoops.newGroup("low-water-test", 1, epoll);
        server = new ServerBootstrap().group(group).channel(EventLoops.serverChannelClass(group))
                .childHandler(new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelReadComplete(ChannelHandlerContext ctx) {
                                reads.incrementAndGet(); // once per wake-up of the loop for the socket
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                int n = ((ByteBuf) msg).readableBytes();
                                bytes.addAndGet(n);
                                ((ByteBuf) msg).release();
                                ReceiveLowWater mark = following;
                                if (mark != null) {
                                    toCome -= n;
                                    if (toCome > 0) {
                                        mark.await(toCome);
                                    } else {
                                        mark.reset();
                                    }
                                }
                            }
                        });
                        accepted.add(ch);
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    /** A server on Linux's native transport (the test is skipped where there is none). */
    private void startEpoll() throws InterruptedException {
        assumeThat(EventLoops.usesEpoll(true)).as("Linux's native transport").isTrue();
        start(true);
    }

    @BeforeEach
    void setUp() {
        reads.set(0);
        bytes.set(0);
    }

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.close().awaitUninterruptibly();
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }

    private static <T> T onLoop(Channel ch, Callable<T> task) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        ch.eventLoop().execute(() -> {
            try {
                f.complete(task.call());
            } catch (Exception e) {
                f.completeExceptionally(e);
            }
        });
        return f.get(10, TimeUnit.SECONDS);
    }

    /** {@link ReceiveLowWater#await} on the channel's event loop, as the codecs call it. */
    private static void await(Channel ch, ReceiveLowWater mark, long toCome) throws Exception {
        onLoop(ch, () -> {
            mark.await(toCome);
            return null;
        });
    }

    /** The kernel's receive low-water mark of the channel's socket. */
    private static int markOf(Channel ch) throws Exception {
        return onLoop(ch, () -> ch.config().getOption(SO_RCVLOWAT));
    }

    /** Connects {@code peer} and returns the server's channel of the connection, after {@code warm} bytes through it. */
    private Channel connect(Socket peer, int warm) throws Exception {
        peer.setTcpNoDelay(true);
        peer.connect((InetSocketAddress) server.localAddress());
        Channel ch = accepted.poll(10, TimeUnit.SECONDS);
        if (warm > 0) {
            // a connection in use: the kernel has grown its receive window (a fresh one's may close before the mark)
            peer.getOutputStream().write(new byte[warm]);
            awaitBytes(warm);
        }
        return ch;
    }

    private static void sendInPieces(OutputStream out, int total, int piece) throws Exception {
        byte[] chunk = new byte[piece];
        for (int sent = 0; sent < total; sent += piece) {
            out.write(chunk, 0, Math.min(piece, total - sent));
            out.flush();
            Thread.sleep(5);
        }
    }

    @Test
    void bytesArrivingInPiecesWakeTheLoopOnceTheMarkIsReached() throws Exception {
        startEpoll();
        int warm = 16 << 20;
        try (Socket peer = new Socket()) {
            Channel ch = connect(peer, warm);
            ReceiveLowWater mark = new ReceiveLowWater(ch);
            int bulk = 512 << 10;

            // without a mark: a read per piece (16 pieces of 32 KiB, 5 ms apart)
            reads.set(0);
            sendInPieces(peer.getOutputStream(), bulk, 32 << 10);
            awaitBytes(warm + bulk);
            int unmarked = reads.getAndSet(0);
            assertThat(unmarked).isGreaterThanOrEqualTo(8);

            onLoop(ch, () -> {
                mark.await(bulk);
                toCome = bulk;
                following = mark;
                return null;
            });
            assertThat(markOf(ch)).isEqualTo(bulk);
            sendInPieces(peer.getOutputStream(), bulk, 32 << 10);
            awaitBytes(warm + 2L * bulk);
            // the kernel may report the socket readable early once (its receive window about to close)
            assertThat(reads.get()).as("reads of the marked bulk (unmarked: %d)", unmarked).isLessThanOrEqualTo(3);
            assertThat(markOf(ch)).as("reset once it came").isEqualTo(1);
            following = null;

            // the mark follows what is still to come, down to the kernel's default below MIN
            await(ch, mark, 4L << 20);
            assertThat(markOf(ch)).isEqualTo(ReceiveLowWater.MAX);
            await(ch, mark, 300_000);
            assertThat(markOf(ch)).isEqualTo(300_000);
            await(ch, mark, ReceiveLowWater.MIN - 1);
            assertThat(markOf(ch)).isEqualTo(1);

            // reset: a single byte wakes the loop again
            onLoop(ch, () -> {
                mark.await(bulk);
                mark.reset();
                return null;
            });
            peer.getOutputStream().write(7);
            awaitBytes(warm + 2L * bulk + 1);
        }
    }

    @Test
    void bytesAlreadyWaitingPastALoweredMarkAreReadAtOnce() throws Exception {
        startEpoll();
        int warm = 16 << 20;
        try (Socket peer = new Socket()) {
            Channel ch = connect(peer, warm);
            ReceiveLowWater mark = new ReceiveLowWater(ch);
            reads.set(0);
            await(ch, mark, 1 << 20);
            sendInPieces(peer.getOutputStream(), 200 << 10, 50 << 10);
            Thread.sleep(100);
            assertThat(reads.get()).as("below the mark: nothing read yet").isZero();
            await(ch, mark, 200 << 10); // the bulk turned out shorter: its bytes are all there
            awaitBytes(warm + (200 << 10));
        }
    }

    @Test
    void aChannelOfTheJdkTransportIsLeftAsItIs() throws Exception {
        start(false);
        try (Socket peer = new Socket()) {
            Channel ch = connect(peer, 0);
            await(ch, new ReceiveLowWater(ch), 1 << 20);
            peer.getOutputStream().write(new byte[1000]);
            awaitBytes(1000);
        }
    }

    private void awaitBytes(long n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (bytes.get() < n) {
            assertThat(System.nanoTime()).as("%d of %d bytes read", bytes.get(), n).isLessThan(deadline);
            Thread.sleep(2);
        }
        assertThat(bytes.get()).isEqualTo(n);
    }
}
