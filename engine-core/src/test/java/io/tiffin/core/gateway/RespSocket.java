package io.tiffin.core.gateway;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A bare socket to the gateway for tests that need the exact bytes: sends raw bytes or commands and reads
 * replies as Java values ({@code +OK} → "OK", {@code -ERR x} → {@link Err}, {@code :1} → 1L, bulk → byte[],
 * nulls → null, arrays and sets → List, maps → Map, verbatim → String).
 *
 * <p>Not thread-safe: one test thread uses it.
 */
final class RespSocket implements AutoCloseable {
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    /**
     * An error reply.
     *
     * <p>Thread-safe (immutable).
     */
    record Err(String text) {
    }

    RespSocket(int port) {
        this(port, 0);
    }

    /** With a receive buffer of {@code receiveBuffer} bytes (0 = the system's), e.g. small to hold replies back. */
    RespSocket(int port, int receiveBuffer) {
        try {
            socket = new Socket();
            if (receiveBuffer > 0) {
                socket.setReceiveBufferSize(receiveBuffer);
            }
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            out = socket.getOutputStream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Socket socket() {
        return socket;
    }

    /** The reply stream, for tests that read a reply's raw bytes (after every earlier reply was read). */
    InputStream input() {
        return in;
    }

    RespSocket send(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    RespSocket send(String raw) {
        return send(raw.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** The command as a RESP array of bulk strings. */
    /** The number {@code field} of {@code INFO stats} (e.g. {@code ready_gets}), asked on this connection. */
    long infoStat(String field) {
        String info = new String((byte[]) call("INFO", "stats"), java.nio.charset.StandardCharsets.UTF_8);
        for (String line : info.split("\r\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1));
            }
        }
        throw new AssertionError("INFO stats has no " + field + ": " + info);
    }

    /** {@code parts} one after the other, e.g. commands sent in one write (a pipeline). */
    static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] command(Object... args) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (Object a : args) {
            byte[] v = a instanceof byte[] bytes ? bytes : a.toString().getBytes(StandardCharsets.UTF_8);
            b.writeBytes(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            b.writeBytes(v);
            b.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        return b.toByteArray();
    }

    /** Sends one command and reads its reply. */
    Object call(Object... args) {
        send(command(args));
        return read();
    }

    /** Reads one reply. */
    Object read() {
        try {
            return parse();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reads until the gateway closes the connection, returning what came; fails after {@code millis}. */
    byte[] readToEnd(int millis) {
        try {
            socket.setSoTimeout(millis);
            return in.readAllBytes();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the gateway did not close the connection within " + millis + " ms", e);
        } catch (IOException e) {
            return new byte[0]; // reset by the peer: closed too
        }
    }

    private Object parse() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("the gateway closed the connection");
        }
        String line = line();
        return switch (type) {
            case '+' -> line;
            case '-' -> new Err(line);
            case ':' -> Long.parseLong(line);
            case '_' -> null;
            case ',', '(' -> line; // RESP3's double and big number, as their text
            case '#' -> line.equals("t");
            case '$' -> bulk(Integer.parseInt(line));
            case '=' -> {
                byte[] b = bulk(Integer.parseInt(line));
                yield new String(b, StandardCharsets.UTF_8);
            }
            case '*', '~' -> {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    yield null;
                }
                List<Object> list = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    list.add(parse());
                }
                yield list;
            }
            case '%' -> {
                int n = Integer.parseInt(line);
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object k = parse();
                    map.put(k instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : k, parse());
                }
                yield map;
            }
            default -> throw new IOException("unexpected reply type '" + (char) type + "' " + line);
        };
    }

    private byte[] bulk(int n) throws IOException {
        if (n < 0) {
            return null;
        }
        byte[] b = in.readNBytes(n);
        if (b.length != n || in.read() != '\r' || in.read() != '\n') {
            throw new IOException("truncated bulk string");
        }
        return b;
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new EOFException("the gateway closed the connection in a reply");
            }
            sb.append((char) c);
        }
        if (in.read() != '\n') {
            throw new IOException("CR without LF");
        }
        return sb.toString();
    }

    static String text(Object bulk) {
        return new String((byte[]) bulk, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
