package io.tiffin.core.metrics;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What the admin HTTP server answers: {@code /metrics}, {@code /health} and {@code /api/status} to those
 * {@link AdminAccess} lets in (401 with the rule otherwise), the status page at {@code /} and {@code /index.html}
 * to anyone, 405 for a method other than GET and HEAD and 404 for any other path. Paths match exactly; a query string is
 * ignored. Called on a worker thread: the endpoints' text may take a while to make.
 *
 * <p>Thread-safe (immutable; the suppliers must be thread-safe).
 */
final class AdminRoutes {
    private static final Logger LOG = LogManager.getLogger(AdminRoutes.class);

    private final AdminAccess access;
    /** The data endpoints: path → content type and text. */
    private final Map<String, Endpoint> endpoints;
    /** The status page, or null when the server has no status source. */
    private final byte[] page;

    private record Endpoint(String contentType, Supplier<String> body) {
    }

    AdminRoutes(AdminAccess access, Supplier<String> metrics, Supplier<String> health, Supplier<String> status) {
        this.access = access;
        Endpoint m = new Endpoint("text/plain; version=0.0.4; charset=utf-8", metrics);
        Endpoint h = new Endpoint("application/json", health);
        this.endpoints = status == null ? Map.of("/metrics", m, "/health", h)
                : Map.of("/metrics", m, "/health", h, "/api/status", new Endpoint("application/json", status));
        this.page = status == null ? null : StatusPage.html();
    }

    /**
     * The answer to a request for {@code uri} with {@code method}, carrying the {@code Authorization} header {@code
     * authorization} (null = none) over a connection whose verified client certificate has the common name {@code
     * certificateName} (null = none).
     */
    FullHttpResponse answer(HttpMethod method, String uri, String authorization, String certificateName) {
        String path = new QueryStringDecoder(uri).path();
        Endpoint endpoint = endpoints.get(path);
        if (endpoint != null) {
            if (!access.permits(authorization, certificateName)) {
                FullHttpResponse refused = text(HttpResponseStatus.UNAUTHORIZED, access.refusal() + "\n");
                refused.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"tiffin-admin\"");
                return refused;
            }
            if (!readOnly(method)) {
                return notAllowed();
            }
            byte[] body;
            try {
                body = endpoint.body().get().getBytes(StandardCharsets.UTF_8);
            } catch (RuntimeException e) {
                LOG.warn("Admin endpoint {} failed", path, e);
                return empty(HttpResponseStatus.INTERNAL_SERVER_ERROR);
            }
            FullHttpResponse ok = full(HttpResponseStatus.OK, body, endpoint.contentType());
            ok.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
            return ok;
        }
        if (page != null && ("/".equals(path) || "/index.html".equals(path))) {
            if (!readOnly(method)) {
                return notAllowed();
            }
            FullHttpResponse ok = full(HttpResponseStatus.OK, page, "text/html; charset=utf-8");
            ok.headers().set(HttpHeaderNames.CONTENT_SECURITY_POLICY, StatusPage.CONTENT_SECURITY_POLICY);
            return ok;
        }
        return empty(HttpResponseStatus.NOT_FOUND);
    }

    /** A plain-text answer of {@code status} saying {@code message}. */
    static FullHttpResponse text(HttpResponseStatus status, String message) {
        return full(status, message.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8");
    }

    /** GET, or HEAD (the same headers; Netty's codec leaves the body out). */
    private static boolean readOnly(HttpMethod method) {
        return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
    }

    private static FullHttpResponse notAllowed() {
        FullHttpResponse r = empty(HttpResponseStatus.METHOD_NOT_ALLOWED);
        r.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
        return r;
    }

    private static FullHttpResponse empty(HttpResponseStatus status) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return r;
    }

    private static FullHttpResponse full(HttpResponseStatus status, byte[] body, String contentType) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return r;
    }
}
