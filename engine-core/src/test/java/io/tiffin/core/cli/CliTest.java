package io.tiffin.core.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.tiffin.core.Tiffin;
import io.tiffin.core.client.CacheCounters;
import io.tiffin.core.client.ClusterStats;
import io.tiffin.core.config.TiffinConfig;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs {@link TiffinCli} in-process against an embedded cluster. */
class CliTest {
    private static Tiffin tiffin;
    private static String master;

    @TempDir
    Path dir;

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

    /** The outcome of one command line. */
    record Result(int exit, byte[] outBytes, String err) {
        String out() {
            return new String(outBytes, StandardCharsets.UTF_8);
        }
    }

    private static Result tiffin(InputStream in, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TiffinCli.run(in, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), args);
        return new Result(exit, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    private static Result tiffin(String... args) {
        return tiffin(InputStream.nullInputStream(), args);
    }

    /** A long-running command (master, node) on its own thread, stopped by interrupting it. */
    private static final class Running {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final AtomicInteger exit = new AtomicInteger(-1);
        final Thread thread;

        /** Starts {@code args} and waits up to 20 s until its output contains {@code marker}. */
        Running(String marker, String... args) {
            thread = new Thread(() -> exit.set(TiffinCli.run(InputStream.nullInputStream(),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                    Map.of(), args)));
            thread.start();
            // A command that ends early (an error) is left to the caller's assertions on its output.
            await("the output of " + String.join(" ", args) + " to contain " + marker).atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(20)).until(() -> out().contains(marker) || !thread.isAlive());
        }

        String out() {
            return out.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return err.toString(StandardCharsets.UTF_8);
        }

        /** Interrupts the command and returns its exit code. */
        int stop() throws InterruptedException {
            thread.interrupt();
            thread.join(10_000);
            return exit.get();
        }
    }

    @Test
    void putFromFileThenGetToFileGivesTheSameBytes() throws IOException {
        byte[] data = new byte[300_000];
        new Random(7).nextBytes(data);
        Path src = dir.resolve("src.bin");
        Files.write(src, data);

        Result put = tiffin("put", "--master", master, "--replicas", "1", "file-key", src.toString());
        assertThat(put.exit()).as(put.err()).isZero();
        assertThat(put.out()).isEqualTo("OK put file-key (300000 bytes)\n");

        Path dst = dir.resolve("dst.bin");
        Result get = tiffin("get", "--master", master, "file-key", dst.toString());
        assertThat(get.exit()).as(get.err()).isZero();
        assertThat(get.out()).isEqualTo("OK get file-key (300000 bytes) to " + dst + "\n");
        assertThat(Files.readAllBytes(dst)).isEqualTo(data);
    }

    @Test
    void putWithATtlGivesTheObjectADeadlineAndABadTtlIsAUsageError() {
        Result put = tiffin(new ByteArrayInputStream(new byte[] {1, 2}), "put", "--master", master, "--ttl", "10m",
                "ttl-key", "-");
        assertThat(put.exit()).as(put.err()).isZero();
        assertThat(tiffin.master().service().expire("ttl-key", 0, 0).value()).as("its time to live, ms")
                .isBetween(590_000L, 600_000L);
        for (String bad : new String[] {"0", "-5s", "soon"}) {
            Result refused = tiffin(new ByteArrayInputStream(new byte[] {1}), "put", "--master", master, "--ttl", bad,
                    "ttl-bad", "-");
            assertThat(refused.exit()).as("--ttl %s", bad).isEqualTo(2);
            assertThat(refused.err()).as("--ttl %s", bad).contains("--ttl = " + bad);
        }
    }

    @Test
    void putFromStdinThenGetToStdoutWritesOnlyTheBytes() {
        byte[] data = "hello from stdin\n".getBytes(StandardCharsets.UTF_8);
        Result put = tiffin(new ByteArrayInputStream(data), "put", "--master", master, "stdin-key", "-");
        assertThat(put.exit()).as(put.err()).isZero();
        assertThat(put.out()).isEqualTo("OK put stdin-key (17 bytes)\n");

        Result get = tiffin("get", "--master", master, "stdin-key");
        assertThat(get.exit()).as(get.err()).isZero();
        assertThat(get.outBytes()).isEqualTo(data);
        assertThat(get.err()).isEmpty();
    }

