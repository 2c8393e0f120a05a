package io.tiffin.core.transport;

import io.tiffin.core.transport.proto.HelloReply;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.LongFunction;

/**
 * A fake server on loopback for one connection, to see how a client takes a malformed answer: it
 * completes the handshake properly, answers the next request with the raw bytes {@code reply(requestId)}
 * gives, then holds the connection open until the client closes it (so a client that waits for more
 * bytes is caught waiting, not woken by an end of stream).
 *
 * <p>Thread-safe. Owns its socket and thread; {@link #close()} ends both.
 */
final class RawAnswerServer implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Thread thread;

    RawAnswerServer(LongFunction<ByteBuffer> reply) throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        thread = Thread.ofPlatform().daemon().start(() -> {
            try (SocketChannel ch = server.accept()) {
                for (int frame = 0; frame < 2; frame++) {
                    long id = readRequest(ch);
                    if (id < 0) {
                        return;
                    }
                    ByteBuffer out = frame == 0 ? helloReply(id) : reply.apply(id);
                    while (out.hasRemaining()) {
                        ch.write(out);
                    }
                }
                ByteBuffer sink = ByteBuffer.allocate(4096);
                while (ch.read(sink.clear()) >= 0) {
                    // until the client closes the connection (or close() interrupts this thread)
                }
            } catch (IOException e) {
                // closed by the test
            }
        });
    }

    /** {@code host:port} to connect to. */
    String address() throws IOException {
        return "127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    /** Reads one request frame; returns its id, or -1 when the client closed the connection. */
    private static long readRequest(SocketChannel ch) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(FrameCodec.LENGTH_FIELD_SIZE + FrameCodec.HEADER_SIZE);
        if (!readFully(ch, head)) {
            return -1;
        }
        if (!readFully(ch, ByteBuffer.allocate(head.getInt(0) - FrameCodec.HEADER_SIZE))) {
            return -1;
        }
        return head.getLong(8);
    }

    private static boolean readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    private static ByteBuffer helloReply(long id) {
        byte[] hello = HelloReply.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION).build().toByteArray();
        int size = (int) FrameCodec.frameSize(hello.length, 0);
        return ByteBuffer.allocate(size).putInt(size - FrameCodec.LENGTH_FIELD_SIZE)
                .put((byte) TiffinVersion.PROTOCOL_VERSION).put((byte) Frame.Kind.RESPONSE.code())
                .putShort((short) Opcode.HELLO.code()).putLong(id).putInt(0).putInt(hello.length).putInt(0)
                .put(hello).position(size).flip();
    }

    @Override
    public void close() throws IOException {
        thread.interrupt();
        server.close();
    }
}
