package io.tiffin.core.transport;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The byte stream of a {@link BlockingConnection}: its blocking socket as it is ({@link #plain}), or a TLS
 * session over it ({@link TlsSocketStream}). Reads and writes block the calling thread; {@link #close}
 * from another thread (the pool's watchdog) makes a blocked call fail.
 *
 * <p>Not thread-safe: one thread reads and writes at a time; only {@link #close} may come from another.
 */
interface SocketStream {
    /**
     * Reads at least one byte into {@code dst} (which has room), blocking until one arrives; returns the
     * count, or -1 at the end of the stream.
     */
    int read(ByteBuffer dst) throws IOException;

    /** Writes bytes of {@code srcs[offset, offset + length)}, blocking until some are sent; returns how many. */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException;

    /** Writes bytes of {@code src}, blocking until some are sent; returns how many. */
    default int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    /** Closes the socket (and frees a TLS engine); a blocked call fails. Idempotent, any thread. */
    void close();

    /** The socket as it is: reads and writes are the channel's own. */
    static SocketStream plain(java.nio.channels.SocketChannel channel) {
        return new SocketStream() {
            @Override
            public int read(ByteBuffer dst) throws IOException {
                return channel.read(dst);
            }

            @Override
            public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
                return channel.write(srcs, offset, length);
            }

            @Override
            public int write(ByteBuffer src) throws IOException {
                return channel.write(src);
            }

            @Override
            public void close() {
                try {
                    channel.close();
                } catch (IOException e) {
                    // nothing left to release
                }
            }
        };
    }
}
