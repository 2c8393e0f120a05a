package io.tiffin.core.cli;

import static io.tiffin.core.cli.CliRun.tiffin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.core.cli.CliRun.Result;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's habits: {@code stat --watch}, {@code --version} with the commit, shell completion, a node's admin
 * port that cannot be used.
 */
class OperatorCliTest {
    private static Tiffin tiffin;
    private static String master;

    @BeforeAll
    static void startCluster() {
        tiffin = Tiffin.embedded(TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build());
        master = "127.0.0.1:" + tiffin.master().address().getPort();
    }

    @AfterAll
    static void stopCluster() {
        tiffin.close();
    }


    @Test
    void aNodeWhoseAdminPortIsTakenFailsNamingTheFlagAndLeavesNoNodeBehind() throws IOException {
        int before = tiffin.master().service().segmentViews().size();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Result r = tiffin("node", "--master", master, "--segment-size", "16MiB", "--admin-port",
                    Integer.toString(taken.getLocalPort()));
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).startsWith("error: INVALID_PARAMS: --admin-port " + taken.getLocalPort()
                    + " (node.admin-port [flag --admin-port]) cannot be used on 127.0.0.1: ")
                    .contains("Choose another port with --admin-port");
        }
        assertThat(tiffin.master().service().segmentViews()).as("the node it started was stopped and unmounted")
                .hasSize(before);
    }

    @Test
    void statWatchRedrawsInPlaceUntilInterruptedAndSeesNewKeys() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        AtomicInteger exit = new AtomicInteger(-1);
        Thread watch = new Thread(() -> exit.set(TiffinCli.run(InputStream.nullInputStream(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream()),
                Map.of(), "stat", "--master", master, "--watch=0.2")));
        watch.start();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> out.toString(StandardCharsets.UTF_8)
                    .split(StatCommand.REDRAW.replace("[", "\\[")).length > 2);
            java.nio.file.Path value = java.nio.file.Files.createTempFile("watched", ".bin");
            java.nio.file.Files.write(value, new byte[] {1, 2, 3});
            Result put = tiffin("put", "--master", master, "watched", value.toString());
            assertThat(put.exit()).as(put.err()).isZero();
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                String s = out.toString(StandardCharsets.UTF_8);
                return s.substring(s.lastIndexOf(StatCommand.REDRAW)).contains("Keys:      1");
            });
            String s = out.toString(StandardCharsets.UTF_8);
            assertThat(s).startsWith(StatCommand.REDRAW).contains("Every 0.2 s; Ctrl-C to stop.");
        } finally {
            watch.interrupt();
            watch.join(10_000);
        }
        assertThat(exit.get()).isZero();
    }

    @Test
    void statWatchRefusesAnIntervalOutOfRange() {
        Result r = tiffin("stat", "--master", master, "--watch=0");
        assertThat(r.exit()).isEqualTo(TiffinCli.EXIT_USAGE);
        assertThat(r.err()).contains("--watch = 0.0 (expected: 0.1 to 3600 seconds)");
    }

    @Test
    void versionShowsTheBuildAndItsCommit() {
        Result r = tiffin("--version");
        assertThat(r.exit()).isZero();
        String[] lines = r.out().split("\n");
        assertThat(lines[0]).matches("Tiffin \\S+");
        BuildInfo build = BuildInfo.load();
        // the Maven build writes it; a commit id (12 hex digits, maybe -dirty) or "unknown" outside git
        assertThat(build.version()).isNotEqualTo("unknown");
        assertThat(build.commit()).matches("[0-9a-f]{12}(-dirty)?|unknown");
        assertThat(lines[1]).startsWith("build " + build.version() + ", commit " + build.commit());
    }

    @Test
    void bashCompletionCoversEveryCommandIncludingExtensions() {
        Result r = tiffin("generate-completion");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("complete -F _complete_tiffin")
                .contains("stat", "put", "get", "ls", "rm", "--watch");
        // bench (an extension in engine-bench, not on this module's class path) is checked in the tarball's smoke test
    }
}
