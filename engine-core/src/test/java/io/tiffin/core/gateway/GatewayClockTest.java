package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The gateway reads time from the ticker it is given: INFO's uptime and server time move with a manual
 * clock, and PEXPIRE's overflow check (Redis's: the deadline must fit in a long) adds that clock's now.
 */
class GatewayClockTest {
    @Test
    void infoAndDeadlinesFollowTheGatewaysTicker() throws Exception {
        ManualTicker ticker = new ManualTicker(1_700_000_000_000L);
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build();
        try (Tiffin tiffin = Tiffin.embedded(config);
             GatewayServer gateway = GatewayServer.start(TiffinGatewayStore.over(tiffin.client(), 1, "in-process"),
                     GatewaySettings.defaults("127.0.0.1", 0), ticker);
             RespSocket s = new RespSocket(gateway.address().getPort())) {
            assertThat(RespSocket.text(s.call("INFO", "server"))).contains("uptime_in_seconds:0\r\n",
                    "server_time_usec:1700000000000000\r\n");
            ticker.advance(Duration.ofDays(2).plusSeconds(5));
            assertThat(RespSocket.text(s.call("INFO", "server"))).contains("uptime_in_seconds:172805\r\n",
                    "uptime_in_days:2\r\n", "server_time_usec:1700172805000000\r\n");
            // PEXPIRE's overflow check adds the ticker's now: Long.MAX_VALUE - now is the last valid value
            long now = ticker.millis();
            assertThat(s.call("PEXPIRE", "missing", Long.toString(Long.MAX_VALUE - now))).isEqualTo(0L);
            assertThat(s.call("PEXPIRE", "missing", Long.toString(Long.MAX_VALUE - now + 1)))
                    .isEqualTo(new RespSocket.Err("ERR invalid expire time in 'pexpire' command"));
            s.close();
            LeakCheck.assertClean(gateway);
        }
    }
}
