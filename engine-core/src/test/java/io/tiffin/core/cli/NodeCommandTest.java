package io.tiffin.core.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code tiffin node}'s admin HTTP server ({@code --admin-port}) when it cannot listen. */
class NodeCommandTest {
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
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = TiffinCli.run(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream(), true,
                    StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), "node",
                    "--master", master, "--segment-size", "16MiB", "--admin-port",
                    Integer.toString(taken.getLocalPort()));
            assertThat(exit).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("error: INVALID_PARAMS: --admin-port "
                    + taken.getLocalPort() + " (node.admin-port [flag --admin-port]) cannot be used on 127.0.0.1: ")
                    .contains("Choose another port with --admin-port");
        }
        assertThat(tiffin.master().service().segmentViews()).as("the node it started was stopped and unmounted")
                .hasSize(before);
    }
}
