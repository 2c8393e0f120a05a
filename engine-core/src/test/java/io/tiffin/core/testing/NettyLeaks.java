package io.tiffin.core.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
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
 * Turns Netty's leak reports (logged at ERROR by {@link ResourceLeakDetector}) into test failures: a
 * Log4j appender collects them, {@link #assertNoLeaks()} forces collection and checks. Shared by the transport
 * and gateway tests. Allocates and releases its own probe buffers only.
 *
 * <p>Thread-safe.
 */
public final class NettyLeaks {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static boolean installed;

    private NettyLeaks() {
    }

    /** Starts collecting Netty's leak reports; call before the test's first buffer. */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration config = context.getConfiguration();
        AbstractAppender appender = new AbstractAppender("netty-leaks", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                String message = event.getMessage().getFormattedMessage();
                if (message.contains("LEAK")) {
                    // The creation and access records name the culprit; keep enough of them to find it.
                    LEAKS.add(message.length() > 4000 ? message.substring(0, 4000) + "..." : message);
                }
            }
        };
        appender.start();
        config.addAppender(appender);
        LoggerConfig logger = LoggerConfig.newBuilder()
                .setLoggerName(ResourceLeakDetector.class.getName())
                .setLevel(Level.ERROR)
                .setAdditivity(true)
                .setConfig(config)
                .build();
        logger.addAppender(appender, Level.ERROR, null);
        config.addLogger(logger.getName(), logger);
        context.updateLoggers();
    }

    /** Collects garbage, lets the detector poll its queue and fails if any leak was reported. */
    public static void assertNoLeaks() {
        for (int round = 0; round < 5; round++) {
            collectGarbage();
            for (int i = 0; i < 100; i++) {
                // Every tracked allocation makes the detector report collected, unreleased buffers.
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(8);
                pooled.release();
                ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.heapBuffer(8);
                unpooled.release();
            }
        }
        assertThat(LEAKS).as("Netty buffer leaks").isEmpty();
    }

    /**
     * Runs the collector until it has cleared a probe's weak reference and the reference handler has
     * queued it: the unreleased buffers collected with it are then on the leak detector's queue too.
     */
    private static void collectGarbage() {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> probe = new WeakReference<>(new Object(), queue);
        await("a garbage collection").atMost(Duration.ofSeconds(10)).pollInSameThread()
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10)).until(() -> {
            System.gc();
            return queue.poll() != null;
        });
        Reference.reachabilityFence(probe);
    }
}
