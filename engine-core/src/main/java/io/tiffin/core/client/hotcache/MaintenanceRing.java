package io.tiffin.core.client.hotcache;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.SleepingWaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The hot cache's cache-put ring: a Disruptor whose single consumer, the maintenance thread
 * ({@code tiffin-hotcache-fill}), hands every event to {@link HotCacheMaintenance}. Records, fills and
 * reservations are dropped when the ring is full; invalidations, commits, aborts and syncs must not be
 * lost and wait for a free slot. Only {@link #sync()} and a reservation's answer wait for the consumer.
 *
 * <p>Hit and miss records are published without waking the consumer (they wait for its next nap to
 * end, so a read pays no thread wake-up) and are dropped when the ring is full; everything a caller
 * waits for or that frees memory (fills, reservations, commits, aborts, invalidations, syncs) wakes it.
 * A fill's buffers are released exactly once: after its event is handled, or by {@link #close()} if it
 * never was.
 *
 * <p>Owns the consumer thread; {@link #close()} (once, by the cache) drains and stops it.
 *
 * <p>Thread-safe: any thread publishes.
 */
final class MaintenanceRing {
    private static final Logger LOG = LogManager.getLogger(LocalHotCache.class);
    /** The consumer naps this long when idle. */
    private static final long CONSUMER_NAP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** What an event asks of the maintenance thread. */
    enum Kind { HIT, MISS, FILL, INVALIDATE, SYNC, RESERVE, COMMIT, ABORT }

    /** A reusable ring slot; the fields a kind does not use are null. */
    static final class Event {
        Kind kind;
        String key;
        long keyHash;
        long version;
        long size;
        /** FILL: the received buffers, owned by the event until it is handled. */
        List<ByteBuf> parts;
        CompletableFuture<Integer> sync;
        /** RESERVE: answered with the reserved blocks, or null when the object is not taken. */
        CompletableFuture<int[]> reserve;
        /** COMMIT: the filled entry to install. */
        CacheEntry entry;
        /** ABORT: the blocks that go back. */
        int[] blocks;

        void clear() {
            key = null;
            parts = null;
            sync = null;
            reserve = null;
            entry = null;
            blocks = null;
        }

        void releaseParts() {
            if (parts != null) {
                parts.forEach(ByteBuf::release);
                parts = null;
            }
        }
    }

    private final Disruptor<Event> disruptor;
    private final EventHandler<Event> handler;
    private final RingBuffer<Event> ring;
    /** The consumer thread, once started. */
    private volatile Thread consumer;

    /**
     * Starts the consumer thread.
     *
     * @param ringSize slots, a power of two
     * @param maintenance what the consumer does with each event
     */
    MaintenanceRing(int ringSize, HotCacheMaintenance maintenance) {
        this.handler = (ev, sequence, endOfBatch) -> {
            try {
                maintenance.handle(ev);
            } catch (RuntimeException e) {
                // logged here, while the event still names its key (the ring's own handler sees it cleared)
                LOG.error("Hot cache maintenance failed on a {} event for {}; the event is dropped", ev.kind, ev.key,
                        e);
            } finally {
                ev.releaseParts();
                ev.clear();
            }
        };
        this.disruptor = new Disruptor<>(Event::new, ringSize, r -> {
            Thread t = new Thread(r, "tiffin-hotcache-fill");
            consumer = t;
            t.setDaemon(true);
            return t;
        }, ProducerType.MULTI, new SleepingWaitStrategy(0, CONSUMER_NAP_NANOS));
        disruptor.handleEventsWith(handler);
        disruptor.setDefaultExceptionHandler(new ExceptionHandler<>() {
            @Override
            public void handleEventException(Throwable ex, long sequence, Event event) {
                LOG.error("Hot cache maintenance failed on a {} event for {}; the event is dropped", event.kind,
                        event.key, ex);
                event.releaseParts();
                event.clear();
            }

            @Override
            public void handleOnStartException(Throwable ex) {
                LOG.error("Hot cache maintenance thread failed to start", ex);
            }

            @Override
            public void handleOnShutdownException(Throwable ex) {
                LOG.warn("Hot cache maintenance thread failed to stop cleanly", ex);
            }
        });
        this.ring = disruptor.start();
    }

    /** Records a hit or a miss for the policy, without waking the consumer; false if the ring was full. */
    boolean tryRecord(Kind kind, String key) {
        return ring.tryPublishEvent((ev, seq, k, kd) -> {
            ev.kind = kd;
            ev.key = k;
            ev.keyHash = EntryIndex.hash(k);
            ev.parts = null;
        }, key, kind);
    }

    /** Publishes a fill; on true the event owns {@code parts}, on false (ring full) the caller still does. */
    boolean tryFill(String key, long version, long size, List<ByteBuf> parts) {
        boolean published = ring.tryPublishEvent((ev, seq, k, p) -> {
            ev.kind = Kind.FILL;
            ev.key = k;
            ev.keyHash = EntryIndex.hash(k);
            ev.version = version;
            ev.size = size;
            ev.parts = p;
        }, key, parts);
        wakeConsumer();
        return published;
    }

    /** Asks for blocks for an object; {@code answer} is completed by the consumer. False if the ring was full. */
    boolean tryReserve(String key, long keyHash, long version, long size, CompletableFuture<int[]> answer) {
        boolean published = ring.tryPublishEvent((ev, seq, k, a) -> {
            ev.kind = Kind.RESERVE;
            ev.key = k;
            ev.keyHash = keyHash;
            ev.version = version;
            ev.size = size;
            ev.parts = null;
            ev.reserve = a;
        }, key, answer);
        wakeConsumer();
        return published;
    }

    /** Publishes a filled reservation's entry; waits for a free slot (it must not be lost). */
    void commit(CacheEntry entry) {
        ring.publishEvent((ev, seq, e) -> {
            ev.kind = Kind.COMMIT;
            ev.key = e.key;
            ev.keyHash = e.keyHash;
            ev.parts = null;
            ev.entry = e;
        }, entry);
        wakeConsumer();
    }

    /** Gives an aborted reservation's blocks back; waits for a free slot (they must not be lost). */
    void abort(String key, int[] blocks) {
        ring.publishEvent((ev, seq, b) -> {
            ev.kind = Kind.ABORT;
            ev.key = key;
            ev.parts = null;
            ev.blocks = b;
        }, blocks);
        wakeConsumer();
    }

    /**
     * Tells the consumer an entry left the key map; waits for a free slot: it must not be lost, since
     * the entry's blocks come back only through the maintenance thread.
     */
    void invalidate(String key, long keyHash) {
        ring.publishEvent((ev, seq, k) -> {
            ev.kind = Kind.INVALIDATE;
            ev.key = k;
            ev.keyHash = keyHash;
            ev.parts = null;
        }, key);
        wakeConsumer();
    }

    /** A future completed (with the free block count) once every event published before it was handled. */
    CompletableFuture<Integer> sync() {
        CompletableFuture<Integer> f = new CompletableFuture<>();
        ring.publishEvent((ev, seq, fut) -> {
            ev.kind = Kind.SYNC;
            ev.key = "";
            ev.sync = fut;
        }, f);
        wakeConsumer();
        return f;
    }

    private void wakeConsumer() {
        Thread t = consumer;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Handles what was published (at most 5 s), stops the consumer and releases unhandled fills' buffers. */
    void close() {
        try {
            disruptor.shutdown(5, TimeUnit.SECONDS);
        } catch (com.lmax.disruptor.TimeoutException e) {
            LOG.warn("Hot cache ring did not drain within 5 s at close");
            disruptor.halt();
        }
        // Fills published after the last handled event (racing with close) still own buffers.
        for (long seq = disruptor.getSequenceValueFor(handler) + 1; seq <= ring.getCursor(); seq++) {
            ring.get(seq).releaseParts();
        }
    }
}
