package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.metrics.RecentErrors;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.ClientReport;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.junit.jupiter.api.Test;

/** {@code /api/status} from a master's parts on a manual clock: node states at 1,000 nodes, rates, caches, errors. */
class MasterStatusTest {
    private final ManualTicker ticker = new ManualTicker(1_000_000);
    private final MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER, ticker,
            null);
    private final ClientReports clients = new ClientReports(ticker, 60_000);
    private final MasterMetrics metrics = new MasterMetrics(master, clients);
    private final OpRates rates = new OpRates(metrics, master.counters(), ticker);
    private final MasterStatus status = new MasterStatus(master, clients, Leadership.alwaysLeader(), rates,
            RecentErrors.installed(), () -> "10.0.0.1:50051", false);

    @Test
    void aThousandNodesAreLiveLateOrExpiringByTheirLastHeartbeat() {
        for (int i = 0; i < 1000; i++) {
            master.mountSegment("seg-" + i, "node-" + i, "10.0.1." + (i % 250) + ":7000", 4L << 20);
        }
        ticker.advanceMillis(6_000); // past half the 10 s node TTL: silent nodes are late
        for (int i = 0; i < 900; i++) {
            master.ping("node-" + i);
        }
        String json = status.json();
        assertThat(count(json, "\"state\":\"live\"")).isEqualTo(900);
        assertThat(count(json, "\"state\":\"late\"")).isEqualTo(100);
        assertThat(json).contains("\"summary\":{\"nodes\":1000,\"segments\":1000,\"keys\":0,\"capacity_bytes\":"
                + (1000L * (4L << 20)) + ",\"used_bytes\":0,\"utilization\":0.0,\"utilization_text\":\"0.0%\"}");
        assertThat(json).contains("{\"id\":\"node-0\",\"state\":\"live\",\"last_heartbeat_ms_ago\":0,");
        assertThat(json).contains("{\"id\":\"node-999\",\"state\":\"late\",\"last_heartbeat_ms_ago\":6000,");

        ticker.advanceMillis(4_500); // the silent nodes' deadline passed; the liveness check has not run yet
        json = status.json();
        assertThat(count(json, "\"state\":\"live\"")).isEqualTo(900);
        assertThat(count(json, "\"state\":\"expiring\"")).isEqualTo(100);
        master.expireNodes();
        assertThat(count(status.json(), "\"state\":")).isEqualTo(900);
    }

    @Test
    void ratesArePerSecondOverTheWindowAndAbsentBeforeTwoSamples() {
        rates.sample();
        assertThat(status.json()).contains("\"rates\":null");
        for (int i = 0; i < 100; i++) {
            metrics.recordRequest(Opcode.PUT_START, 1000, true);
        }
        for (int i = 0; i < 30; i++) {
            metrics.recordRequest(Opcode.BATCH_GET_REPLICA_LIST, 1000, true);
        }
        ticker.advance(Duration.ofSeconds(2));
        rates.sample();
        assertThat(status.json()).contains("\"rates\":{\"window_s\":2.0,\"puts_per_s\":50.0,\"gets_per_s\":15.0,"
                + "\"removes_per_s\":0.0,\"evictions_per_s\":0.0,\"evicted_bytes_per_s\":0.0}");
        // samples older than the window drop out: no puts in the last 10 s, no put rate
        for (int i = 0; i < 12; i++) {
            ticker.advance(Duration.ofSeconds(1));
            rates.sample();
        }
        assertThat(status.json()).contains("\"window_s\":10.0,\"puts_per_s\":0.0");
    }

    @Test
    void hotCacheRatiosAreThoseClientsReportedOrNullWithoutReads() {
        assertThat(status.json()).contains("\"hot_cache\":{\"reporting_clients\":0,\"hits\":0,\"misses\":0,"
                + "\"hit_ratio\":null");
        clients.accept(ClientReport.newBuilder().setClientId("c1").setHits(30).setMisses(10).setCapacityBytes(1 << 20)
                .setBytesCached(4096).build());
        clients.accept(ClientReport.newBuilder().setClientId("c2").setHits(0).setMisses(10).setCapacityBytes(1 << 20)
                .build());
        String json = status.json();
        assertThat(json).contains("\"hot_cache\":{\"reporting_clients\":2,\"hits\":30,\"misses\":20,\"hit_ratio\":0.6,");
        assertThat(json).contains("{\"id\":\"c1\",\"hits\":30,\"misses\":10,\"hit_ratio\":0.75,");
        assertThat(json).contains("{\"id\":\"c2\",\"hits\":0,\"misses\":10,\"hit_ratio\":0.0,");
    }

    @Test
    void warningsAreListedNewestFirstWithTheirMessageEscaped() {
        LogManager.getLogger("io.tiffin.core.master.MasterStatusTest").warn("first <warning> \"quoted\"");
        LogManager.getLogger("io.tiffin.core.master.MasterStatusTest").error("then an error",
                new IllegalStateException("why"));
        String json = status.json();
        int error = json.indexOf("\"message\":\"then an error (java.lang.IllegalStateException: why)\"");
        int warning = json.indexOf("\"message\":\"first \\u003cwarning\\u003e \\\"quoted\\\"\"");
        assertThat(error).isPositive();
        assertThat(warning).isGreaterThan(error);
        assertThat(json).contains("\"errors\":{\"captured\":true,");
    }

    private static int count(String text, String literal) {
        Matcher m = Pattern.compile(Pattern.quote(literal)).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
