package io.tiffin.core.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.tiffin.core.transport.ProtectedMode;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.transport.TransportSettings;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The master's admin HTTP endpoint (default port 9003): {@code GET /metrics} (Prometheus text),
 * {@code GET /health} (JSON), {@code GET /api/status} (the cluster at a glance, JSON) and {@code GET /}, the
 * status page that shows it (one HTML file from the jar, no external assets). The page itself holds no
 * cluster data and is served to anyone who can connect; its data comes from {@code /api/status}, which like
 * the other endpoints follows {@link AdminAccess}'s rule (the page asks for the token when refused). Runs on its own small thread pool, never on a Netty event loop. With
 * {@code transport.tls.enabled} it is HTTPS with the process's certificate (and client certificates as
 * {@code transport.tls.client-auth} says); who may use it is {@link AdminAccess}'s rule (a bearer token
 * when bound beyond loopback), and like the RPC server it refuses an address beyond loopback without
 * credentials ({@link ProtectedMode}).
 *
 * <p>Thread-safe. Owns its server and executor; {@link #close()} stops both.
 */
public final class AdminHttpServer implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(AdminHttpServer.class);

    private final HttpServer server;
    private final ExecutorService executor;
    private final AdminAccess access;

    /**
     * Binds and starts the server with the TLS and credentials of {@code transport}.
     *
     * @param metrics text for /metrics
     * @param health JSON for /health
     * @throws io.tiffin.api.TiffinException {@code INVALID_PARAMS} for an address beyond loopback without
     *     credentials, or TLS files that cannot be loaded
     */
    public AdminHttpServer(String host, int port, TransportSettings transport, Supplier<String> metrics,
                           Supplier<String> health) throws IOException {
        this(host, port, transport, metrics, health, null);
    }

    /**
     * As {@link #AdminHttpServer(String, int, TransportSettings, Supplier, Supplier)}, with {@code status} as the
     * JSON of {@code /api/status} and the status page at {@code /} (both absent when null).
     */
    public AdminHttpServer(String host, int port, TransportSettings transport, Supplier<String> metrics,
                           Supplier<String> health, Supplier<String> status) throws IOException {
        ProtectedMode.check("admin HTTP", host, port, transport);
        access = AdminAccess.of(host, transport);
        TlsContexts tls = TlsContexts.load(transport.tls());
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (tls == null) {
            server = HttpServer.create(address, 16);
        } else {
            SSLContext context = tls.jdkServerContext();
            HttpsServer https = HttpsServer.create(address, 16);
            https.setHttpsConfigurator(new HttpsConfigurator(context) {
                @Override
                public void configure(HttpsParameters params) {
                    javax.net.ssl.SSLParameters p = context.getDefaultSSLParameters();
                    tls.applyClientAuth(p);
                    params.setSSLParameters(p);
                }
            });
            server = https;
        }
        executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "tiffin-admin-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> respond(ex, "text/plain; version=0.0.4; charset=utf-8", metrics));
        server.createContext("/health", ex -> respond(ex, "application/json", health));
        byte[] page = status == null ? null : StatusPage.html();
        if (status != null) {
            server.createContext("/api/status", ex -> respond(ex, "application/json", status));
        }
        server.createContext("/", ex -> {
            try (ex) {
                String path = ex.getRequestURI().getPath();
                if (page == null || !("/".equals(path) || "/index.html".equals(path))) {
                    ex.sendResponseHeaders(404, -1);
                } else if (!"GET".equals(ex.getRequestMethod())) {
                    ex.sendResponseHeaders(405, -1);
                } else {
                    ex.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
                    ex.getResponseHeaders().set("Content-Security-Policy", StatusPage.CONTENT_SECURITY_POLICY);
                    ex.sendResponseHeaders(200, page.length);
                    try (OutputStream out = ex.getResponseBody()) {
                        out.write(page);
                    }
                }
            }
        });
        server.start();
        LOG.info("Admin {} on {}: {}", tls == null ? "HTTP" : "HTTPS", server.getAddress(), access);
    }

    private void respond(HttpExchange ex, String contentType, Supplier<String> body) throws IOException {
        try (ex) {
            if (!access.permits(ex.getRequestHeaders().getFirst("Authorization"))) {
                byte[] why = (access.refusal() + "\n").getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"tiffin-admin\"");
                ex.sendResponseHeaders(401, why.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(why);
                }
                return;
            }
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
            ex.getResponseHeaders().set("Cache-Control", "no-store");
            ex.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** Who may use the endpoints. */
    public AdminAccess access() {
        return access;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
