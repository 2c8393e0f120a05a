import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Experiment behind docs/experiments/HISTORY.md "The bound of a get over TCP, against Redis" (zero-copy
 * sends): does a server that answers 1 MiB reads with {@code sendfile} from a tmpfs file beat one that
 * {@code write}s the same bytes from memory, over loopback TCP? Not part of the build; run it with the
 * JDK's source launcher:
 *
 * <pre>
 *   java docs/experiments/SendfileVsWrite.java write 6
 *   java docs/experiments/SendfileVsWrite.java sendfile 6
 * </pre>
 *
 * 128 distinct 1 MiB values (more than the last-level cache, as in {@code bench kv}), 4 client threads
 * each asking for a random value and reading it into a direct buffer, a blocking server thread per
 * connection; prints the values' GB/s after 2 s of warm-up. The values live in a file in /dev/shm (for
 * sendfile) and in a copy in anonymous memory (for write).
 *
 * <p>Thread-safety: a program, not a library; the values are written before any thread reads them. The
 * shared arena holding both copies belongs to the process and is never closed before it exits.
 */
public final class SendfileVsWrite {
    private static final int SIZE = 1 << 20;
    private static final int VALUES = 128;
    private static final int CLIENTS = 4;

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !(args[0].equals("write") || args[0].equals("sendfile"))) {
            System.err.println("usage: java SendfileVsWrite.java write|sendfile SECONDS");
            System.exit(2);
        }
        String mode = args[0];
        int seconds = Integer.parseInt(args[1]);
        Path file = Path.of("/dev/shm/sendfile-vs-write-" + ProcessHandle.current().pid());
        FileChannel values = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
        Arena arena = Arena.ofShared();
        MemorySegment mapped = values.map(FileChannel.MapMode.READ_WRITE, 0, (long) SIZE * VALUES, arena);
        SplittableRandom fill = new SplittableRandom(1);
        for (long i = 0; i < mapped.byteSize(); i += 8) {
            mapped.set(ValueLayout.JAVA_LONG_UNALIGNED, i, fill.nextLong());
        }
        MemorySegment anonymous = arena.allocate((long) SIZE * VALUES, 4096);
        anonymous.copyFrom(mapped);

        ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    SocketChannel ch = server.accept();
                    ch.socket().setTcpNoDelay(true);
                    Thread t = new Thread(() -> serve(ch, mode, values, anonymous));
                    t.setDaemon(true);
                    t.start();
                }
            } catch (IOException e) {
                // closed at exit
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();

        AtomicLong reads = new AtomicLong();
        for (int c = 0; c < CLIENTS; c++) {
            int seed = c;
            Thread client = new Thread(() -> {
                try (SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
                    ch.socket().setTcpNoDelay(true);
                    ByteBuffer request = ByteBuffer.allocateDirect(4);
                    ByteBuffer dst = ByteBuffer.allocateDirect(SIZE);
                    SplittableRandom r = new SplittableRandom(seed);
                    while (true) {
                        request.clear().putInt(r.nextInt(VALUES)).flip();
                        while (request.hasRemaining()) {
                            ch.write(request);
                        }
                        dst.clear();
                        while (dst.hasRemaining()) {
                            if (ch.read(dst) < 0) {
                                throw new EOFException("server closed");
                            }
                        }
                        reads.incrementAndGet();
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            client.setDaemon(true);
            client.start();
        }
        Thread.sleep(2000);
        long before = reads.get();
        long t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long done = reads.get() - before;
        long elapsed = System.nanoTime() - t0;
        System.out.printf("%s %.3f GB/s%n", mode, done * (double) SIZE / elapsed);
        System.exit(0);
    }

    private static void serve(SocketChannel ch, String mode, FileChannel values, MemorySegment anonymous) {
        try {
            ByteBuffer request = ByteBuffer.allocateDirect(4);
            while (true) {
                request.clear();
                while (request.hasRemaining()) {
                    if (ch.read(request) < 0) {
                        return;
                    }
                }
                long position = (long) request.getInt(0) * SIZE;
                if (mode.equals("sendfile")) {
                    for (long left = SIZE; left > 0; ) {
                        long sent = values.transferTo(position, left, ch);
                        position += sent;
                        left -= sent;
                    }
                } else {
                    ByteBuffer b = anonymous.asSlice(position, SIZE).asByteBuffer();
                    while (b.hasRemaining()) {
                        ch.write(b);
                    }
                }
            }
        } catch (IOException e) {
            // the client side ends with the process
        }
    }
}
