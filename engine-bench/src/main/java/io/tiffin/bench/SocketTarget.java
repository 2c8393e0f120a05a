package io.tiffin.bench;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;

/**
 * Targets {@code socket}, {@code socket-spread} and {@code socket-prefixed}: the client side of the
 * {@link SocketBaseline}, the same bytes moved over a plain loopback TCP connection per client thread,
 * the bound for a get over TCP. {@code socket} puts and gets one buffer per connection; with the spread
 * baseline, gets read from as many distinct values as Tiffin's cases (cold in the CPU caches); with a
 * prefix, each value comes after that many bytes, as after a frame header.
 *
 * <p>Not thread-safe (see {@link KvTarget}).
 */
final class SocketTarget implements KvTarget {
    private final SocketBaseline server;
    private final KvLoad load;
    private final boolean spread;
    private final int prefixBytes;

    /**
     * @param server the server, started with at least the largest value size, and with spread values and
     *     the prefix when those are measured
     * @param load runs the cases
     * @param spread whether to measure {@code socket-spread}
     * @param prefixBytes bytes before each value of {@code socket-prefixed}; 0 = not measured
     */
    SocketTarget(SocketBaseline server, KvLoad load, boolean spread, int prefixBytes) {
        this.server = server;
        this.load = load;
        this.spread = spread;
        this.prefixBytes = prefixBytes;
    }

    @Override
    public void measure(long size, MemorySegment value, Arena arena) throws Exception {
        load.measure("socket", "put", size, 1, t -> {
            SocketChannel ch = server.connect();
            ByteBuffer src = arena.allocate(size, 64).asByteBuffer();
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            ByteBuffer ack = ByteBuffer.allocateDirect(1);
            return i -> {
                header.clear().putLong(0, -size).putLong(8, -1);
                SocketBaseline.writeFully(ch, header);
                SocketBaseline.writeFully(ch, src.clear());
                SocketBaseline.readFully(ch, ack.clear());
            };
        });
        load.measure("socket", "get", size, 1, t -> {
            SocketChannel ch = server.connect();
            ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
            ByteBuffer header = ByteBuffer.allocateDirect(16);
            return i -> {
                header.clear().putLong(0, size).putLong(8, -1);
                SocketBaseline.writeFully(ch, header);
                SocketBaseline.readFully(ch, dst.clear());
            };
        });
        if (spread) {
            int keys = KvWorkload.keyCount(size);
            load.measure("socket-spread", "get", size, 1, t -> {
                SocketChannel ch = server.connect();
                ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
                ByteBuffer header = ByteBuffer.allocateDirect(16);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    header.clear().putLong(0, size).putLong(8, r.nextInt(keys) * size);
                    SocketBaseline.writeFully(ch, header);
                    SocketBaseline.readFully(ch, dst.clear());
                };
            });
        }
        if (prefixBytes > 0) {
            int keys = KvWorkload.keyCount(size);
            load.measure("socket-prefixed", "get", size, 1, t -> {
                SocketChannel ch = server.connect();
                ByteBuffer prefix = ByteBuffer.allocateDirect(prefixBytes);
                ByteBuffer dst = arena.allocate(size, 64).asByteBuffer();
                ByteBuffer[] both = {prefix, dst};
                ByteBuffer header = ByteBuffer.allocateDirect(16);
                SplittableRandom r = new SplittableRandom(t);
                return i -> {
                    header.clear().putLong(0, size).putLong(8, SocketBaseline.PREFIXED | (r.nextInt(keys) * size));
                    SocketBaseline.writeFully(ch, header);
                    prefix.clear();
                    dst.clear();
                    while (dst.hasRemaining()) {
                        if (ch.read(both) < 0) {
                            throw new IOException("connection closed");
                        }
                    }
                };
            });
        }
        server.closeConnections(); // each case's connections hold a serving thread and its buffers
    }
}
