package io.tiffin.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code tiffin gateway} and {@code tiffin standalone --redis-port}, run in-process: they serve RESP on
 * the port given, stop on interruption, and a port in use stops start-up with a message naming the flag.
 */
class GatewayCommandTest {
    private static final Pattern GATEWAY_LINE = Pattern.compile(
            "Tiffin Redis gateway listening on 127\\.0\\.0\\.1:(\\d+) \\(RESP2/RESP3, store: master (\\S+)\\)");
    private static Tiffin tiffin;
    private static String master;

    @BeforeAll
    static void startCluster() {
        tiffin = Tiffin.embedded(TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "64MiB").build());
        master = "127.0.0.1:" + tiffin.master().address().getPort();
    }

    @AfterAll
    static void stopCluster() {
        tiffin.close();
    }

    /** A server command on its own thread, stopped by interrupting it. */
    private static final class Running {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final AtomicInteger exit = new AtomicInteger(-1);
        final Thread thread;

        Running(String marker, String... args) {
            thread = new Thread(() -> exit.set(TiffinCli.run(InputStream.nullInputStream(),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                    Map.of(), args)));
            thread.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> out().contains(marker) || !thread.isAlive());
        }

        String out() {
            return out.toString(StandardCharsets.UTF_8);
        }

        int stop() throws InterruptedException {
            thread.interrupt();
            thread.join(20_000);
            return exit.get();
        }
    }

    private static int run(ByteArrayOutputStream err, String... args) {
        return TiffinCli.run(InputStream.nullInputStream(), new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
    }

    /** Sends inline commands and reads {@code replyBytes} bytes of replies. */
    private static String resp(int port, String commands, int replyBytes) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(commands.getBytes(StandardCharsets.UTF_8));
            return new String(s.getInputStream().readNBytes(replyBytes), StandardCharsets.UTF_8);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void gatewayServesRespAndItsValuesAreTiffinsObjects() throws Exception {
        Running gateway = new Running("listening", "gateway", "--master", master, "--port", "0");
        Matcher m = GATEWAY_LINE.matcher(gateway.out().strip());
        assertThat(m.matches()).as(gateway.out() + gateway.err).isTrue();
        assertThat(m.group(2)).isEqualTo(master);
        int port = Integer.parseInt(m.group(1));
        assertThat(resp(port, "PING\r\nSET from-resp hello\r\nGET from-resp\r\n", 23))
                .isEqualTo("+PONG\r\n+OK\r\n$5\r\nhello\r\n");
        assertThat(tiffin.client().get("from-resp")).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
        assertThat(gateway.stop()).isZero();
        assertThat(gateway.out()).endsWith("Stopped.\n");
        assertThat(catchRefused(port)).as("the port is closed after the stop").isTrue();
    }

    private static boolean catchRefused(int port) {
        try (Socket ignored = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return false;
        } catch (IOException refused) {
            return true;
        }
    }

    @Test
    void aGatewayReachableFromOtherHostsWithoutAPasswordRefusesToStartUnlessInsecure() throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = run(err, "gateway", "--master", master, "--host", "0.0.0.0", "--port", "0");
        assertThat(exit).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .startsWith("error: INVALID_PARAMS: the Redis gateway refuses to listen on 0.0.0.0:0")
                .contains("transport.client-token").contains("--insecure");
        Running insecure = new Running("listening", "gateway", "--master", master, "--host", "0.0.0.0", "--port",
                "0", "--insecure");
        assertThat(insecure.out()).as(insecure.err.toString(StandardCharsets.UTF_8))
                .contains("Tiffin Redis gateway listening on 0.0.0.0:");
        assertThat(insecure.stop()).isZero();
        Running withPassword = new Running("listening", "gateway", "--set", "transport.client-token=s3cret",
                "--master", master, "--host", "0.0.0.0", "--port", "0");
        assertThat(withPassword.out()).as(withPassword.err.toString(StandardCharsets.UTF_8))
                .contains("Tiffin Redis gateway listening on 0.0.0.0:");
        assertThat(withPassword.stop()).isZero();
    }

    /**
     * With separate role tokens the gateway holds the client's: DEL and UNLINK remove at once even a key just read
     * (a forced removal of named keys is the client role's); FLUSHALL (REMOVE_ALL) stays the admin's. A gateway
     * beyond loopback without a password is refused by protected mode before it connects to the master, whose
     * refusal of a missing token would otherwise come first and not name --insecure.
     */
    @Test
    void withRoleTokensDelAndUnlinkRemoveKeysJustReadAndFlushallStaysTheAdmins() throws Exception {
        try (Tiffin guarded = Tiffin.embedded(TiffinConfig.builder().set("master.port", "0")
                .set("master.admin-port", "0").set("node.segment-size", "32MiB")
                .set("transport.client-token", "client-secret").set("transport.node-token", "node-secret")
                .set("transport.admin-token", "admin-secret").build())) {
            String guardedMaster = "127.0.0.1:" + guarded.master().address().getPort();
            Running gateway = new Running("listening", "gateway", "--master", guardedMaster, "--port", "0",
                    "--set", "transport.client-token=client-secret", "--set", "client.local-memcpy=false");
            Matcher m = GATEWAY_LINE.matcher(gateway.out().strip());
            assertThat(m.matches()).as(gateway.out() + gateway.err).isTrue();
            int port = Integer.parseInt(m.group(1));
            assertThat(resp(port, "AUTH client-secret\r\nSET k v\r\nGET k\r\nDEL k\r\nEXISTS k\r\n"
                    + "SET k2 v\r\nGET k2\r\nUNLINK k2 k3\r\nEXISTS k2\r\n", 45))
                    .isEqualTo("+OK\r\n+OK\r\n$1\r\nv\r\n:1\r\n:0\r\n+OK\r\n$1\r\nv\r\n:1\r\n:0\r\n");
            assertThat(resp(port, "AUTH client-secret\r\nFLUSHALL\r\n", 40))
                    .startsWith("+OK\r\n-ERR ILLEGAL_CLIENT");
            assertThat(gateway.stop()).isZero();

            ByteArrayOutputStream err = new ByteArrayOutputStream();
            assertThat(run(err, "gateway", "--master", guardedMaster, "--host", "0.0.0.0", "--port", "0")).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8))
                    .startsWith("error: INVALID_PARAMS: the Redis gateway refuses to listen on 0.0.0.0:0")
                    .contains("--insecure");
        }
    }

    /**
     * The settings are built once: protected mode judges the credentials the gateway then runs with (here the client
     * token of transport.tokens-file, read once), and startGateway takes them as they are.
     */
    @Test
    void theSettingsProtectedModeAcceptedAreTheOnesTheGatewayRunsWith(@org.junit.jupiter.api.io.TempDir
            java.nio.file.Path dir) throws Exception {
        java.nio.file.Path tokens = dir.resolve("tokens");
        java.nio.file.Files.writeString(tokens, "client=from-the-file\n");
        TiffinConfig config = TiffinConfig.builder().set("gateway.host", "0.0.0.0").set("gateway.port", "0")
                .set("transport.tokens-file", tokens.toString()).build();
        GatewayCommand.Prepared prepared = GatewayCommand.prepare(config);
        assertThat(prepared.settings().host()).isEqualTo("0.0.0.0");
        assertThat(prepared.settings().password()).isEqualTo("from-the-file");
        assertThat(prepared.tls().enabled()).isFalse();
        try (io.tiffin.core.gateway.GatewayServer gateway = GatewayCommand.startGateway(config, prepared,
                io.tiffin.core.gateway.TiffinGatewayStore.over(tiffin.client(), 1, master), "--port")) {
            int port = gateway.address().getPort();
            assertThat(resp(port, "PING\r\n", 34)).isEqualTo("-NOAUTH Authentication required.\r\n");
            assertThat(resp(port, "AUTH from-the-file\r\nPING\r\n", 12)).isEqualTo("+OK\r\n+PONG\r\n");
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayCommand.prepare(TiffinConfig.builder()
                .set("gateway.host", "0.0.0.0").build())).isInstanceOf(io.tiffin.api.TiffinException.class)
                .hasMessageContaining("the Redis gateway refuses to listen on 0.0.0.0:6379");
    }

    @Test
    void gatewayOnAPortInUseFailsNamingTheFlag() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = run(err, "gateway", "--master", master, "--port", Integer.toString(taken.getLocalPort()));
            assertThat(exit).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("error: INVALID_PARAMS: --port "
                    + taken.getLocalPort() + " (gateway.port [flag --port]) cannot be used on 127.0.0.1: ")
                    .contains("Choose another port with --port");
        }
    }

    @Test
    void standaloneServesRespOnItsRedisPort() throws Exception {
        int port = freePort();
        Running standalone = new Running("Ready.", "standalone", "--port", "0", "--admin-port", "0",
                "--segment-size", "16MiB", "--redis-port", Integer.toString(port));
        assertThat(standalone.out()).as(standalone.err.toString()).contains(
                "Tiffin Redis gateway listening on 127.0.0.1:" + port + " (RESP2/RESP3, store: master 127.0.0.1:");
        assertThat(resp(port, "SET k v\r\nGET k\r\n", 12)).isEqualTo("+OK\r\n$1\r\nv\r\n");
        assertThat(standalone.stop()).isZero();
    }

    @Test
    void standaloneWithRedisPortZeroServesNoResp() throws Exception {
        Running standalone = new Running("Ready.", "standalone", "--port", "0", "--admin-port", "0",
                "--segment-size", "16MiB", "--redis-port", "0");
        assertThat(standalone.out()).contains("Ready.").doesNotContain("Redis gateway");
        assertThat(standalone.stop()).isZero();
    }

    @Test
    void standaloneOnARedisPortInUseFailsNamingTheFlagAndStopsWhatItStarted() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int masterPort = freePort();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = run(err, "standalone", "--port", Integer.toString(masterPort), "--admin-port", "0",
                    "--segment-size", "16MiB", "--redis-port", Integer.toString(taken.getLocalPort()));
            assertThat(exit).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("error: INVALID_PARAMS: --redis-port "
                    + taken.getLocalPort() + " (gateway.port [flag --redis-port]) cannot be used on 127.0.0.1: ");
            assertThat(catchRefused(masterPort)).as("the master it started is stopped").isTrue();
        }
    }

    @Test
    void helpListsTheGateway() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        TiffinCli.run(InputStream.nullInputStream(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), Map.of(), "--help");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("gateway", "Redis-protocol");
    }
}
