package io.tiffin.core.config;

import static io.tiffin.core.config.TiffinConfigKeys.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Resolution of {@link TiffinConfig}: sources, precedence, validation and error reporting. */
class ConfigTest {
    @TempDir
    Path dir;

    private Path file(String... lines) throws IOException {
        Path f = dir.resolve("tiffin-" + System.nanoTime() + ".properties");
        Files.write(f, List.of(lines));
        return f;
    }

    private static ConfigException configError(TiffinConfig.Builder builder) {
        try {
            builder.build();
        } catch (ConfigException e) {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            return e;
        }
        throw new AssertionError("expected a ConfigException");
    }

    @Test
    void defaultsAreThoseDocumented() {
        TiffinConfig c = TiffinConfig.defaults();
        assertThat(c.get(MASTER_HOST)).isEqualTo("127.0.0.1");
        assertThat(c.get(MASTER_PORT)).isEqualTo(50051);
        assertThat(c.get(MASTER_ADMIN_PORT)).isEqualTo(9003);
        assertThat(c.get(MASTER_ADDRESS)).isEqualTo("127.0.0.1:50051");
        assertThat(c.get(MASTER_LEASE_TTL)).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.get(MASTER_SOFT_PIN_TTL)).isEqualTo(Duration.ofMinutes(30));
        assertThat(c.get(MASTER_MAX_SOFT_PIN_TTL)).isEqualTo(Duration.ofHours(24));
        assertThat(c.get(MASTER_ALLOW_EVICT_SOFT_PINNED)).isTrue();
        assertThat(c.get(MASTER_EVICTION_HIGH_WATERMARK)).isEqualTo(0.90);
        assertThat(c.get(MASTER_EVICTION_RATIO)).isEqualTo(0.05);
        assertThat(c.get(MASTER_EVICTION_INTERVAL)).isEqualTo(Duration.ofMillis(10));
        assertThat(c.get(MASTER_NODE_TTL)).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.get(MASTER_NODE_CHECK_INTERVAL)).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.get(MASTER_PUT_START_DISCARD_TIMEOUT)).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.get(MASTER_PUT_START_RELEASE_TIMEOUT)).isEqualTo(Duration.ofSeconds(600));
        assertThat(c.get(MASTER_WORKER_THREADS)).isZero();
        assertThat(c.get(MASTER_MAX_KEY_LENGTH)).isEqualTo(4096);
        assertThat(c.get(MASTER_MAX_OBJECT_SIZE)).isEqualTo(1L << 40);
        assertThat(c.get(ALLOCATION_STRATEGY)).isEqualTo("random");
        assertThat(c.get(NODE_ID)).isEmpty();
        assertThat(c.get(NODE_HOST)).isEqualTo("127.0.0.1");
        assertThat(c.get(NODE_PORT)).isZero();
        assertThat(c.get(NODE_SEGMENT_SIZE)).isEqualTo(1L << 30);
        assertThat(c.get(NODE_PING_INTERVAL)).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.get(CLIENT_RPC_TIMEOUT)).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.get(CLIENT_CONNECT_TIMEOUT)).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.get(CLIENT_TRANSFER_SLICE_SIZE)).isEqualTo(16L << 20);
        assertThat(c.get(CLIENT_LOCAL_MEMCPY)).isTrue();
        assertThat(c.get(TRANSPORT_MAX_FRAME_SIZE)).isEqualTo(64L << 20);
        assertThat(c.get(TRANSPORT_AUTH_TOKEN)).isEmpty();
        assertThat(c.get(TRANSPORT_IO_THREADS)).isZero();
        assertThat(c.get(TRANSPORT_HANDSHAKE_TIMEOUT)).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.get(TRANSPORT_NATIVE)).isTrue();
        assertThat(c.get(PLUGINS_DIR)).isEqualTo("plugins");
        assertThat(c.get(HOTCACHE_SIZE)).isZero();
        assertThat(c.get(HOTCACHE_BLOCK_SIZE)).isEqualTo(16L << 20);
        assertThat(c.get(HOTCACHE_POLICY)).isEqualTo("w-tinylfu-tuned");
        assertThat(c.source(MASTER_PORT)).isEqualTo("default");
        assertThat(c.raw(NODE_SEGMENT_SIZE)).isEqualTo("1GiB");
    }

    @Test
    void everyPublicKeyConstantIsListed() throws IllegalAccessException {
        List<Object> constants = new ArrayList<>();
        for (Field f : TiffinConfigKeys.class.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && f.getType() == ConfigKey.class) {
                constants.add(f.get(null));
            }
        }
        assertThat(TiffinConfigKeys.all()).containsExactlyInAnyOrderElementsOf(constants.stream()
                .map(o -> (ConfigKey<?>) o).toList());
        assertThat(TiffinConfigKeys.byName("master.lease-ttl")).contains(MASTER_LEASE_TTL);
    }

    @Test
    void fileValuesWithUnitsAreParsed() throws IOException {
        TiffinConfig c = TiffinConfig.builder()
                .fromFile(file("node.segment-size = 1.5GiB", "master.lease-ttl=250ms", "master.node-ttl=20",
                        "client.transfer-slice-size=4 MB", "master.address=[::1]:7000"))
                .build();
        assertThat(c.get(NODE_SEGMENT_SIZE)).isEqualTo(3L << 29);
        assertThat(c.get(MASTER_LEASE_TTL)).isEqualTo(Duration.ofMillis(250));
        assertThat(c.get(MASTER_NODE_TTL)).isEqualTo(Duration.ofSeconds(20));
        assertThat(c.get(CLIENT_TRANSFER_SLICE_SIZE)).isEqualTo(4L << 20);
        assertThat(c.get(MASTER_ADDRESS)).isEqualTo("[::1]:7000");
        assertThat(c.source(NODE_SEGMENT_SIZE)).startsWith("file ").endsWith(".properties");
    }

    @Test
    void laterSourcesWin() throws IOException {
        Path first = file("master.port=1001", "master.admin-port=2001", "node.port=3001", "node.host=a");
        Path second = file("master.port=1002", "master.admin-port=2002", "node.port=3002");
        TiffinConfig c = TiffinConfig.builder()
                .set("master.port", "1004")
                .fromEnvironment(Map.of("TIFFIN_MASTER_PORT", "1003", "TIFFIN_MASTER_ADMIN_PORT", "2003"))
                .fromFile(first)
                .fromFile(second)
                .build();
        assertThat(c.get(MASTER_PORT)).isEqualTo(1004);
        assertThat(c.source(MASTER_PORT)).isEqualTo("command line");
        assertThat(c.get(MASTER_ADMIN_PORT)).isEqualTo(2003);
        assertThat(c.source(MASTER_ADMIN_PORT)).isEqualTo("environment variable TIFFIN_MASTER_ADMIN_PORT");
        assertThat(c.get(NODE_PORT)).isEqualTo(3002);
        assertThat(c.source(NODE_PORT)).isEqualTo("file " + second);
        assertThat(c.get(NODE_HOST)).isEqualTo("a");
        assertThat(c.get(MASTER_HOST)).isEqualTo("127.0.0.1");
    }

    @Test
    void anOverrideCanNameItsSource() {
        TiffinConfig c = TiffinConfig.builder().set("node.port", "1", "flag --port").set("node.port", "2", "flag -p")
                .build();
        assertThat(c.get(NODE_PORT)).isEqualTo(2);
        assertThat(c.source(NODE_PORT)).isEqualTo("flag -p");
    }

    @Test
    void aBadValueOverriddenByAGoodOneIsNotAnError() throws IOException {
        TiffinConfig c = TiffinConfig.builder().fromFile(file("master.port=abc")).set("master.port", "1").build();
        assertThat(c.get(MASTER_PORT)).isEqualTo(1);
    }

    @Test
    void aMissingFileIsAnErrorNamingThePath() {
        Path missing = dir.resolve("nope.properties");
        ConfigException e = configError(TiffinConfig.builder().fromFile(missing));
        assertThat(e.getMessage()).contains(missing.toString()).contains("does not exist");
    }

    @Test
    void aFileThatCannotBeReadSaysWhy() throws IOException {
        Path latin1 = dir.resolve("latin1.properties");
        Files.write(latin1, new byte[] {'n', 'o', 'd', 'e', '.', 'i', 'd', '=', (byte) 0xE9});
        assertThat(configError(TiffinConfig.builder().fromFile(latin1)).getMessage())
                .contains(latin1.toString()).contains("is not UTF-8 text");
        assertThat(configError(TiffinConfig.builder().fromFile(dir)).getMessage())
                .contains(dir.toString()).contains("it is a directory");
    }

    @Test
    void unknownKeyInFileSuggestsTheNearestKey() throws IOException {
        Path f = file("master.lease-tt=5s");
        ConfigException e = configError(TiffinConfig.builder().fromFile(f));
        assertThat(e.problems()).containsExactly(
                "unknown key master.lease-tt [file " + f + "] (did you mean master.lease-ttl?)");
    }

    @Test
    void unknownKeyWithoutItsSectionSuggestsTheFullKey() {
        ConfigException e = configError(TiffinConfig.builder().set("segment-size", "1GiB"));
        assertThat(e.getMessage()).contains("unknown key segment-size [command line] (did you mean node.segment-size?)");
    }

    @Test
    void unknownKeyFarFromAnyKnownKeyPointsToTheReference() {
        ConfigException e = configError(TiffinConfig.builder().set("completely.different", "1", "flag --x"));
        assertThat(e.getMessage()).contains("unknown key completely.different [flag --x]")
                .contains("docs/CONFIGURATION.md").doesNotContain("did you mean");
    }

    @Test
    void unknownOverrideSuggestsTheNearestKey() {
        ConfigException e = configError(TiffinConfig.builder().set("master.eviction_ratio", "0.1"));
        assertThat(e.getMessage()).isEqualTo("invalid configuration: unknown key master.eviction_ratio "
                + "[command line] (did you mean master.eviction-ratio?)");
    }

    @Test
    void unknownTiffinEnvironmentVariableSuggestsTheNearestVariable() {
        ConfigException e = configError(TiffinConfig.builder().fromEnvironment(Map.of("TIFFIN_MASTER_LEASE_TT", "5s")));
        assertThat(e.getMessage()).contains("unknown environment variable TIFFIN_MASTER_LEASE_TT")
                .contains("did you mean TIFFIN_MASTER_LEASE_TTL, which sets master.lease-ttl?");
    }

    @Test
    void environmentMapsToKeysAndIgnoresLauncherAndForeignVariables() {
        TiffinConfig c = TiffinConfig.builder().fromEnvironment(Map.of(
                "TIFFIN_MASTER_LEASE_TTL", "5s",
                "TIFFIN_MASTER_ALLOW_EVICT_SOFT_PINNED", "false",
                "TIFFIN_HOME", "/opt/tiffin", "TIFFIN_OPTS", "-Xmx1g", "TIFFIN_CONF_DIR", "/etc/tiffin",
                "TIFFIN_LOG_DIR", "/var/log", "PATH", "/usr/bin", "HOME", "/root"))
                .build();
        assertThat(c.get(MASTER_LEASE_TTL)).isEqualTo(Duration.ofSeconds(5));
        assertThat(c.get(MASTER_ALLOW_EVICT_SOFT_PINNED)).isFalse();
    }

    @Test
    void mooncakeAliasesSetTheHotCache() {
        TiffinConfig a = TiffinConfig.builder()
                .fromEnvironment(Map.of("LOCAL_HOT_CACHE_SIZE", "1GB", "LOCAL_HOT_BLOCK_SIZE", "4mb")).build();
        assertThat(a.get(HOTCACHE_SIZE)).isEqualTo(1L << 30);
        assertThat(a.get(HOTCACHE_BLOCK_SIZE)).isEqualTo(4L << 20);
        assertThat(a.source(HOTCACHE_SIZE)).isEqualTo("environment variable LOCAL_HOT_CACHE_SIZE");

        TiffinConfig b = TiffinConfig.builder().fromEnvironment(Map.of(
                "MC_STORE_LOCAL_HOT_CACHE_SIZE", "2GiB", "MC_STORE_LOCAL_HOT_BLOCK_SIZE", "8MiB")).build();
        assertThat(b.get(HOTCACHE_SIZE)).isEqualTo(2L << 30);
        assertThat(b.get(HOTCACHE_BLOCK_SIZE)).isEqualTo(8L << 20);

        TiffinConfig same = TiffinConfig.builder().fromEnvironment(Map.of(
                "MC_STORE_LOCAL_HOT_CACHE_SIZE", "2GiB", "TIFFIN_HOTCACHE_SIZE", "2GiB")).build();
        assertThat(same.get(HOTCACHE_SIZE)).isEqualTo(2L << 30);

        TiffinConfig overridden = TiffinConfig.builder().fromEnvironment(Map.of("LOCAL_HOT_CACHE_SIZE", "1GiB"))
                .set("hotcache.size", "0").build();
        assertThat(overridden.get(HOTCACHE_SIZE)).isZero();
    }

    @Test
    void conflictingAliasesAreAnError() {
        ConfigException e = configError(TiffinConfig.builder().fromEnvironment(Map.of(
                "LOCAL_HOT_CACHE_SIZE", "1GiB", "TIFFIN_HOTCACHE_SIZE", "2GiB")));
        assertThat(e.getMessage()).contains("LOCAL_HOT_CACHE_SIZE = 1GiB").contains("TIFFIN_HOTCACHE_SIZE = 2GiB")
                .contains("hotcache.size");
    }

    @Test
    void openPrefixesCannotBeSetFromTheEnvironment() {
        ConfigException e = configError(TiffinConfig.builder()
                .fromEnvironment(Map.of("TIFFIN_STORAGE_BUCKET_PATH", "/data")));
        assertThat(e.getMessage()).contains("TIFFIN_STORAGE_BUCKET_PATH cannot set a key under storage.");
        ConfigException policy = configError(TiffinConfig.builder()
                .fromEnvironment(Map.of("TIFFIN_HOTCACHE_POLICY_S3_FIFO_SMALL_SHARE", "0.2")));
        assertThat(policy.getMessage())
                .contains("TIFFIN_HOTCACHE_POLICY_S3_FIFO_SMALL_SHARE cannot set a key under hotcache.policy.");
        // the policy's own variable still selects the policy
        assertThat(TiffinConfig.builder().fromEnvironment(Map.of("TIFFIN_HOTCACHE_POLICY", "s3-fifo")).build()
                .get(HOTCACHE_POLICY)).isEqualTo("s3-fifo");
    }

    @Test
    void policySettingsAreAnOpenPrefixBesideThePolicyKey() {
        TiffinConfig c = TiffinConfig.builder().set("hotcache.policy", "s3-fifo")
                .set("hotcache.policy.s3-fifo.small-share", "0.2").build();
        assertThat(c.get(HOTCACHE_POLICY)).isEqualTo("s3-fifo");
        assertThat(c.withPrefix("hotcache.policy.s3-fifo.")).containsExactly(Map.entry("small-share", "0.2"));
        assertThat(configError(TiffinConfig.builder().set("hotcache.policy.", "x")).getMessage())
                .contains("unknown key hotcache.policy.");
        assertThat(configError(TiffinConfig.builder().set("hotcache.polcy.s3-fifo.small-share", "0.2")).getMessage())
                .contains("unknown key hotcache.polcy.s3-fifo.small-share");
    }

    @Test
    void wrongTypedValuesNameKeyValueSourceAndExpectation() throws IOException {
        Path f = file("master.port=abc");
        ConfigException e = configError(TiffinConfig.builder().fromFile(f));
        assertThat(e.problems()).containsExactly(
                "master.port = abc (expected: an integer 0..65535, e.g. 50051) [file " + f + "]");

        e = configError(TiffinConfig.builder().fromEnvironment(Map.of("TIFFIN_NODE_SEGMENT_SIZE", "-1")));
        assertThat(e.problems()).singleElement().asString()
                .startsWith("node.segment-size = -1 (expected: a size in bytes >= 1MiB")
                .endsWith("e.g. 1GiB) [environment variable TIFFIN_NODE_SEGMENT_SIZE]");

        e = configError(TiffinConfig.builder().set("master.eviction-ratio", "1.5", "flag --eviction-ratio"));
        assertThat(e.problems()).containsExactly(
                "master.eviction-ratio = 1.5 (expected: a number in [0, 1], e.g. 0.05) [flag --eviction-ratio]");

        e = configError(TiffinConfig.builder().set("master.lease-ttl", "-1s"));
        assertThat(e.problems()).singleElement().asString().startsWith("master.lease-ttl = -1s (expected: a duration > 0");

        e = configError(TiffinConfig.builder().set("client.location-cache-ttl", "-1s"));
        assertThat(e.problems()).singleElement().asString()
                .startsWith("client.location-cache-ttl = -1s (expected: a duration >= 0, 0 = off");
        assertThat(TiffinConfig.builder().set("client.location-cache-ttl", "0").build()
                .get(TiffinConfigKeys.CLIENT_LOCATION_CACHE_TTL)).isZero();
        assertThat(TiffinConfig.builder().set("client.location-cache-ttl", "750").build()
                .get(TiffinConfigKeys.CLIENT_LOCATION_CACHE_TTL)).as("plain number: ms").hasMillis(750);
        TiffinConfig defaults = TiffinConfig.builder().build();
        assertThat(new io.tiffin.core.client.LocationCache.Settings(defaults.get(TiffinConfigKeys.CLIENT_LOCATION_CACHE_TTL),
                defaults.get(TiffinConfigKeys.CLIENT_LOCATION_CACHE_SIZE)))
                .as("the Java API's default location cache is the configuration's")
                .isEqualTo(io.tiffin.core.client.LocationCache.Settings.DEFAULT);

        e = configError(TiffinConfig.builder().set("node.segment-size", "512KiB"));
        assertThat(e.problems()).singleElement().asString().startsWith("node.segment-size = 512KiB (expected");

        e = configError(TiffinConfig.builder().set("master.port", ""));
        assertThat(e.problems()).singleElement().asString().startsWith("master.port = \"\" (expected");

        // a node advertises its host to clients: a wildcard would send them to themselves
        e = configError(TiffinConfig.builder().set("node.host", "0.0.0.0"));
        assertThat(e.problems()).singleElement().asString()
                .startsWith("node.host = 0.0.0.0 (expected: a host name or address other machines can reach");
        e = configError(TiffinConfig.builder().set("node.host", ""));
        assertThat(e.problems()).singleElement().asString().startsWith("node.host = \"\" (expected");
        assertThat(TiffinConfig.builder().set("master.host", "0.0.0.0").build().get(TiffinConfigKeys.MASTER_HOST))
                .as("a master may bind every interface").isEqualTo("0.0.0.0");
    }

    @Test
    void frameSizeMustExceedTheTransferSlice() {
        ConfigException e = configError(TiffinConfig.builder()
                .set("client.transfer-slice-size", "64MiB", "flag --slice"));
        assertThat(e.problems()).containsExactly("transport.max-frame-size = 64MiB [default] (expected: more than "
                + "client.transfer-slice-size + 64KiB = 65600KiB, where client.transfer-slice-size = 64MiB "
                + "[flag --slice]; raise the frame size or lower the slice size)");

        TiffinConfig ok = TiffinConfig.builder().set("client.transfer-slice-size", "64MiB")
                .set("transport.max-frame-size", "65MiB").build();
        assertThat(ok.get(TRANSPORT_MAX_FRAME_SIZE)).isEqualTo(65L << 20);

        ConfigException exact = configError(TiffinConfig.builder().set("client.transfer-slice-size", "1MiB")
                .set("transport.max-frame-size", "1088KiB"));
        assertThat(exact.getMessage()).contains("transport.max-frame-size = 1088KiB");
    }

    @Test
    void otherRulesBetweenKeys() {
        assertThat(configError(TiffinConfig.builder().set("master.soft-pin-ttl", "2d")).getMessage())
                .contains("master.soft-pin-ttl = 2d [command line] (expected: at most master.max-soft-pin-ttl, "
                        + "where master.max-soft-pin-ttl = 24h [default])");
        assertThat(configError(TiffinConfig.builder().set("master.node-check-interval", "11s")).getMessage())
                .contains("master.node-check-interval = 11s");
        // A cache smaller than one block is not an error: the client disables it with a warning.
        assertThat(TiffinConfig.builder().set("hotcache.size", "1MiB").build().get(HOTCACHE_SIZE)).isEqualTo(1L << 20);
        assertThat(configError(TiffinConfig.builder().set("hotcache.ring-size", "1000")).getMessage())
                .contains("hotcache.ring-size = 1000");
        assertThat(TiffinConfig.builder().set("hotcache.size", "16MiB").build().get(HOTCACHE_SIZE))
                .isEqualTo(16L << 20);
    }

    @Test
    void crossChecksSkipKeysWhoseValueIsInvalid() {
        ConfigException e = configError(TiffinConfig.builder().set("client.transfer-slice-size", "lots"));
        assertThat(e.problems()).hasSize(1);
    }

    @Test
    void allProblemsAreReportedTogether() throws IOException {
        Path f = file("master.port=abc", "master.lease-tt=5s", "node.segment-size=-1");
        ConfigException e = configError(TiffinConfig.builder()
                .fromFile(f)
                .fromEnvironment(Map.of("TIFFIN_NODE_PROT", "1"))
                .set("master.eviction-ratio", "1.5")
                .set("transport.max-frame-size", "2MiB"));
        assertThat(e.problems()).hasSize(6);
        assertThat(e.getMessage()).startsWith("invalid configuration (6 problems):\n");
        assertThat(e.getMessage().lines()).hasSize(7);
        assertThat(e.getMessage())
                .contains("unknown key master.lease-tt [file " + f + "] (did you mean master.lease-ttl?)")
                .contains("TIFFIN_NODE_PROT").contains("TIFFIN_NODE_PORT")
                .contains("master.port = abc")
                .contains("node.segment-size = -1")
                .contains("master.eviction-ratio = 1.5")
                .contains("transport.max-frame-size = 2MiB [command line]");
    }

    @Test
    void openPrefixKeysArePassedThroughRaw() throws IOException {
        TiffinConfig c = TiffinConfig.builder()
                .fromFile(file("storage.backend=bucket", "storage.bucket.path=/data", "storage.bucket.size=whatever",
                        "plugin.foo.x=1"))
                .set("storage.bucket.path", "/fast")
                .build();
        assertThat(c.withPrefix("storage.")).containsExactly(Map.entry("backend", "bucket"),
                Map.entry("bucket.path", "/fast"), Map.entry("bucket.size", "whatever"));
        assertThat(c.withPrefix("storage.bucket.")).containsExactly(Map.entry("path", "/fast"),
                Map.entry("size", "whatever"));
        assertThat(c.withPrefix("plugin.foo.")).containsExactly(Map.entry("x", "1"));
        assertThat(c.withPrefix("storage.other.")).isEmpty();
        assertThatThrownBy(() -> c.withPrefix("master.")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("storage.");
        assertThat(c.describe()).containsEntry("storage.bucket.path", "/fast").containsEntry("master.port", "50051");
    }

    @Test
    void aBarePrefixIsNotAKey() {
        ConfigException e = configError(TiffinConfig.builder().set("storage.", "x"));
        assertThat(e.getMessage()).contains("unknown key storage.");
    }

    @Test
    void describeMasksTheAuthToken() {
        TiffinConfig c = TiffinConfig.builder().set("transport.auth-token", "s3cret").build();
        assertThat(c.get(TRANSPORT_AUTH_TOKEN)).isEqualTo("s3cret");
        assertThat(c.describe()).containsEntry("transport.auth-token", "****");
    }

    @Test
    void keysNotInTheRegistryAreRejectedByGet() {
        ConfigKey<String> other = ConfigKey.string("test.other", "", "Not registered.");
        assertThatThrownBy(() -> TiffinConfig.defaults().get(other)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("test.other");
    }

    @Test
    void levenshteinCountsEdits() {
        assertThat(TiffinConfig.levenshtein("kitten", "sitting")).isEqualTo(3);
        assertThat(TiffinConfig.levenshtein("", "abc")).isEqualTo(3);
        assertThat(TiffinConfig.levenshtein("same", "same")).isZero();
    }
}
