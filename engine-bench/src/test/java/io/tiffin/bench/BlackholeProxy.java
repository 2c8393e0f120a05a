package io.tiffin.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of the coordination server for one master, that can cut it off the way a network partition
 * does: {@link #blackhole()} stops forwarding in both directions while keeping the connections open (no reset, no
 * close), so the master's client only notices that nothing answers, and its session expires.
 *
 * <p>Thread-safe: one accept thread and two pump threads per connection; the flag is volatile.
 */
final class BlackholeProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean blackholed;

    BlackholeProxy(int targetPort) {
        this.target = targetPort;
        try {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread accept = new Thread(this::accept, "blackhole-proxy-" + server.getLocalPort());
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** From now on, no byte passes and new connections are left hanging. */
    void blackhole() {
        blackholed = true;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket in = server.accept();
                sockets.add(in);
                if (blackholed) {
                    continue; // accepted, never answered
                }
                Socket out = new Socket(InetAddress.getLoopbackAddress(), target);
                sockets.add(out);
                pump(in.getInputStream(), out.getOutputStream());
                pump(out.getInputStream(), in.getOutputStream());
            } catch (IOException e) {
                // closed, or the server went away
            }
        }
    }

    private void pump(InputStream from, OutputStream to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = from.read(buf)) >= 0) {
                    if (!blackholed) {
                        to.write(buf, 0, n);
                        to.flush();
                    }
                }
            } catch (IOException e) {
                // a side closed
            }
        }, "blackhole-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
