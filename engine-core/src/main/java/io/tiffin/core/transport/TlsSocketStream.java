package io.tiffin.core.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * A TLS session over a {@link BlockingConnection}'s blocking socket, driven by the calling thread with an
 * {@link SSLEngine} (OpenSSL's or the JDK's, from {@link TlsContexts#newClientEngine}). Reads of at least
 * one record's plaintext decrypt straight into the caller's buffer (so a large bulk part is one copy, the
 * decryption, as it is one copy, the kernel's, in plaintext); smaller reads go through a one-record buffer.
 * Writes encrypt into a send buffer of {@value #NET_BUFFER_SIZE} bytes written with one system call.
 *
 * <p>Not thread-safe: the connection's thread reads and writes; {@link #close} may come from the pool's
 * watchdog (the engine's own methods are safe against it). Owns the engine (released once by {@link #close})
 * and its direct buffers (freed by the garbage collector).
 */
final class TlsSocketStream implements SocketStream {
    /** Encrypted bytes read or written per system call (at least one TLS record's). */
    static final int NET_BUFFER_SIZE = 128 * 1024;

    private final SocketChannel channel;
    private final SSLEngine engine;
    /** Received ciphertext not yet decrypted: read mode. */
    private ByteBuffer netIn;
    /** Ciphertext to send: write mode while filled, flipped to send. */
    private ByteBuffer netOut;
    /** Decrypted bytes not yet handed out: read mode. */
    private ByteBuffer plainIn;
    private volatile boolean closed;

    TlsSocketStream(SocketChannel channel, SSLEngine engine) {
        this.channel = channel;
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocateDirect(Math.max(NET_BUFFER_SIZE, packet)).limit(0);
        this.netOut = ByteBuffer.allocateDirect(Math.max(NET_BUFFER_SIZE, packet));
        this.plainIn = ByteBuffer.allocateDirect(engine.getSession().getApplicationBufferSize()).limit(0);
    }

    /** {@link #unwrap}: the server closed the TLS session. */
    private static final int CLOSED = -1;
    /** {@link #unwrap}: nothing decrypted, a whole record is not there yet. */
    private static final int NEED_DATA = -2;

    /**
     * Runs the TLS handshake as the client (the caller bounds it: the watchdog closes the socket at the
     * deadline).
     *
     * @throws SSLHandshakeException when the server refuses this client or is not trusted, or closes the
     *     connection during the handshake (a plaintext server does)
     */
    void handshake() throws IOException {
        engine.beginHandshake();
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NEED_WRAP -> wrapAndSend(NOTHING, 0, 1);
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    int n = unwrap(plainIn.clear());
                    plainIn.flip();
                    // the unwrap may have finished the handshake (sending this side's last message): then no
                    // more bytes come until this side speaks, and waiting for them would hang
                    boolean waiting = switch (engine.getHandshakeStatus()) {
                        case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> true;
                        default -> false;
                    };
                    if (n == CLOSED || (n == NEED_DATA && waiting && !fill())) {
                        throw new SSLHandshakeException("the server closed the connection during the TLS handshake"
                                + " (a plaintext server closes on the first TLS bytes; a TLS server refusing this"
                                + " client says why in its log)");
                    }
                }
                case NEED_TASK -> runTasks();
                default -> {
                    return;
                }
            }
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (plainIn.hasRemaining()) {
            return take(dst);
        }
        while (true) {
            // whole records straight into dst while it has room for one, else through plainIn
            boolean direct = dst.remaining() >= engine.getSession().getApplicationBufferSize();
            int n = unwrap(direct ? dst : plainIn.clear());
            if (!direct) {
                plainIn.flip();
            }
            if (n > 0) {
                return direct ? n : take(dst);
            }
            if (n == CLOSED || (n == NEED_DATA && !fill())) {
                return -1;
            }
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return wrapAndSend(srcs, offset, length);
    }

    /** No plaintext: for wraps that only send handshake messages (an array of one empty buffer; OpenSSL's engine refuses an empty array). */
    private static final ByteBuffer[] NOTHING = {ByteBuffer.allocateDirect(0)};

    /**
     * Encrypts as much of {@code srcs} as fills the send buffer and sends it; returns the plaintext bytes
     * consumed. Once {@code srcs} is used up it goes on until the engine has no ciphertext left: an engine
     * (OpenSSL's) may take plaintext in one wrap and hand out part of its records in the next, and bytes
     * left in it would never reach the server. With nothing to send it sends a handshake's next message.
     */
    private long wrapAndSend(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long consumed = 0;
        int packet = engine.getSession().getPacketBufferSize();
        while (true) {
            netOut.clear();
            boolean drained = false;
            while (netOut.remaining() >= packet) {
                boolean data = hasRemaining(srcs, offset, length);
                SSLEngineResult r = data ? engine.wrap(srcs, offset, length, netOut) : engine.wrap(NOTHING, 0, 1, netOut);
                if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                    if (netOut.position() > 0) {
                        break; // full: send, then go on
                    }
                    netOut = ByteBuffer.allocateDirect(Math.max(packet, netOut.capacity() * 2));
                    continue;
                }
                if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                    throw new SSLException("the TLS session with the server is closed");
                }
                consumed += r.bytesConsumed();
                if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                    runTasks();
                }
                if (r.bytesProduced() == 0) {
                    drained = true; // nothing left in the engine for now
                    break;
                }
            }
            netOut.flip();
            while (netOut.hasRemaining()) {
                channel.write(netOut);
            }
            if (drained || hasRemaining(srcs, offset, length)) {
                return consumed; // the caller comes back for the rest
            }
        }
    }

    /**
     * Decrypts from {@link #netIn} into {@code dst} (write mode): whole records while {@code dst} has room
     * for one (one record only into {@link #plainIn}). Returns the bytes produced; 0 after a record that
     * carried none (a handshake message, a session ticket); {@link #NEED_DATA} when no whole record is
     * there; {@link #CLOSED} when the server closed the session.
     */
    private int unwrap(ByteBuffer dst) throws IOException {
        int produced = 0;
        int appSize = engine.getSession().getApplicationBufferSize();
        while (true) {
            if (!netIn.hasRemaining()) {
                return produced > 0 ? produced : NEED_DATA;
            }
            SSLEngineResult r = engine.unwrap(netIn, dst);
            produced += r.bytesProduced();
            switch (r.getHandshakeStatus()) {
                case NEED_TASK -> runTasks();
                case NEED_WRAP -> {
                    if (engine.isInboundDone()) {
                        answerClose(); // the server's close_notify: what came before it is still handed out
                    } else {
                        wrapAndSend(NOTHING, 0, 1); // a handshake's next message, a key update
                    }
                }
                case FINISHED -> {
                    return produced; // the handshake's end: its loop decides what comes next
                }
                default -> {
                }
            }
            switch (r.getStatus()) {
                case CLOSED -> {
                    return produced > 0 ? produced : CLOSED;
                }
                case BUFFER_UNDERFLOW -> {
                    return produced > 0 ? produced : NEED_DATA;
                }
                case BUFFER_OVERFLOW -> {
                    if (produced > 0 || dst != plainIn) {
                        return produced;
                    }
                    plainIn = ByteBuffer.allocateDirect(Math.max(appSize, plainIn.capacity() * 2));
                    dst = plainIn;
                }
                default -> {
                    if (r.bytesConsumed() == 0 && r.bytesProduced() == 0) {
                        return produced > 0 ? produced : NEED_DATA;
                    }
                    if (produced > 0 && (dst == plainIn || dst.remaining() < appSize)) {
                        return produced;
                    }
                    if (produced == 0 && engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                            && engine.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.FINISHED) {
                        return 0; // the handshake loop decides what comes next
                    }
                }
            }
        }
    }

    /**
     * Answers the server's close_notify with this side's, best effort: the server may be gone already (it
     * closes right after refusing a HELLO), and the records read before its close_notify still count.
     */
    private void answerClose() {
        try {
            netOut.clear();
            engine.wrap(NOTHING, 0, 1, netOut); // status CLOSED, with the close_notify
            netOut.flip();
            while (netOut.hasRemaining()) {
                channel.write(netOut);
            }
        } catch (IOException e) {
            // the server closed first: nothing to answer
        }
    }

    /** Moves what {@link #plainIn} holds into {@code dst}, as much as fits; returns how much. */
    private int take(ByteBuffer dst) {
        int n = Math.min(dst.remaining(), plainIn.remaining());
        int limit = plainIn.limit();
        plainIn.limit(plainIn.position() + n);
        dst.put(plainIn);
        plainIn.limit(limit);
        return n;
    }

    /** Reads more ciphertext from the socket after what {@link #netIn} holds; false at the end of the stream. */
    private boolean fill() throws IOException {
        netIn.compact();
        if (!netIn.hasRemaining()) {
            ByteBuffer bigger = ByteBuffer.allocateDirect(netIn.capacity() * 2);
            netIn.flip();
            bigger.put(netIn);
            netIn = bigger;
        }
        int n;
        try {
            n = channel.read(netIn);
        } finally {
            netIn.flip();
        }
        if (n < 0 && closed) {
            throw new EOFException("the connection was closed");
        }
        return n >= 0;
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    private static boolean hasRemaining(ByteBuffer[] srcs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (srcs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            channel.close();
        } catch (IOException e) {
            // nothing left to release
        }
        TlsContexts.release(engine);
    }
}