    @Test
    void putOfAnExistingKeyKeepsTheStoredValueAndSaysSo() {
        tiffin(new ByteArrayInputStream(new byte[] {1, 2, 3}), "put", "--master", master, "kept", "-");
        Result again = tiffin(new ByteArrayInputStream(new byte[] {9}), "put", "--master", master, "kept", "-");
        assertThat(again.exit()).isZero();
        assertThat(again.out()).contains("already exists; kept the stored value (3 bytes)");
        assertThat(tiffin("get", "--master", master, "kept").outBytes()).containsExactly(1, 2, 3);
    }

    /** A stdout that cannot take the bytes (a full disk behind a redirect): a failure, not exit 0. */
    @Test
    void getToAStandardOutputThatFailsExitsWithFileWriteFail() {
        assertThat(tiffin(new java.io.ByteArrayInputStream(new byte[5000]), "put", "--master", master, "big-out", "-")
                .exit()).isZero();
        java.io.OutputStream full = new java.io.OutputStream() {
            private int room = 1000;

            @Override
            public void write(int b) throws IOException {
                if (room-- <= 0) {
                    throw new IOException("No space left on device");
                }
            }
        };
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = TiffinCli.run(InputStream.nullInputStream(), new PrintStream(full, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of(), "get", "--master", master, "big-out");
        assertThat(exit).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("FILE_WRITE_FAIL").contains("output is incomplete");
    }

    /** Plugin settings a plugin refuses are reported as what to fix, not as a page of Guice wiring errors. */
    @Test
    void pluginSettingsThatDoNotWorkAreReportedWithoutAStackTrace() {
        Result noPath = tiffin("node", "--master", master, "--segment-size", "16MiB", "--storage-backend", "bucket");
        Result noSuchBackend = tiffin("node", "--master", master, "--segment-size", "16MiB", "--storage-backend", "nosuch",
                "--storage-path", dir.toString());
        Result noSuchPolicy = tiffin("get", "--master", master, "-D", "hotcache.size=64MiB", "-D", "hotcache.policy=nosuch",
                "some-key");
        for (Result r : List.of(noPath, noSuchBackend, noSuchPolicy)) {
            assertThat(r.exit()).as(r.err()).isNotZero();
            assertThat(r.err()).doesNotContain("com.google.inject").doesNotContain("\tat ");
        }
        assertThat(noPath.err()).contains("INVALID_PARAMS").contains("path");
        assertThat(noSuchBackend.err()).contains("node.storage-backend = nosuch: no such storage backend");
        assertThat(noSuchPolicy.err()).contains("hotcache.policy = nosuch");
        // --storage-path picks bucket only where nothing else named a backend: a -D (or file) setting stands
        Result setElsewhere = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(30),
                () -> tiffin("node", "--master", master, "--segment-size", "16MiB", "-D", "node.storage-backend=nosuch",
                        "--storage-path", dir.toString()), "a node started with the bucket backend instead");
        assertThat(setElsewhere.exit()).isNotZero();
        assertThat(setElsewhere.err()).contains("node.storage-backend = nosuch: no such storage backend");
    }

    @Test
    void severalConfigFilesAreReadInOrderAndTheLaterWins() throws IOException {
        Path first = dir.resolve("first.properties");
        Path second = dir.resolve("second.properties");
        Files.writeString(first, "master.address = 127.0.0.1:1\n");
        Files.writeString(second, "master.address = " + master + "\n");
        assertThat(tiffin("ls", "--config", first.toString(), "--config", second.toString()).exit()).isZero();
        Result wrong = tiffin("ls", "--config", second.toString(), "--config", first.toString());
        assertThat(wrong.exit()).as("the first file's unreachable master wins now").isNotZero();
    }

