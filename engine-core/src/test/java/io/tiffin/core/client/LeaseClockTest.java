package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.ManualTicker;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The read-lease rule on the client's injected clock, and the translation of its moments for the transport. */
class LeaseClockTest {
    private static final ObjectLocation LEASED_100_MS = new ObjectLocation("k", 10, 1, 100, List.of());

    @Test
    void aReadMustEndWithinItsLeaseCountedFromItsStart() {
        ManualTicker ticker = new ManualTicker();
        LeaseClock clock = new LeaseClock(ticker);
        long start = clock.now();
        ticker.advanceMillis(99);
        assertThat(clock.withinLease(LEASED_100_MS, start)).isTrue();
        clock.checkLease(LEASED_100_MS, start);
        ticker.advanceMillis(1);
        assertThat(clock.withinLease(LEASED_100_MS, start)).isFalse();
        assertThatThrownBy(() -> clock.checkLease(LEASED_100_MS, start))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LEASE_EXPIRED))
                .hasMessageContaining("k: the read took 100 ms but the lease lasted 100 ms");
    }
}
