package io.tiffin.core.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The Prometheus text exposition of a registry, as the admin HTTP servers' {@code /metrics} answer it.
 *
 * <p>Thread-safe (stateless).
 */
public final class PrometheusText {
    private PrometheusText() {
    }

    /** Every metric of {@code registry}, scraped now. */
    public static String of(PrometheusRegistry registry) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
