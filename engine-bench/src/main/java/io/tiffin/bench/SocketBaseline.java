package io.tiffin.bench;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A plain loopback TCP server for the socket baseline: per connection a thread that reads a 16-byte
 * request (n, offset) — n > 0: send n bytes, from the connection's one buffer when offset is -1, else
 * from the spread values at offset, preceded by the prefix bytes when offset has the {@link #PREFIXED}
 * flag; n &lt; 0: receive -n bytes, answer one byte. The client side is {@link SocketTarget}.
 *
 * <p>Owns its server socket, the connections and their serving threads; {@link #close()} stops it.
 *
 * <p>Thread-safe.
 */
final class SocketBaseline implements AutoCloseable {
    private final ServerSocketChannel server;
    private final int prefixBytes;
    private final ByteBuffer data;
    /** Distinct values for the spread baseline (random bytes), or null. */
    private final ByteBuffer spread;
    private final List<SocketChannel> channels = new ArrayList<>();

    /** Flag in a request's offset: send the spread value at the offset preceded by the prefix bytes. */
    static final long PREFIXED = 1L << 62;

    /**
     * Starts serving on a free loopback port.
     *
     * @param maxSize the largest value a request asks for
     * @param prefixBytes bytes sent before a prefixed value (0 = none)
     * @param spreadBytes bytes of distinct values to serve gets from at an offset (0 = none)
     */
    SocketBaseline(long maxSize, int prefixBytes, long spreadBytes) throws IOException {
        this.prefixBytes = prefixBytes;
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        data = ByteBuffer.allocateDirect((int) maxSize);
        spread = spreadBytes > 0 ? ByteBuffer.allocateDirect((int) spreadBytes) : null;
        if (spread != null) {
            MemorySegment m = MemorySegment.ofBuffer(spread);
            SplittableRandom r = new SplittableRandom(spreadBytes);
            for (long off = 0; off + 8 <= spreadBytes; off += 8) {
                m.set(ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
            }
        }
        Thread acceptor = new Thread(this::acceptLoop, "bench-socket-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Closes every connection so far, both ends: their serving threads end and drop their buffers. */
    void closeConnections() throws IOException {
        synchronized (channels) {
            for (SocketChannel ch : channels) {
                ch.close();
            }
            channels.clear();
        }
    }

    /** A new connection to the server (TCP_NODELAY), closed by {@link #closeConnections()} or {@link #close()}. */
    SocketChannel connect() throws IOException {
        SocketChannel ch = SocketChannel.open(server.getLocalAddress());
        ch.socket().setTcpNoDelay(true);
        synchronized (channels) {
            channels.add(ch);
        }
        return ch;
    }

    private void acceptLoop() {
        while (server.isOpen()) {
            try {
                SocketChannel ch = server.accept();
                ch.socket().setTcpNoDelay(true);
                synchronized (channels) {
                    channels.add(ch);
                }
                Thread t = new Thread(() -> serve(ch), "bench-socket-serve");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(SocketChannel ch) {
        try {
            serveUntilClosed(ch);
        } catch (IOException e) {
            // the client closed the connection
        } catch (RuntimeException | Error e) {
            // out of direct memory, say: close, so the client fails instead of waiting for an answer
            System.err.println("socket baseline: a serving thread failed: " + e);
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing is all that is left to do
            }
        }
    }

    private void serveUntilClosed(SocketChannel ch) throws IOException {
        ByteBuffer header = ByteBuffer.allocateDirect(16);
        ByteBuffer ack = ByteBuffer.allocateDirect(1);
        ByteBuffer mine = data.duplicate();
        ByteBuffer values = spread == null ? null : spread.duplicate();
        ByteBuffer sink = ByteBuffer.allocateDirect(data.capacity());
        ByteBuffer prefix = ByteBuffer.allocateDirect(Math.max(1, prefixBytes));
        while (true) {
            readFully(ch, header.clear());
            long n = header.getLong(0);
            long offset = header.getLong(8);
            if (n > 0 && offset >= 0 && (offset & PREFIXED) != 0) {
                int at = (int) (offset & ~PREFIXED);
                ByteBuffer[] both = {prefix.clear().limit(prefixBytes), values.clear().position(at).limit((int) (at + n))};
                while (both[1].hasRemaining()) {
                    ch.write(both);
                }
            } else if (n > 0 && offset >= 0 && values != null) {
                writeFully(ch, values.clear().position((int) offset).limit((int) (offset + n)));
            } else if (n > 0) {
                writeFully(ch, mine.clear().limit((int) n));
            } else {
                readFully(ch, sink.clear().limit((int) -n));
                writeFully(ch, ack.clear());
            }
        }
    }

    static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("connection closed");
            }
        }
    }

    static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (channels) {
            for (SocketChannel ch : channels) {
                ch.close();
            }
        }
    }
}
