package io.tiffin.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Parsing of sizes, durations, addresses and the typed keys. */
class ConfigValuesTest {

    @Test
    void sizesAcceptPlainBytesAndBinaryUnits() {
        assertThat(Sizes.parse("1024")).isEqualTo(1024);
        assertThat(Sizes.parse("0")).isZero();
        assertThat(Sizes.parse("16MiB")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("16 MiB")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("16mib")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("1.5GiB")).isEqualTo(3L << 29);
        assertThat(Sizes.parse("1TiB")).isEqualTo(1L << 40);
        assertThat(Sizes.parse("512b")).isEqualTo(512);
    }

    @Test
    void sizesTreatDecimalLookingUnitsAsBinaryLikeMooncake() {
        assertThat(Sizes.parse("16MB")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("16mb")).isEqualTo(16L << 20);
        assertThat(Sizes.parse("4k")).isEqualTo(4096);
        assertThat(Sizes.parse("4KB")).isEqualTo(4096);
        assertThat(Sizes.parse("2g")).isEqualTo(2L << 30);
        assertThat(Sizes.parse("1t")).isEqualTo(1L << 40);
        assertThat(Sizes.parse("1 tb")).isEqualTo(1L << 40);
    }

    @Test
    void sizesRejectGarbageNegativesAndOverflow() {
        assertThatThrownBy(() -> Sizes.parse("-1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sizes.parse("abc")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sizes.parse("16XB")).hasMessageContaining("unknown size unit");
        assertThatThrownBy(() -> Sizes.parse("1.2.3MiB")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Sizes.parse("9000000TiB")).hasMessageContaining("too large");
        assertThatThrownBy(() -> Sizes.parse("")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sizesFormatWithTheLargestExactUnit() {
        assertThat(Sizes.format(16L << 20)).isEqualTo("16MiB");
        assertThat(Sizes.format(1536 * 1024)).isEqualTo("1536KiB");
        assertThat(Sizes.format(1000)).isEqualTo("1000");
        assertThat(Sizes.format(0)).isEqualTo("0");
    }

    @Test
    void durationsAcceptUnitsAndPlainNumbersInTheKeysUnit() {
        assertThat(Durations.parse("250ms", ChronoUnit.SECONDS)).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parse("10s", ChronoUnit.MILLIS)).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("5m", ChronoUnit.MILLIS)).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("1h", ChronoUnit.MILLIS)).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("2d", ChronoUnit.MILLIS)).isEqualTo(Duration.ofDays(2));
        assertThat(Durations.parse("1.5s", ChronoUnit.MILLIS)).isEqualTo(Duration.ofMillis(1500));
        assertThat(Durations.parse("10 S", ChronoUnit.MILLIS)).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("5000", ChronoUnit.MILLIS)).isEqualTo(Duration.ofSeconds(5));
        assertThat(Durations.parse("30", ChronoUnit.SECONDS)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void durationsRejectGarbage() {
        assertThatThrownBy(() -> Durations.parse("-1s", ChronoUnit.MILLIS)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Durations.parse("10 parsecs", ChronoUnit.MILLIS))
                .hasMessageContaining("unknown duration unit");
        assertThatThrownBy(() -> Durations.parse("s", ChronoUnit.MILLIS)).isInstanceOf(IllegalArgumentException.class);
        // longer than nanosecond arithmetic can hold: refused here, not an overflow where it is used
        assertThatThrownBy(() -> Durations.parse("100000000d", ChronoUnit.MILLIS)).hasMessageContaining("too long");
        assertThatThrownBy(() -> Durations.parse("106752d", ChronoUnit.MILLIS)).hasMessageContaining("too long");
        assertThat(Durations.parse("106751d", ChronoUnit.MILLIS).toNanos()).isPositive();
    }

    @Test
    void durationsFormatWithTheLargestExactUnit() {
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMinutes(30))).isEqualTo("30m");
        assertThat(Durations.format(Duration.ofDays(1))).isEqualTo("1d");
    }

    @Test
    void addressesParseHostPortAndIpv6() {
        assertThat(HostPort.parse("127.0.0.1:50051")).isEqualTo(new HostPort("127.0.0.1", 50051));
        assertThat(HostPort.parse("[::1]:9003")).isEqualTo(new HostPort("::1", 9003));
        assertThat(new HostPort("::1", 9003)).hasToString("[::1]:9003");
        assertThatThrownBy(() -> HostPort.parse("localhost")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HostPort.parse("localhost:0")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HostPort.parse(":80")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> HostPort.parse("host:http")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void keyParseErrorsNameKeyValueAndExpectation() {
        assertThatThrownBy(() -> TiffinConfigKeys.MASTER_LEASE_TTL.parse("-1s"))
                .hasMessageStartingWith("master.lease-ttl = -1s (expected: a duration > 0")
                .hasMessageEndingWith("e.g. 10s)");
        assertThatThrownBy(() -> TiffinConfigKeys.MASTER_PORT.parse("abc"))
                .hasMessage("master.port = abc (expected: an integer 0..65535, e.g. 50051)");
        assertThatThrownBy(() -> TiffinConfigKeys.MASTER_EVICTION_HIGH_WATERMARK.parse("0"))
                .hasMessageContaining("(0, 1]");
        assertThatThrownBy(() -> TiffinConfigKeys.ALLOCATION_STRATEGY.parse("Free Ratio"))
                .hasMessageContaining("plugin factory name");
    }

    @Test
    void typedKeysParseTheirValues() {
        assertThat(TiffinConfigKeys.CLIENT_LOCAL_MEMCPY.parse("off")).isFalse();
        assertThat(TiffinConfigKeys.CLIENT_LOCAL_MEMCPY.parse("YES")).isTrue();
        assertThatThrownBy(() -> TiffinConfigKeys.CLIENT_LOCAL_MEMCPY.parse("maybe"))
                .hasMessageContaining("true or false");
        assertThat(TiffinConfigKeys.MASTER_EVICTION_RATIO.parse("0")).isZero();
        assertThat(TiffinConfigKeys.MASTER_EVICTION_RATIO.parse("1")).isEqualTo(1.0);
        assertThatThrownBy(() -> TiffinConfigKeys.MASTER_EVICTION_RATIO.parse("NaN"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(TiffinConfigKeys.MASTER_MAX_KEY_LENGTH.parse("65536")).isEqualTo(65536);
        assertThatThrownBy(() -> TiffinConfigKeys.MASTER_MAX_KEY_LENGTH.parse("65537"))
                .hasMessageContaining("1..65536");
        assertThatThrownBy(() -> TiffinConfigKeys.CLIENT_TRANSFER_SLICE_SIZE.parse("65MiB"))
                .hasMessageContaining("1KiB..64MiB");
    }

    @Test
    void choiceKeysAcceptOnlyTheirChoices() {
        ConfigKey<String> key = ConfigKey.choice("test.mode", "fast", List.of("fast", "safe"), "A mode.");
        assertThat(key.defaultValue()).isEqualTo("fast");
        assertThat(key.parse(" safe ")).isEqualTo("safe");
        assertThatThrownBy(() -> key.parse("slow")).hasMessage("test.mode = slow (expected: one of fast, safe, e.g. fast)");
    }

    @Test
    void longKeysCheckTheirRange() {
        ConfigKey<Long> key = ConfigKey.longInteger("test.count", 5, 1, 10, "items", "A count.");
        assertThat(key.parse("10")).isEqualTo(10L);
        assertThatThrownBy(() -> key.parse("11")).hasMessage("test.count = 11 (expected: an integer 1..10 (items), e.g. 5)");
    }

    @Test
    void anInvalidDefaultFailsWhenTheKeyIsDefined() {
        assertThatThrownBy(() -> ConfigKey.size("test.size", "-1", 0, 10, "A size."))
                .hasMessageContaining("default of test.size = -1 is invalid");
        assertThatThrownBy(() -> ConfigKey.string("Bad_Name", "", "x")).hasMessageContaining("key name = Bad_Name");
    }

    @Test
    void envNamesUseUpperCaseWithUnderscores() {
        assertThat(TiffinConfigKeys.MASTER_LEASE_TTL.envName()).isEqualTo("TIFFIN_MASTER_LEASE_TTL");
        assertThat(TiffinConfigKeys.envNames(TiffinConfigKeys.HOTCACHE_SIZE))
                .containsExactly("TIFFIN_HOTCACHE_SIZE", "MC_STORE_LOCAL_HOT_CACHE_SIZE", "LOCAL_HOT_CACHE_SIZE");
    }
}
