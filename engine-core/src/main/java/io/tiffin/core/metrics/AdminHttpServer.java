package io.tiffin.core.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The master's admin HTTP endpoint (default port 9003): {@code GET /metrics} (Prometheus text),
 * {@code GET /health} (JSON). Runs on its own small thread pool, never on a Netty event loop.
 *
 * <p>Thread-safe. Owns its server and executor; {@link #close()} stops both.
 */
public final class AdminHttpServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(AdminHttpServer.class);

    private final HttpServer server;
    private final ExecutorService executor;

    /**
     * Binds and starts the server.
     *
     * @param metrics text for /metrics
     * @param health JSON for /health
     */
    public AdminHttpServer(String host, int port, Supplier<String> metrics, Supplier<String> health) throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 16);
        executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "tiffin-admin-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> respond(ex, "text/plain; version=0.0.4; charset=utf-8", metrics));
        server.createContext("/health", ex -> respond(ex, "application/json", health));
        server.createContext("/", ex -> {
            ex.sendResponseHeaders(404, -1);
            ex.close();
        });
        server.start();
    }

    private static void respond(HttpExchange ex, String contentType, Supplier<String> body) throws IOException {
        try (ex) {
            if (!"GET".equals(ex.getRequestMethod())) {
                ex.sendResponseHeaders(405, -1);
                return;
            }
            byte[] bytes;
            try {
                bytes = body.get().getBytes(StandardCharsets.UTF_8);
            } catch (RuntimeException e) {
                LOG.warn("Admin endpoint {} failed", ex.getRequestURI(), e);
                ex.sendResponseHeaders(500, -1);
                return;
            }
            ex.getResponseHeaders().set("Content-Type", contentType);
            ex.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    public InetSocketAddress address() {
        return server.getAddress();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
