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
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What the admin HTTP server answers: {@code /metrics}, {@code /health} and {@code /api/status} to those
 * {@link AdminAccess} lets in (401 with the rule otherwise), the status page at {@code /} and {@code /index.html}
 * to anyone, 405 for a method other than GET and HEAD and 404 for any other path; also the server's
 * {@link AdminEndpoint}s, as the three data endpoints. Paths match exactly; a query string is handed to the endpoint
 * (the three ignore it). Called on a worker thread: the endpoints' text may take a while to make.
 *
 * <p>Thread-safe (immutable; the suppliers must be thread-safe).
 */
final class AdminRoutes {
    private static final Logger LOG = LogManager.getLogger(AdminRoutes.class);

    private final AdminAccess access;
    /** The data endpoints by path. */
    private final Map<String, AdminEndpoint> endpoints;
    /** The status page, or null when the server has no status source. */
    private final byte[] page;

    /** {@code extra}: endpoints beyond the three (their paths must differ from them). */
    AdminRoutes(AdminAccess access, Supplier<String> metrics, Supplier<String> health, Supplier<String> status,
                Map<String, AdminEndpoint> extra) {
        this.access = access;
        Map<String, AdminEndpoint> all = new HashMap<>(extra);
        putNew(all, "/metrics", fixed("text/plain; version=0.0.4; charset=utf-8", metrics));
        putNew(all, "/health", fixed("application/json", health));
        if (status != null) {
            putNew(all, "/api/status", fixed("application/json", status));
        }
        this.endpoints = Map.copyOf(all);
        this.page = status == null ? null : StatusPage.html();
    }

    private static AdminEndpoint fixed(String contentType, Supplier<String> body) {
        return new AdminEndpoint(contentType, query -> AdminEndpoint.Answer.ok(body.get()));
    }

    private static void putNew(Map<String, AdminEndpoint> all, String path, AdminEndpoint endpoint) {
        if (all.putIfAbsent(path, endpoint) != null) {
            throw new IllegalArgumentException("admin endpoint " + path + " given twice");
        }
    }

    /**
     * The answer to a request for {@code uri} with {@code method}, carrying the {@code Authorization} header {@code
     * authorization} (null = none) over a connection whose verified client certificate has the common name {@code
     * certificateName} (null = none).
     */
    FullHttpResponse answer(HttpMethod method, String uri, String authorization, String certificateName) {
        QueryStringDecoder decoded = new QueryStringDecoder(uri);
        String path = decoded.path();
        AdminEndpoint endpoint = endpoints.get(path);
        if (endpoint != null) {
            if (!access.permits(authorization, certificateName)) {
                FullHttpResponse refused = text(HttpResponseStatus.UNAUTHORIZED, access.refusal() + "\n");
                refused.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"tiffin-admin\"");
                return refused;
            }
            if (!readOnly(method)) {
                return notAllowed();
            }
            AdminEndpoint.Answer answer;
            try {
                answer = endpoint.answer().apply(decoded.parameters());
            } catch (RuntimeException e) {
                LOG.warn("Admin endpoint {} failed", path, e);
                return empty(HttpResponseStatus.INTERNAL_SERVER_ERROR);
            }
            FullHttpResponse ok = full(HttpResponseStatus.valueOf(answer.status()),
                    answer.body().getBytes(StandardCharsets.UTF_8), endpoint.contentType());
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
