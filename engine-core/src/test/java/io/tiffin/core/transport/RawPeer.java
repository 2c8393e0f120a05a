package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.transport.proto.ErrorReply;
import io.tiffin.core.transport.proto.Hello;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/**
 * A misbehaving peer for limit tests: a plain socket that sends frames encoded by the real encoder, whole
 * or a byte at a time, reads answers when told to (or never), and tells whether the server closed it.
 *
 * <p>Not thread-safe: one test thread drives it. Owns its socket.
 */
final class RawPeer implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private long nextId = 1;

    RawPeer(InetSocketAddress server) throws IOException {
        this(server, 0);
    }

    /** A peer with a socket receive buffer of {@code receiveBuffer} bytes (0 = the system's). */
    RawPeer(InetSocketAddress server, int receiveBuffer) throws IOException {
        socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(server, 5000);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
    }

    /** The bytes of {@code frame} as the transport's encoder writes them. */
    static byte[] encode(Frame frame) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameCodec(TransportSettings.DEFAULT_MAX_FRAME_SIZE));
        ch.writeOutbound(frame);
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            byte[] part = new byte[b.readableBytes()];
            b.readBytes(part);
            b.release();
            bytes.writeBytes(part);
        }
        ch.finishAndReleaseAll();
        return bytes.toByteArray();
    }

    /** A request frame's bytes with the next request id. */
    byte[] request(Opcode opcode, MessageLite control, ByteBuf bulk) {
        return encode(Frame.request(opcode, nextId++, control, bulk));
    }

    /** Sends a HELLO (with {@code token}) and reads its answer's status. */
    ErrorCode hello(String token) throws IOException {
        send(request(Opcode.HELLO, Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION)
                .setToken(token).setPeerId("raw").build(), null));
        return readAnswer().status();
    }

    void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Sends {@code bytes} one at a time, {@code pauseMillis} apart (pacing a slow peer). */
    void trickle(byte[] bytes, long pauseMillis) throws IOException, InterruptedException {
        for (byte b : bytes) {
            out.write(b);
            out.flush();
            Thread.sleep(pauseMillis); // paces the trickle: the slow peer under test
        }
    }

    /** One answer: status and, for a failure, its message. Thread-safe (immutable). */
    record Answer(ErrorCode status, String message, int bulkLength) {
    }

    /** Reads one answer frame (its bulk bytes skipped). */
    Answer readAnswer() throws IOException {
        socket.setSoTimeout(10_000);
        byte[] head = new byte[FrameCodec.LENGTH_FIELD_SIZE + FrameCodec.HEADER_SIZE];
        in.readFully(head);
        ByteBuffer h = ByteBuffer.wrap(head);
        int length = h.getInt(0);
        int status = h.getInt(16);
        int control = h.getInt(20);
        int bulk = h.getInt(24);
        byte[] rest = new byte[length - FrameCodec.HEADER_SIZE];
        in.readFully(rest);
        String message = "";
        if (status != 0) {
            message = ErrorReply.parseFrom(ByteBuffer.wrap(rest, 0, control)).getMessage();
        }
        return new Answer(ErrorCode.fromValue(status), message, bulk);
    }

    /** Whether the server closed the connection: waits up to {@code timeoutMillis} for the end of the stream. */
    boolean closedWithin(long timeoutMillis) throws IOException {
        socket.setSoTimeout((int) timeoutMillis);
        InputStream raw = socket.getInputStream();
        byte[] sink = new byte[65536];
        try {
            while (true) {
                if (raw.read(sink) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException | EOFException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
