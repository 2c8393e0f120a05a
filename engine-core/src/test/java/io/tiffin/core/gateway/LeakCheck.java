package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * What the gateway tests check after their connections have closed: every byte counted in the gateway's
 * memory was given back (reserved and released exactly once), every value buffer went back to its pool, every
 * value the store lent for a reply was released, and
 * Netty's paranoid leak detector reported no buffer that was never released.
 *
 * <p>Thread-safe.
 */
final class LeakCheck {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private LeakCheck() {
    }

    /** Starts collecting Netty's leak reports; call before the test's first buffer. */
    static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        AbstractAppender appender = new AbstractAppender("gateway-leaks", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                String message = event.getMessage().getFormattedMessage();
                if (message.contains("LEAK")) {
                    LEAKS.add(message.length() > 4000 ? message.substring(0, 4000) + "..." : message);
                }
            }
        };
        appender.start();
        config.addAppender(appender);
        LoggerConfig logger = LoggerConfig.newBuilder().setLoggerName(ResourceLeakDetector.class.getName())
                .setLevel(Level.ERROR).setAdditivity(true).setConfig(config).build();
        logger.addAppender(appender, Level.ERROR, null);
        config.addLogger(logger.getName(), logger);
        context.updateLoggers();
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
        // the detector reports a buffer once it is garbage; collect for a while and watch for reports
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> {
            System.gc();
            for (int i = 0; i < 200; i++) {
                ByteBuf probe = ByteBufAllocator.DEFAULT.directBuffer(8);
                probe.release();
            }
            return LEAKS.isEmpty();
        });
        assertThat(LEAKS).as("Netty buffer leaks").isEmpty();
    }
}
