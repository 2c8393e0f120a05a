package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.transport.TestCertificates;
import io.tiffin.core.transport.TlsContexts;
import io.tiffin.core.util.ManualTicker;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The master's TLS metrics: when its certificate expires, and its reloads. */
class MasterMetricsTlsTest {
    @Test
    void theCertificatesExpiryAndTheReloadsAreExported(@TempDir Path dir) {
        TestCertificates certs = TestCertificates.create(dir);
        ManualTicker ticker = new ManualTicker();
        MasterMetrics metrics = new MasterMetrics(new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
                ticker, null), new ClientReports(ticker, 60_000));
        assertThat(metrics.scrape()).doesNotContain("tiffin_master_tls");

        TlsContexts tls = TlsContexts.load(certs.server.settings());
        metrics.registerTls(tls);
        String text = metrics.scrape();
        assertThat(value(text, "tiffin_master_tls_certificate_not_after_seconds"))
                .isEqualTo(tls.certificate().getNotAfter().getTime() / 1e3);
        assertThat(value(text, "tiffin_master_tls_reloads_total")).isZero();
        assertThat(value(text, "tiffin_master_tls_reload_failures_total")).isZero();
    }

    private static double value(String scrape, String name) {
        return scrape.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(
                l.substring(name.length() + 1).strip())).findFirst().orElseThrow(() -> new AssertionError(name
                + " is not exported:\n" + scrape));
    }
}
