package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.util.ManualTicker;
import io.tiffin.core.util.Ticker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link TiffinClient.Options}: the builder's defaults, and the values it refuses, named by setting. */
class ClientOptionsTest {

    @Test
    void theBuilderStartsFromTheDefaults() {
        TiffinClient.Options o = TiffinClient.Options.builder("m:1").build();
        assertThat(o).isEqualTo(TiffinClient.Options.defaults("m:1"));
        assertThat(o.transport()).isEqualTo(TransportSettings.defaults());
        assertThat(o.sliceSize()).isEqualTo(16L << 20);
        assertThat(o.localMemcpy()).isTrue();
        assertThat(o.sharedMemory()).isTrue();
        assertThat(o.hotCache()).isNull();
        assertThat(o.locationCache()).isEqualTo(LocationCache.Settings.DEFAULT);
        assertThat(o.readHints()).isEqualTo(ReadHints.DEFAULT_SIZE);
        assertThat(o.ticker()).isSameAs(Ticker.SYSTEM);
    }

    @Test
    void everySettingIsKeptAndCopiesChangeOnlyTheirOwn() {
        ManualTicker ticker = new ManualTicker();
        LocationCache.Settings cache = new LocationCache.Settings(Duration.ofSeconds(1), 10);
        TiffinClient.Options o = TiffinClient.Options.builder("m:1").sliceSize(4096).localMemcpy(false)
                .sharedMemory(false).locationCache(cache).readHints(7).ticker(ticker).build();
        assertThat(o.toBuilder().build()).isEqualTo(o);
        TiffinClient.Options moved = o.withMasterAddress("m:2").withReadHints(0);
        assertThat(moved.masterAddress()).isEqualTo("m:2");
        assertThat(moved.readHints()).isZero();
        assertThat(moved.sliceSize()).isEqualTo(4096);
        assertThat(moved.locationCache()).isEqualTo(cache);
        assertThat(moved.ticker()).isSameAs(ticker);
        assertThat(moved.localMemcpy()).isFalse();
        assertThat(o.withSharedMemory(true).sharedMemory()).isTrue();
        assertThat(TiffinClient.Options.builder("m:1").locationCache(null).build().locationCache())
                .as("null means off").isEqualTo(LocationCache.Settings.DISABLED);
    }

    @Test
    void outOfRangeValuesAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> TiffinClient.Options.builder("m:1").sliceSize(1023).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("client.transfer-slice-size = 1023 (expected: >= 1KiB)");
        assertThatThrownBy(() -> TiffinClient.Options.builder("m:1").readHints(-1).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("client.read-hint-cache-size = -1 (expected: >= 0, 0 = off)");
    }

    @Test
    void missingValuesAreRefusedNamingTheSetting() {
        assertThatThrownBy(() -> TiffinClient.Options.builder(null).build())
                .isInstanceOf(NullPointerException.class).hasMessage("masterAddress");
        assertThatThrownBy(() -> TiffinClient.Options.builder("m:1").transport(null).build())
                .isInstanceOf(NullPointerException.class).hasMessage("transport");
        assertThatThrownBy(() -> TiffinClient.Options.builder("m:1").ticker(null).build())
                .isInstanceOf(NullPointerException.class).hasMessage("ticker");
    }
}
