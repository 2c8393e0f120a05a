package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.tiffin.core.testing.NettyLeaks;
import java.time.Duration;

/**
 * What the gateway tests check after their connections have closed: every byte counted in the gateway's
 * memory was given back (reserved and released exactly once), every value buffer went back to its pool, every
 * value the store lent for a reply was released, and Netty's paranoid leak detector reported no buffer that was
 * never released ({@link NettyLeaks}).
 *
 * <p>Thread-safe.
 */
final class LeakCheck {
    private LeakCheck() {
    }

    /** Starts collecting Netty's leak reports; call before the test's first buffer. */
    static void install() {
        NettyLeaks.install();
    }

    /** The gateway holds no memory once its connections are gone, and no buffer leaked. */
    static void assertClean(GatewayServer gateway) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(gateway.connections()).isZero();
            assertThat(gateway.bufferedBytes()).as("bytes still counted in gateway.max-memory").isZero();
            assertThat(gateway.lentValues()).as("values lent by the store for replies and never released").isZero();
            assertThat(((PooledByteBufAllocator) ValueAllocator.POOL).metric().directArenas().stream()
                    .mapToLong(PoolArenaMetric::numActiveAllocations).sum()).as("value buffers not released").isZero();
        });
        NettyLeaks.assertNoLeaks();
    }
}
