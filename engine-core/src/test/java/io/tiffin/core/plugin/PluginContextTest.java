package io.tiffin.core.plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.spi.PluginContext;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The typed accessors a plugin reads its settings with. */
class PluginContextTest {

    @Test
    void durationsTakeUnitsAsTiffinsOwnConfigurationDoesAndPlainNumbersAreMilliseconds() {
        PluginContext c = new PluginContext(Map.of("a", "10s", "b", "250", "c", "1.5m", "d", "5min", "e", "2 H",
                "f", "soon", "g", "-1s", "h", "200000d"), "n");
        assertThat(c.getDuration("a", Duration.ZERO)).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.getDuration("b", Duration.ZERO)).isEqualTo(Duration.ofMillis(250));
        assertThat(c.getDuration("c", Duration.ZERO)).isEqualTo(Duration.ofSeconds(90));
        assertThat(c.getDuration("d", Duration.ZERO)).isEqualTo(Duration.ofMinutes(5));
        assertThat(c.getDuration("e", Duration.ZERO)).isEqualTo(Duration.ofHours(2));
        assertThat(c.getDuration("unset", Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
        assertThatThrownBy(() -> c.getDuration("f", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("f = soon (expected: a duration such as 500ms, 10s or 5m; a plain number is milliseconds)");
        assertThatThrownBy(() -> c.getDuration("g", Duration.ZERO)).hasMessageStartingWith("g = -1s");
        assertThatThrownBy(() -> c.getDuration("h", Duration.ZERO)).hasMessageContaining("at most 106751d");
    }
}
