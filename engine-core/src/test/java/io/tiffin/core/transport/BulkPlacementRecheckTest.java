package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.ManualTicker;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The placer is asked again at most once per {@link BulkPlacement#RECHECK_NANOS}, and its refusal ends the windows. */
class BulkPlacementRecheckTest {
    @Test
    void rechecksAtMostOncePerIntervalAndStopsAtARefusal() {
        ManualTicker ticker = new ManualTicker();
        BulkPlacement placement = new BulkPlacement(ticker);
        AtomicInteger asked = new AtomicInteger();
        AtomicBoolean refuse = new AtomicBoolean();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dst = arena.allocate(1 << 20);
            placement.start(dst, Unpooled.EMPTY_BUFFER, 0, 0, () -> {
                asked.incrementAndGet();
                if (refuse.get()) {
                    throw new TiffinException(ErrorCode.REPLICA_IS_GONE, "grant expired");
                }
            });
            for (int i = 0; i < 3; i++) { // reads within the interval: the start's check stands
                take(placement, 1024);
            }
            assertThat(asked.get()).isZero();

            ticker.advance(Duration.ofNanos(BulkPlacement.RECHECK_NANOS));
            take(placement, 1024);
            take(placement, 1024);
            assertThat(asked.get()).as("once for the two reads after the interval").isEqualTo(1);

            refuse.set(true);
            ticker.advance(Duration.ofNanos(BulkPlacement.RECHECK_NANOS));
            assertThat(placement.nextWindow()).as("no window once the placer refuses").isNull();
            assertThat(placement.lapsed()).hasMessageContaining("grant expired");
            assertThat(placement.nextWindow()).isNull();
            assertThat(asked.get()).as("a refusal is not asked again").isEqualTo(2);
            assertThat(placement.received()).isEqualTo(5 * 1024);
            placement.end();
            assertThat(placement.nextWindow()).as("nothing placed after the end").isNull();
        }
    }

    /** One socket read of {@code n} bytes into the window the placement hands out. */
    private static void take(BulkPlacement placement, int n) {
        ByteBuf window = placement.nextWindow();
        assertThat(window).isNotNull();
        window.writerIndex(n);
        placement.take(window);
        window.release();
    }
}
