package io.tiffin.core.cli;

import static io.tiffin.core.cli.CliRun.tiffin;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.core.cli.CliRun.Result;
import io.tiffin.core.config.ConfigException;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.config.TiffinConfigKeys;
import io.tiffin.core.master.FailoverSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Configuration mistakes the command line stops at before starting anything: a master given both a coordinator and a
 * state directory (from any source), and a {@code -D}/{@code --set} value that is not {@code KEY=VALUE}. No server
 * runs in these tests.
 */
class CliConfigErrorsTest {
    private static final String ZK = "zk://127.0.0.1:46181/tiffin";

    @TempDir
    Path dir;


    /** The usage error for both keys: names each with its source, and says which to keep for what. */
    private static void assertBothKeysRefused(Result r, String stateDirSource, String coordinatorSource) {
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.out()).isEmpty(); // no listener line: nothing started
        assertThat(r.err()).startsWith("error: INVALID_PARAMS: invalid configuration: master.state-dir = ")
                .contains("[" + stateDirSource + "] is set together with master.coordinator = " + ZK + " ["
                        + coordinatorSource + "]")
                .contains("a single master keeps its cluster facts in master.state-dir")
                .contains("masters with failover keep them in the coordination service of master.coordinator")
                .contains("Remove master.state-dir (--state-dir) to run masters with failover, or"
                        + " master.coordinator (--coordinator) to run a single master")
                .contains("\nhint: fix the settings above");
    }

    @Test
    void aMasterWithBothACoordinatorAndAStateDirectoryIsAUsageErrorWhereverTheyCameFrom() throws IOException {
        String state = dir.resolve("state").toString();
        assertBothKeysRefused(tiffin("master", "--port", "0", "--admin-port", "0", "--coordinator", ZK,
                "--state-dir", state), "flag --state-dir", "flag --coordinator");
        assertBothKeysRefused(tiffin("master", "--port", "0", "--admin-port", "0", "-D", "master.coordinator=" + ZK,
                "--set", "master.state-dir=" + state), "option -D master.state-dir", "option -D master.coordinator");
        Path conf = dir.resolve("tiffin.properties");
        Files.writeString(conf, "master.coordinator=" + ZK + "\nmaster.state-dir=" + state + "\n");
        assertBothKeysRefused(tiffin("master", "--port", "0", "--admin-port", "0", "--config", conf.toString()),
                "file " + conf, "file " + conf);
        Path stateOnly = dir.resolve("state-only.properties");
        Files.writeString(stateOnly, "master.state-dir=" + state + "\n");
        assertBothKeysRefused(tiffin("master", "--port", "0", "--admin-port", "0", "--config", stateOnly.toString(),
                "--coordinator", ZK), "file " + stateOnly, "flag --coordinator");
        assertThat(Files.exists(Path.of(state))).as("nothing was written to the state directory").isFalse();
    }

    @Test
    void eitherKeyAloneIsFineAndAnEmptyOneDoesNotCount() {
        assertThat(TiffinConfig.builder().set("master.coordinator", ZK).build().get(
                TiffinConfigKeys.MASTER_COORDINATOR)).isEqualTo(ZK);
        assertThat(TiffinConfig.builder().set("master.state-dir", "/var/lib/tiffin").build().get(
                TiffinConfigKeys.MASTER_STATE_DIR)).isEqualTo("/var/lib/tiffin");
        // an empty value is the default (none): a flag can clear what a file set
        assertThat(TiffinConfig.builder().set("master.coordinator", ZK).set("master.state-dir", "").build()
                .get(TiffinConfigKeys.MASTER_STATE_DIR)).isEmpty();
        assertThatThrownBy(() -> TiffinConfig.builder().set("master.coordinator", ZK).set("master.state-dir", "/s")
                .build()).isInstanceOf(ConfigException.class);
    }

    @Test
    void failoverSettingsBuiltInCodeRefuseBothToo() {
        assertThatThrownBy(() -> new FailoverSettings(ZK, Path.of("/s"), "", Duration.ofSeconds(3), true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected: one of them");
        assertThat(new FailoverSettings(ZK, null, "", Duration.ofSeconds(3), true).enabled()).isTrue();
        assertThat(new FailoverSettings("", Path.of("/s"), "", Duration.ofSeconds(3), true).enabled()).isTrue();
    }

    @Test
    void aSetValueWithoutAnEqualsSignNamesTheOptionOnceAndSaysWhatToWrite() {
        for (String[] args : new String[][] {{"master", "-D", "foo"}, {"master", "--set", "foo"},
                {"master", "-Dfoo"}, {"master", "--set=foo"}}) {
            Result r = tiffin(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", args)).isEqualTo("error: INVALID_PARAMS: Invalid value for option"
                    + " '--set' (-D): 'foo' is not KEY=VALUE; write e.g. -D master.lease-ttl=5s\n"
                    + "hint: run 'tiffin master --help' for the usage\n");
        }
        Result emptyKey = tiffin("master", "-D", "=5s");
        assertThat(emptyKey.exit()).isEqualTo(2);
        assertThat(emptyKey.err()).startsWith("error: INVALID_PARAMS: Invalid value for option '--set' (-D): '=5s' is"
                + " not KEY=VALUE (the key is empty); write e.g. -D master.lease-ttl=5s\n");
        Result missing = tiffin("master", "-D");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).startsWith("error: INVALID_PARAMS: Missing value for option '--set' (-D): expected"
                + " KEY=VALUE, e.g. -D master.lease-ttl=5s\n");
        for (Result r : new Result[] {emptyKey, missing}) {
            assertThat(r.err()).doesNotContain("option option");
        }
    }

    @Test
    void setValuesInEveryFormReachTheConfiguration() {
        // an invalid value shows where each setting landed: the key and value as given, from option -D
        for (String[] args : new String[][] {{"master", "-D", "master.lease-ttl=soon"},
                {"master", "-Dmaster.lease-ttl=soon"}, {"master", "--set", "master.lease-ttl=soon"},
                {"master", "--set=master.lease-ttl=soon"}}) {
            Result r = tiffin(args);
            assertThat(r.exit()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(r.err()).as(String.join(" ", args)).startsWith("error: INVALID_PARAMS: invalid configuration:")
                    .contains("master.lease-ttl").contains("soon").contains("[option -D master.lease-ttl]");
        }
        // the value is everything after the first '=', later settings of a key win
        Result r = tiffin("master", "-D", "master.coordinator=zk://h:1/a=b", "-D", "master.state-dir=/x",
                "-D", "master.state-dir=/y");
        assertThat(r.err()).contains("master.state-dir = /y").contains("master.coordinator = zk://h:1/a=b");
    }
}
