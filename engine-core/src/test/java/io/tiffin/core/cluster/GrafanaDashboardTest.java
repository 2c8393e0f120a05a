package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard shipped in the tarball ({@code conf/grafana/tiffin.json}) queries only metrics a
 * running cluster exports: every PromQL expression's {@code tiffin_*} names are looked up in the master's
 * {@code /metrics}.
 */
class GrafanaDashboardTest {
    static final Path DASHBOARD = Path.of("..", "distribution", "src", "conf", "grafana", "tiffin.json");
    private static final Pattern EXPR = Pattern.compile("\"(?:expr|query|definition)\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern METRIC = Pattern.compile("\\btiffin_[a-z0-9_]+");

    @Test
    void everyMetricTheDashboardQueriesIsExportedByARunningCluster() throws Exception {
        List<String> expressions = expressions(Files.readString(DASHBOARD));
        assertThat(expressions).hasSizeGreaterThan(20);
        Set<String> queried = new TreeSet<>();
        for (String e : expressions) {
            assertThat(balanced(e)).as("parentheses and braces of %s", e).isTrue();
            Matcher m = METRIC.matcher(e);
            while (m.find()) {
                queried.add(m.group());
            }
        }
        // what the issue asks the dashboard to show
        assertThat(queried).contains("tiffin_master_capacity_bytes", "tiffin_master_used_bytes",
                "tiffin_master_requests_total", "tiffin_master_request_duration_seconds_bucket",
                "tiffin_master_evicted_keys_total", "tiffin_master_offloads_in_flight",
                "tiffin_client_hotcache_hits_total", "tiffin_master_live_nodes",
                "tiffin_master_node_heartbeat_age_seconds");

        try (TestCluster cluster = new TestCluster(Map.of(), 1, 32L << 20);
             HttpClient http = HttpClient.newHttpClient()) {
            TiffinClient client = cluster.remoteClient();
            client.put("dash/a", new byte[4096], PutOptions.DEFAULT);
            assertThat(client.get("dash/a")).hasSize(4096);
            try {
                client.get("dash/missing"); // a failed request, so the failure counter has a sample
            } catch (TiffinException expected) {
                // OBJECT_NOT_FOUND
            }
            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + cluster.master.adminAddress().getPort() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Set<String> exported = new TreeSet<>();
            for (String line : metrics.split("\n")) {
                if (!line.isEmpty() && !line.startsWith("#")) {
                    exported.add(line.split("[{ ]", 2)[0]);
                }
            }
            assertThat(exported).as("metrics exported by the master").containsAll(queried);
        }
    }

    /** The PromQL of every panel target and template variable, JSON string escapes undone. */
    static List<String> expressions(String json) {
        List<String> out = new ArrayList<>();
        Matcher m = EXPR.matcher(json);
        while (m.find()) {
            out.add(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        return out;
    }

    private static boolean balanced(String e) {
        int round = 0;
        int curly = 0;
        int square = 0;
        boolean quoted = false;
        for (char c : e.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted) {
                round += c == '(' ? 1 : c == ')' ? -1 : 0;
                curly += c == '{' ? 1 : c == '}' ? -1 : 0;
                square += c == '[' ? 1 : c == ']' ? -1 : 0;
                if (round < 0 || curly < 0 || square < 0) {
                    return false;
                }
            }
        }
        return round == 0 && curly == 0 && square == 0 && !quoted;
    }
}