    @Test
    void pluginsListsWhatIsInstalledAndAMissingFolderIsAnError() {
        Result r = tiffin("plugins");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("Allocation strategies (allocation.strategy):").contains("  random  from ")
                .contains("Storage backends (node.storage-backend):").contains("  bucket  from ")
                .contains("Hot cache policies (hotcache.policy):").contains("  lru  from ");
        assertThat(r.out()).as("each name with the keys it reads")
                .contains("  random  from allocation  settings: none")
                .contains("  s3-fifo  from hotcache  settings: hotcache.policy.s3-fifo.small-share")
                .contains("  bucket  from bucket-storage  settings: storage.bucket.bucket-max-bytes,"
                        + " storage.bucket.bucket-max-keys, storage.bucket.capacity");

        Result missing = tiffin("plugins", "-D", "plugins.dir=" + dir.resolve("no-such-folder"));
        assertThat(missing.exit()).isNotZero();
        assertThat(missing.err()).contains("plugins.dir = ").contains("is not a directory");
    }

    @Test
    void getOfAMissingKeyFailsWithObjectNotFoundAndAHint() {
        Result r = tiffin("get", "--master", master, "no-such-key");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.outBytes()).isEmpty();
        assertThat(r.err()).isEqualTo("error: OBJECT_NOT_FOUND: key no-such-key\n"
                + "hint: no object has this key; check the key or put it first\n");
    }

    @Test
    void rmRemovesTheKey() {
        tiffin(new ByteArrayInputStream(new byte[] {42}), "put", "--master", master, "doomed", "-");
        Result rm = tiffin("rm", "--master", master, "doomed");
        assertThat(rm.exit()).as(rm.err()).isZero();
        assertThat(rm.out()).isEqualTo("OK removed doomed\n");

        Result get = tiffin("get", "--master", master, "doomed");
        assertThat(get.exit()).isEqualTo(1);
        assertThat(get.err()).contains("OBJECT_NOT_FOUND");
        assertThat(tiffin("rm", "--master", master, "doomed").err()).contains("OBJECT_NOT_FOUND");
    }

    @Test
    void rmOfAKeyReadJustNowNeedsForce() {
        tiffin(new ByteArrayInputStream(new byte[] {1}), "put", "--master", master, "leased", "-");
        assertThat(tiffin("get", "--master", master, "leased").exit()).isZero();

        Result rm = tiffin("rm", "--master", master, "leased");
        assertThat(rm.exit()).isEqualTo(1);
        assertThat(rm.err()).startsWith("error: OBJECT_HAS_LEASE: key leased holds a read lease").contains("--force");

        Result forced = tiffin("rm", "--master", master, "--force", "leased");
        assertThat(forced.exit()).as(forced.err()).isZero();
        assertThat(forced.out()).isEqualTo("OK removed leased\n");
    }

    @Test
    void lsListsTheKeysWithThePrefixSortedWithSizes() {
        tiffin(new ByteArrayInputStream(new byte[10]), "put", "--master", master, "ls/b", "-");
        tiffin(new ByteArrayInputStream(new byte[5]), "put", "--master", master, "ls/a", "-");
        tiffin(new ByteArrayInputStream(new byte[1]), "put", "--master", master, "other", "-");

        Result ls = tiffin("ls", "--master", master, "ls/");
        assertThat(ls.exit()).as(ls.err()).isZero();
        assertThat(ls.out()).isEqualTo("ls/a\t5\nls/b\t10\n");
        assertThat(ls.err()).isEmpty();

        Result limited = tiffin("ls", "--master", master, "--limit", "1", "ls/");
        assertThat(limited.out()).isEqualTo("ls/a\t5\n");
        assertThat(limited.err()).contains("more exist");
    }

    @Test
    void statSummarisesTheClientsCaches() {
        var none = new ClusterStats("", 0, 0, 0, 0, List.of(), 0, ClusterStats.CacheTotals.NONE);
        assertThat(StatCommand.format("m:1", none)).contains("Hot cache: no client with a hot cache")
                .doesNotContain("Location cache");
        var totals = new CacheCounters(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, 30, 10, 2);
        var both = new ClusterStats("", 0, 0, 0, 0, List.of(), 0, new ClusterStats.CacheTotals(0, 2, totals));
        assertThat(StatCommand.format("m:1", both))
                .contains("Location cache: 2 clients; hits 30, misses 10 (75.0% hit), refused 2");
    }

    @Test
    void statShowsTheSegmentAndTotals() {
        Result stat = tiffin("stat", "--master", master);
        assertThat(stat.exit()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("Master:    " + master).contains("Nodes:     1 live")
                .contains(tiffin.node().segmentName()).contains(tiffin.node().endpoint()).contains("64.0 MiB")
                .contains("Keys:").contains("Used:").contains("Evicted:");
    }

    @Test
    void masterAddressMayComeFromTheConfiguration() throws IOException {
        Path conf = dir.resolve("tiffin.properties");
        Files.writeString(conf, "master.address=" + master + "\n");
        assertThat(tiffin("stat", "--config", conf.toString()).exit()).isZero();
        assertThat(tiffin("stat", "-D", "master.address=" + master).exit()).isZero();
        assertThat(tiffin("stat", "--set", "master.address=" + master).exit()).isZero();
    }

    @Test
    void unknownConfigKeyIsAConfigurationErrorNamingTheKey() {
        Result r = tiffin("stat", "--master", master, "-D", "nope=1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: INVALID_PARAMS: ").contains("unknown key nope").contains("\nhint: ");
    }

    @Test
    void everyConfigurationProblemIsPrinted() {
        Result r = tiffin("stat", "--master", "not-an-address", "-D", "master.lease-ttl=soon");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("2 problems").contains("master.address").contains("flag --master")
                .contains("master.lease-ttl");
    }

    @Test
    void wronglyTypedFlagIsAUsageError() {
        Result r = tiffin("put", "--master", master, "--replicas", "abc", "k", "-");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: INVALID_PARAMS: ").contains("--replicas").contains("abc")
                .contains("hint: run 'tiffin put --help'");
        assertThat(tiffin("put", "--master", master, "--replicas", "0", "k", "-").exit()).isEqualTo(2);
    }

    @Test
    void missingArgumentsAndUnknownCommandsAreUsageErrors() {
        assertThat(tiffin("get", "--master", master).exit()).isEqualTo(2);
        assertThat(tiffin("frobnicate").exit()).isEqualTo(2);
        assertThat(tiffin().exit()).isEqualTo(2);
        // tiffin bench comes from the engine-bench jar (BenchCliExtension), which engine-core's tests do not see
        Result bench = tiffin("bench");
        assertThat(bench.exit()).isEqualTo(2);
        assertThat(bench.err()).contains("'bench'");
    }

    @Test
    void putOfAMissingFileFailsWithFileNotFound() {
        Result r = tiffin("put", "--master", master, "k", dir.resolve("absent").toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: FILE_NOT_FOUND: ").contains("absent");
    }

    @Test
    void putOfAnEmptyInputFailsBeforeStoring() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty"));
        Result r = tiffin("put", "--master", master, "empty-key", empty.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: INVALID_PARAMS: FILE " + empty + " is empty");
        assertThat(tiffin("put", "--master", master, "empty-key", "-").err()).contains("standard input is empty");
    }

    /**
     * FILE may be a file with no size to map: a FIFO (as `<(cmd)` gives), /proc's files; its bytes are read. A
     * directory is said to be one.
     */
    @Test
    void putReadsFifosAndProcFilesAndRefusesDirectories() throws Exception {
        Path fifo = dir.resolve("fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor()).isZero();
        Thread writer = Thread.ofVirtual().start(() -> {
            try {
                Files.writeString(fifo, "through a pipe");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Result r = tiffin("put", "--master", master, "from-fifo", fifo.toString());
        writer.join(10_000);
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("OK put from-fifo (14 bytes)\n");
        assertThat(tiffin("get", "--master", master, "from-fifo").out()).isEqualTo("through a pipe");

        Result proc = tiffin("put", "--master", master, "from-proc", "/proc/version");
        assertThat(proc.exit()).as(proc.err()).isZero();
        assertThat(tiffin("get", "--master", master, "from-proc").out())
                .isEqualTo(Files.readString(Path.of("/proc/version")));

        Result directory = tiffin("put", "--master", master, "from-dir", dir.toString());
        assertThat(directory.exit()).isEqualTo(1);
        assertThat(directory.err()).startsWith("error: FILE_READ_FAIL: FILE " + dir + " is a directory");
    }

    /** A key over master.max-key-length is refused in a line that names the limit, not with the key echoed whole. */
    @Test
    void aKeyOverTheLengthLimitIsRefusedInALineNamingTheLimit() throws IOException {
        Path one = Files.write(dir.resolve("one-byte"), new byte[] {1});
        String key = "k".repeat(100_000);
        Result r = tiffin("put", "--master", master, key, one.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: INVALID_KEY: ").contains("master.max-key-length").contains("100000 chars");
        assertThat(r.err().length()).as(r.err()).isLessThan(1_000);
        Result get = tiffin("get", "--master", master, key);
        assertThat(get.exit()).isEqualTo(1);
        assertThat(get.err().length()).as(get.err()).isLessThan(1_000);
    }

    @Test
    void aMasterBeyondLoopbackWithoutCredentialsRefusesToStartUnlessInsecure() throws Exception {
        Result r = tiffin("master", "--host", "0.0.0.0", "--port", "0", "--admin-port", "0");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: INVALID_PARAMS: server master refuses to listen on 0.0.0.0:0")
                .contains("transport.auth-token").contains("transport.tls.client-auth = require")
                .contains("--insecure");
        // node.host must be an address others can dial (not a wildcard): this machine's first non-loopback one
        String reachable = java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
                .filter(a -> a instanceof java.net.Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress())
                .map(java.net.InetAddress::getHostAddress).findFirst().orElseThrow(() -> new AssertionError(
                        "this test needs a non-loopback IPv4 address on the machine"));
        Result node = tiffin("node", "--host", reachable, "--port", "0", "--master", "127.0.0.1:1");
        assertThat(node.exit()).as(node.err()).isEqualTo(1);
        assertThat(node.err()).contains("refuses to listen on " + reachable).contains("--insecure");
        Running insecure = new Running("Tiffin master listening", "master", "--host", "0.0.0.0", "--port", "0",
                "--admin-port", "0", "--insecure");
        assertThat(insecure.out()).contains("Tiffin master listening on 0.0.0.0:");
        assertThat(insecure.stop()).isZero();
        Running withToken = new Running("Tiffin master listening", "master", "--host", "0.0.0.0", "--port", "0",
                "--admin-port", "0", "-D", "transport.auth-token=s3cret");
        assertThat(withToken.out()).contains("Tiffin master listening on 0.0.0.0:");
        assertThat(withToken.stop()).isZero();
    }

    @Test
    void removingEverythingTakesTheAdminTokenAndForcingOutAKeyTheClients() {
        try (Tiffin guarded = Tiffin.embedded(TiffinConfig.builder().set("master.port", "0")
                .set("master.admin-port", "0").set("node.segment-size", "32MiB")
                .set("transport.client-token", "client-secret").set("transport.node-token", "node-secret")
                .set("transport.admin-token", "admin-secret").build())) {
            String m = "127.0.0.1:" + guarded.master().address().getPort();
            // over the network, as from another process (a client in the master's JVM calls it directly)
            String[] client = {"--master", m, "-D", "client.local-memcpy=false", "-D", "transport.client-token=client-secret"};
            Result put = tiffin(new java.io.ByteArrayInputStream(new byte[100]), concat(new String[] {"put"}, client,
                    new String[] {"kept", "-"}));
            assertThat(put.exit()).as(put.err()).isZero();
            Result all = tiffin(concat(new String[] {"rm", "--all"}, client));
            assertThat(all.exit()).isEqualTo(1);
            assertThat(all.err()).startsWith("error: ILLEGAL_CLIENT: ").contains("REMOVE_ALL needs the admin role")
                    .contains("connect with transport.admin-token");
            // a forced removal of a key is the client's (as an upsert of it is)
            Result forcedPut = tiffin(new java.io.ByteArrayInputStream(new byte[100]), concat(new String[] {"put"},
                    client, new String[] {"forced", "-"}));
            assertThat(forcedPut.exit()).as(forcedPut.err()).isZero();
            Result forced = tiffin(concat(new String[] {"rm", "--force"}, client, new String[] {"forced"}));
            assertThat(forced.exit()).as(forced.err()).isZero();
            assertThat(forced.out()).isEqualTo("OK removed forced\n");
            Result usage = tiffin(concat(new String[] {"rm"}, client));
            assertThat(usage.exit()).isEqualTo(2);
            assertThat(usage.err()).contains("rm needs a KEY, or --all");
            Result admin = tiffin(concat(new String[] {"rm", "--all", "-D", "transport.admin-token=admin-secret"},
                    client));
            assertThat(admin.exit()).as(admin.err()).isZero();
            assertThat(admin.out()).isEqualTo("OK removed 1 object\n");
        }
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }

    @Test
    void masterOnAPortInUseFailsNamingTheAddress() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Result r = tiffin("master", "--port", Integer.toString(taken.getLocalPort()), "--admin-port", "0");
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).startsWith("error: INVALID_PARAMS: server master cannot listen on 127.0.0.1:"
                    + taken.getLocalPort());
        }
    }

    @Test
    void unreachableMasterFailsWithRpcFailNamingTheAddress() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Result r = tiffin("stat", "--master", "127.0.0.1:" + port);
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).startsWith("error: RPC_FAIL: ").contains("127.0.0.1:" + port).contains("\nhint: ")
                .doesNotContain("\tat ");
    }

    @Test
    void eachBuiltInCommandIsFoundByItsNameAndTheHelpListsThemAll() {
        Result help = tiffin("--help");
        for (Class<?> c : TiffinCli.COMMANDS) {
            picocli.CommandLine.Command command = c.getAnnotation(picocli.CommandLine.Command.class);
            assertThat(TiffinCli.builtIn(command.name())).isEqualTo(c);
            if (!command.hidden()) {
                assertThat(help.out()).contains("  " + command.name() + " ");
            }
        }
        assertThat(help.out()).contains("generate-completion");
        assertThat(TiffinCli.builtIn("frobnicate")).isNull();
        assertThat(TiffinCli.builtIn("--help")).isNull();
    }

    @Test
    void aMistypedCommandIsAUsageErrorSuggestingTheBuiltInOne() {
        Result r = tiffin("stta", "--master", master);
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("'stta'").contains("stat");
    }

    @Test
    void theCommandFactoryOpensPackagePrivateCommandsAndLeavesTheRestToPicocli() throws Exception {
        assertThat(CommandFactory.INSTANCE.create(StatCommand.class)).isInstanceOf(StatCommand.class);
        assertThat(CommandFactory.INSTANCE.create(java.util.List.class)).isInstanceOf(java.util.ArrayList.class);
        assertThat(CommandFactory.INSTANCE.create(StringBuilder.class)).isInstanceOf(StringBuilder.class);
    }

    @Test
    void helpAndVersionSucceed() {
        Result help = tiffin("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).contains("standalone", "master", "node", "put", "get", "rm", "ls", "stat", "plugins");
        assertThat(tiffin("--version").out()).startsWith("Tiffin ");
    }

    @Test
    void masterCommandPrintsItsListenerAndStopsWhenInterrupted() throws Exception {
        Running master = new Running("listening", "master", "--port", "0", "--admin-port", "0");
        assertThat(master.out()).as(master.err())
                .matches("(?s)Tiffin master listening on 127\\.0\\.0\\.1:\\d+ \\(admin http://127\\.0\\.0\\.1:\\d+/metrics\\)\n");
        assertThat(master.stop()).isZero();
        assertThat(master.out()).endsWith("Stopped.\n");
    }

    /**
     * A configuration file shared by a master and its nodes names the nodes' SSD backend and its settings, each node
     * giving its own --storage-path: the master starts (it refused to: "node.storage-backend = bucket needs
     * node.storage-path").
     */
    @Test
    void aMasterStartsWithAConfigurationFileSharedWithItsNodes() throws Exception {
        Path conf = Files.writeString(dir.resolve("shared.properties"),
                "node.storage-backend=bucket\nstorage.bucket.capacity=1GiB\nmaster.lease-ttl=5s\n");
        Running master = new Running("listening", "master", "--port", "0", "--admin-port", "0", "--config",
                conf.toString());
        assertThat(master.out()).as(master.err()).contains("Tiffin master listening on");
        assertThat(master.stop()).isZero();
    }

    @Test
    void nodeCommandWithAStoragePathJoinsWithAnSsdTier() throws Exception {
        long before = tiffin.master().service().ssdTier().ssdCapacityBytes();
        Running node = new Running("Tiffin node", "node", "--master", master, "--segment-size", "16MiB",
                "--storage-path", dir.resolve("ssd").toString());
        assertThat(node.out()).as(node.err()).contains("Tiffin node");
        assertThat(tiffin.master().service().ssdTier().ssdCapacityBytes()).isGreaterThan(before);
        assertThat(dir.resolve("ssd")).isDirectory();
        assertThat(node.stop()).isZero();
    }

    /** The SSD tier's part of the standalone's {@code /api/status}, through the admin address it printed. */
    private static String ssdStatus(Running standalone) throws Exception {
        java.util.regex.Matcher admin = java.util.regex.Pattern.compile("admin (http://[0-9.:]+)/metrics")
                .matcher(standalone.out());
        assertThat(admin.find()).as(standalone.out()).isTrue();
        try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
            String body = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(admin.group(1)
                    + "/api/status")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            return body.substring(body.indexOf("\"ssd\""));
        }
    }

    @Test
    void standaloneWithAStoragePathRunsAnSsdTierBehindItsMemory() throws Exception {
        Running standalone = new Running("Ready.", "standalone", "--port", "0", "--admin-port", "0",
                "--redis-port", "0", "--segment-size", "16MiB", "--storage-path", dir.resolve("alone").toString());
        assertThat(standalone.out()).as(standalone.err()).contains("Ready.");
        assertThat(ssdStatus(standalone)).contains("\"offload_mode\":\"on-evict\"");
        assertThat(dir.resolve("alone").resolve("node.id")).isRegularFile();
        assertThat(standalone.stop()).isZero();

        Running chosen = new Running("Ready.", "standalone", "--port", "0", "--admin-port", "0", "--redis-port", "0",
                "--segment-size", "16MiB", "--storage-path", dir.resolve("alone").toString(),
                "-D", "offload.mode=write-through");
        assertThat(ssdStatus(chosen)).as("a mode set elsewhere is kept").contains("\"offload_mode\":\"write-through\"");
        assertThat(chosen.stop()).isZero();
    }

    @Test
    void nodeCommandWithASharedMemoryDirKeepsItsSegmentThereAndSaysSo() throws Exception {
        Path shm = Files.createDirectory(dir.resolve("shm"));
        Running node = new Running("Tiffin node", "node", "--master", master, "--segment-size", "16MiB",
                "--shared-memory-dir", shm.toString());
        assertThat(node.out()).as(node.err()).contains("Tiffin node", ", shared memory " + shm);
        try (var files = Files.list(shm)) {
            assertThat(files.toList()).singleElement().satisfies(f -> assertThat(Files.size(f))
                    .as("the segment and its mount epoch page").isEqualTo((16L << 20) + 4096));
        }
        assertThat(node.stop()).isZero();
        try (var files = Files.list(shm)) {
            assertThat(files.toList()).as("deleted when the node stops").isEmpty();
        }
    }

    @Test
    void nodeCommandWithAnUnreachableMasterStartsAndMountsOnceTheMasterIsUp() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        // a node serves its data plane (reads of what it holds) while no master is reachable, and mounts later
        Running node = new Running("Tiffin node", "node", "--master", "127.0.0.1:" + port, "--segment-size", "16MiB",
                "-D", "node.ping-interval=100ms");
        assertThat(node.out()).as(node.err()).contains("Tiffin node");
        try (io.tiffin.core.master.MasterServer later = io.tiffin.core.master.MasterServer.start(
                new io.tiffin.core.master.MasterServer.Options("127.0.0.1", port, -1, 1,
                        io.tiffin.core.master.MasterSettings.defaults(), io.tiffin.core.transport.TransportSettings
                        .defaults(), strategy()))) {
            await().atMost(Duration.ofSeconds(20)).until(() -> !later.service().liveNodes().isEmpty());
        }
        assertThat(node.stop()).isZero();
    }

    private static io.tiffin.api.spi.allocation.AllocationStrategy strategy() {
        return io.tiffin.core.TiffinModule.pluginRegistry(TiffinConfig.builder().build())
                .allocationStrategy("random").create(new io.tiffin.api.spi.PluginContext(Map.of(), "master"));
    }
}
