package io.tiffin.core.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TickerTest {

    @Test
    void theSystemTickerStartsAtTheWallClockAndNeverGoesBack() {
        long wall = System.currentTimeMillis();
        long first = Ticker.SYSTEM.millis();
        assertThat(first).as("near the wall clock (the master seeds versions from it)").isBetween(wall - 60_000, wall + 60_000);
        long last = first;
        for (int i = 0; i < 10_000; i++) {
            long now = Ticker.SYSTEM.millis();
            assertThat(now).isGreaterThanOrEqualTo(last);
            last = now;
        }
        long start = Ticker.SYSTEM.millis();
        await("it advances with time").atMost(Duration.ofSeconds(10)).until(() -> Ticker.SYSTEM.millis() - start >= 30);
    }

    @Test
    void theSystemTickersNanosAreTheMonotonicClock() {
        long before = System.nanoTime();
        long nanos = Ticker.SYSTEM.nanos();
        long after = System.nanoTime();
        assertThat(nanos).isBetween(before, after);
    }

    @Test
    void aManualTickerMovesOnlyWhenToldAndItsNanosWithIt() {
        ManualTicker ticker = new ManualTicker(5_000);
        assertThat(ticker.millis()).isEqualTo(5_000);
        assertThat(ticker.nanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(5_000));

        ticker.advance(Duration.ofSeconds(2));
        ticker.advanceMillis(3);

        assertThat(ticker.millis()).isEqualTo(7_003);
        assertThat(ticker.nanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(7_003));
    }
}
