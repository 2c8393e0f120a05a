package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.PutOptions;
import io.tiffin.core.cli.TiffinCli;
import io.tiffin.core.client.TiffinClient;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's status page as a person sees it: a real cluster, the page loaded by headless Chromium (its
 * script run, the DOM dumped and a screenshot saved under {@code target/}), checked for the "no nodes yet"
 * message, one row per node and the utilization figure {@code tiffin stat} prints.
 */
class StatusPageBrowserTest {
    private static final long MiB = 1L << 20;

    @TempDir
    Path tmp;

    @Test
    void thePageShowsNoNodesYetThenEveryNodeAndTheUtilizationTiffinStatPrints() throws Exception {
        Path chromium = chromium();
        Assumptions.assumeTrue(chromium != null, "chromium is not installed (Debian: apt-get install chromium); "
                + ".ci/run installs it, so CI runs this test");
        try (TestCluster cluster = new TestCluster(Map.of(), 0, 0)) {
            String page = "http://127.0.0.1:" + cluster.master.adminAddress().getPort() + "/";

            String empty = dumpDom(chromium, page, "status-page-empty.png");
            assertThat(empty).contains("id=\"no-nodes\"").contains("No nodes yet");

            for (int i = 0; i < 3; i++) {
                cluster.addNode("node-" + i, 64 * MiB);
            }
            TiffinClient client = cluster.remoteClient();
            for (int i = 0; i < 40; i++) {
                client.put("page/" + i, TestCluster.randomBytes(1 << 20, i), PutOptions.DEFAULT);
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> cluster.master.service().liveNodes().size() == 3);
            String stat = tiffinStat(cluster.masterAddress());
            Matcher used = Pattern.compile("Used:\\s+.*\\((\\d+\\.\\d%)\\)").matcher(stat);
            assertThat(used.find()).as("tiffin stat prints the utilization:%n%s", stat).isTrue();

            String dom = dumpDom(chromium, page, "status-page.png");
            assertThat(dom).doesNotContain("id=\"no-nodes\"");
            List<String> nodeRows = all(dom, "<td class=\"mono node-id\">([^<]+)</td>");
            assertThat(nodeRows).containsExactlyInAnyOrder("node-0", "node-1", "node-2");
            assertThat(all(dom, "<span class=\"badge live\">(live)</span>")).hasSize(3);
            List<String> utilization = all(dom,
                    "id=\"utilization-card\"><div class=\"label\">Utilization</div><div class=\"value\">([^<]+)</div>");
            assertThat(utilization).containsExactly(used.group(1));
            assertThat(dom).contains("id=\"master-role\">leader</span>").contains("single master (no failover)");
            assertThat(Path.of("target", "status-page.png")).isNotEmptyFile();
        }
    }

    private String tiffinStat(String master) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TiffinCli.run(InputStream.nullInputStream(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), "stat", "--master", master);
        assertThat(exit).as("tiffin stat: %s", err.toString(StandardCharsets.UTF_8)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Loads {@code url} in headless Chromium, lets its script run, saves a screenshot and returns the DOM. */
    private String dumpDom(Path chromium, String url, String screenshot) throws Exception {
        Path target = Path.of("target").toAbsolutePath();
        Files.createDirectories(target);
        List<String> common = List.of(chromium.toString(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars", "--window-size=1400,1100", "--virtual-time-budget=4000");
        String dom = run(with(common, "--user-data-dir=" + Files.createTempDirectory(tmp, "profile"),
                "--dump-dom", url));
        run(with(common, "--user-data-dir=" + Files.createTempDirectory(tmp, "profile"),
                "--screenshot=" + target.resolve(screenshot), url));
        assertThat(dom).as("the page's script ran and loaded /api/status").contains("data-loaded=\"true\"");
        return dom;
    }

    private static List<String> with(List<String> common, String... more) {
        List<String> c = new ArrayList<>(common);
        c.addAll(List.of(more));
        return c;
    }

    private String run(List<String> command) throws Exception {
        Path log = Files.createTempFile(tmp, "chromium", ".log");
        Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("chromium ends").isTrue();
        assertThat(p.exitValue()).as("chromium: %s", Files.readString(log)).isZero();
        return new String(out, StandardCharsets.UTF_8);
    }

    private static List<String> all(String text, String regex) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    /** The Chromium binary, or null. */
    static Path chromium() {
        for (String name : List.of("chromium", "chromium-browser", "google-chrome")) {
            for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        return null;
    }
}
