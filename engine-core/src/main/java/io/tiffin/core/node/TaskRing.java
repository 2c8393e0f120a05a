package io.tiffin.core.node;

import com.lmax.disruptor.BlockingWaitStrategy;
import com.lmax.disruptor.EventFactory;
import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.EventTranslator;
import com.lmax.disruptor.EventTranslatorOneArg;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The task queue of one SSD-tier worker: a bounded Disruptor ring of reusable slots with one daemon
 * consumer thread, started at construction. Publishing never blocks (a full ring refuses); a handler's
 * exception drops that task with an ERROR line (the master re-queues or times out what a node drops).
 *
 * <p>Thread-safe: any thread may publish; {@link #close()} is for the owner, once.
 */
final class TaskRing<E> implements AutoCloseable {
    private static final Logger LOG = LogManager.getLogger(TaskRing.class);

    private final Disruptor<E> disruptor;
    private final RingBuffer<E> ring;

    /** Starts a ring of {@code size} slots made by {@code slots}, consumed by {@code handler} on thread {@code name}-1. */
    TaskRing(String name, int size, EventFactory<E> slots, EventHandler<E> handler) {
        disruptor = new Disruptor<>(slots, size, daemonThreads(name), ProducerType.MULTI, new BlockingWaitStrategy());
        disruptor.handleEventsWith(handler);
        disruptor.setDefaultExceptionHandler(new ExceptionHandler<>() {
            @Override
            public void handleEventException(Throwable ex, long sequence, E event) {
                LOG.error("{} failed on a task; the task is dropped (the master re-queues or times it out)", name, ex);
            }

            @Override
            public void handleOnStartException(Throwable ex) {
                LOG.error("{} failed to start", name, ex);
            }

            @Override
            public void handleOnShutdownException(Throwable ex) {
                LOG.warn("{} failed to stop cleanly", name, ex);
            }
        });
        ring = disruptor.start();
    }

    /** Daemon threads named {@code name}-1, -2, ... */
    static ThreadFactory daemonThreads(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Fills a free slot with {@code translator}; false (nothing published) when the ring is full. */
    boolean tryPublish(EventTranslator<E> translator) {
        return ring.tryPublishEvent(translator);
    }

    /** Fills a free slot with {@code translator} and {@code arg}; false (nothing published) when the ring is full. */
    <A> boolean tryPublish(EventTranslatorOneArg<E, A> translator, A arg) {
        return ring.tryPublishEvent(translator, arg);
    }

    /** Lets the consumer finish the tasks taken (up to 5 s), then stops its thread. */
    @Override
    public void close() {
        try {
            disruptor.shutdown(5, TimeUnit.SECONDS);
        } catch (com.lmax.disruptor.TimeoutException e) {
            disruptor.halt();
        }
    }
}
