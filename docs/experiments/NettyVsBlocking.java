import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Experiment behind docs/experiments/HISTORY.md "Where a get over TCP loses to the bare socket": how much
 * of the gap between a Tiffin node's 1 MiB read and the plain socket baseline comes from serving the read
 * on a Netty epoll event loop (non-blocking writes, several connections per loop) rather than a blocking
 * thread per connection, and how much from the server being another process? Same values, same client, same
 * request; only the server differs. Not part of the build; run it with the JDK's source launcher and the
 * bench classpath (Netty):
 *
 * <pre>
 *   java -cp "$CP" docs/experiments/NettyVsBlocking.java blocking 0 6     # server and clients in one JVM
 *   java -cp "$CP" docs/experiments/NettyVsBlocking.java netty 2 6
 *   java -cp "$CP" docs/experiments/NettyVsBlocking.java netty 2          # a server alone: prints PORT p
 *   java -cp "$CP" docs/experiments/NettyVsBlocking.java client 6 p1,p2   # clients of such servers
 * </pre>
 *
 * Arguments: server kind, event loops (netty only), measured seconds (none: serve until killed), or
 * {@code client}, seconds and the servers' ports (each get picks one at random, as a Tiffin client picks
 * the node holding the key). 128 distinct 1 MiB values (more than the last-level cache), 4 client threads,
 * each asking for a random value over its own connection to each server and reading it into a direct
 * buffer; prints GB/s after 2 s of warm-up.
 *
 * <p>Thread-safety: a program, not a library; the values are written before any thread reads them. The
 * arena holding them belongs to the process and is never closed before it exits.
 */
public final class NettyVsBlocking {
    private static final int SIZE = 1 << 20;
    private static final int VALUES = 128;
    private static final int CLIENTS = 4;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        if (mode.equals("client")) {
            int seconds = Integer.parseInt(args[1]);
            String[] ports = args[2].split(",");
            runClients(ports, seconds);
            return;
        }
        int loops = Integer.parseInt(args[1]);
        MemorySegment values = Arena.global().allocate((long) SIZE * VALUES, 4096);
        SplittableRandom fill = new SplittableRandom(1);
        for (long i = 0; i < values.byteSize(); i += 8) {
            values.set(ValueLayout.JAVA_LONG_UNALIGNED, i, fill.nextLong());
        }
        int port = switch (mode) {
            case "blocking" -> blockingServer(values);
            case "netty" -> nettyServer(values, loops);
            default -> throw new IllegalArgumentException("mode blocking|netty|client");
        };
        if (args.length > 2) {
            int seconds = Integer.parseInt(args[2]);
            runClients(new String[] {String.valueOf(port)}, seconds);
            return;
        }
        System.out.println("PORT " + port);
        Thread.sleep(Long.MAX_VALUE);
    }

    static void runClients(String[] ports, int seconds) throws Exception {
        AtomicLong bytes = new AtomicLong();
        for (int c = 0; c < CLIENTS; c++) {
            int seed = c;
            int[] ps = java.util.Arrays.stream(ports).mapToInt(Integer::parseInt).toArray();
            Thread t = new Thread(() -> client(ps, bytes, seed));
            t.setDaemon(true);
            t.start();
        }
        Thread.sleep(2000);
        long before = bytes.get();
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long moved = bytes.get() - before;
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf("%.3f GB/s%n", moved / s / 1e9);
        System.exit(0);
    }

    private static void client(int[] ports, AtomicLong bytes, int seed) {
        try {
            SocketChannel[] chs = new SocketChannel[ports.length];
            for (int i = 0; i < ports.length; i++) {
                chs[i] = SocketChannel.open(new InetSocketAddress("127.0.0.1", ports[i]));
                chs[i].socket().setTcpNoDelay(true);
            }
            ByteBuffer request = ByteBuffer.allocateDirect(16);
            ByteBuffer dst = ByteBuffer.allocateDirect(SIZE);
            SplittableRandom r = new SplittableRandom(seed);
            while (true) {
                SocketChannel ch = chs[r.nextInt(chs.length)];
                request.clear().putLong(0, SIZE).putLong(8, (long) r.nextInt(VALUES) * SIZE);
                while (request.hasRemaining()) {
                    ch.write(request);
                }
                dst.clear();
                while (dst.hasRemaining()) {
                    if (ch.read(dst) < 0) {
                        throw new IOException("closed");
                    }
                }
                bytes.addAndGet(SIZE);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static int blockingServer(MemorySegment values) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        Thread acceptor = new Thread(() -> {
            while (true) {
                try {
                    SocketChannel ch = server.accept();
                    ch.socket().setTcpNoDelay(true);
                    Thread t = new Thread(() -> serveBlocking(ch, values));
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    private static void serveBlocking(SocketChannel ch, MemorySegment values) {
        ByteBuffer header = ByteBuffer.allocateDirect(16);
        try {
            while (true) {
                header.clear();
                while (header.hasRemaining()) {
                    if (ch.read(header) < 0) {
                        return;
                    }
                }
                ByteBuffer src = values.asSlice(header.getLong(8), header.getLong(0)).asByteBuffer();
                while (src.hasRemaining()) {
                    ch.write(src);
                }
            }
        } catch (IOException e) {
            // client gone
        }
    }

    private static int nettyServer(MemorySegment values, int loops) throws InterruptedException {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        EventLoopGroup io = new MultiThreadIoEventLoopGroup(loops, EpollIoHandler.newFactory());
        Channel server = new ServerBootstrap().group(boss, io).channel(EpollServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new ByteToMessageDecoder() {
                            @Override
                            protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
                                while (in.readableBytes() >= 16) {
                                    long n = in.readLong();
                                    long offset = in.readLong();
                                    ctx.writeAndFlush(Unpooled.wrappedBuffer(values.asSlice(offset, n).asByteBuffer()));
                                }
                            }
                        });
                    }
                }).bind("127.0.0.1", 0).sync().channel();
        return ((InetSocketAddress) server.localAddress()).getPort();
    }
}
