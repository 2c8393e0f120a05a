package io.tiffin.core.util;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TickerTest {

    @Test
    void theSystemTickerStartsAtTheWallClockAndNeverGoesBack() throws InterruptedException {
        long wall = System.currentTimeMillis();
        long first = Ticker.SYSTEM.millis();
        assertThat(first).as("near the wall clock (the master seeds versions from it)").isBetween(wall - 60_000, wall + 60_000);
        long last = first;
        for (int i = 0; i < 10_000; i++) {
            long now = Ticker.SYSTEM.millis();
            assertThat(now).isGreaterThanOrEqualTo(last);
            last = now;
        }
        long beforeSleep = Ticker.SYSTEM.millis();
        Thread.sleep(30);
        assertThat(Ticker.SYSTEM.millis() - beforeSleep).as("it advances with time").isGreaterThanOrEqualTo(29);
    }
}
