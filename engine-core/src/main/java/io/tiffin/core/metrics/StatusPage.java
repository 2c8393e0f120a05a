package io.tiffin.core.metrics;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The status page: one HTML file with its style and script inline ({@code status.html} beside this class),
 * which reads {@code /api/status} every few seconds.
 *
 * <p>Thread-safe (stateless).
 */
final class StatusPage {
    /** Everything the page needs is inline; it may only call back to this server. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'unsafe-inline'; "
            + "style-src 'unsafe-inline'; connect-src 'self'; img-src data:";

    private StatusPage() {
    }

    /** The page's bytes. */
    static byte[] html() {
        try (InputStream in = StatusPage.class.getResourceAsStream("status.html")) {
            if (in == null) {
                throw new IllegalStateException("status.html is missing from the engine-core jar");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
