package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.tiffin.api.KeyResult;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Puts of many connections at once go to the store as one batch call (group commit): a connection whose
 * put finds no other batch under way stores its own at once; puts that arrive meanwhile wait, and the
 * next of them to run stores them all together. A single put pays no waiting; many concurrent puts (each
 * connection has one command at a time in flight) cost one store round trip per batch instead of one each,
 * which is what makes small SETs fast: Tiffin's put is two master calls, its batch put two for the batch.
 *
 * <p>A batch holds each key once: a put of a key already in the batch waits for the next one, so of two
 * concurrent SETs of a key the later one to be batched wins, as one of them must.
 *
 * <p>Thread-safe. Callers block (on their virtual threads) until their puts are done.
 */
final class PutCombiner {
    /** Most keys of one batch call. */
    private static final int MAX_KEYS = 512;
    /** Most rounds one caller runs for others before leaving the rest to the next caller. */
    private static final int MAX_ROUNDS = 8;

    private final GatewayStore store;
    private final GatewayStats stats;
    private final ConcurrentLinkedQueue<Request> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean leading = new AtomicBoolean();

    /**
     * One caller's puts and, once done, their results or the failure of their batch.
     *
     * <p>Thread-safe: the results are published through volatile fields before the caller is woken.
     */
    private static final class Request {
        final List<String> keys;
        final List<ByteBuf> values;
        final Thread waiter = Thread.currentThread();
        volatile List<KeyResult<Void>> results;
        volatile RuntimeException failure;

        Request(List<String> keys, List<ByteBuf> values) {
            this.keys = keys;
            this.values = values;
        }

        boolean done() {
            return results != null || failure != null;
        }
    }

    PutCombiner(GatewayStore store, GatewayStats stats) {
        this.store = store;
        this.stats = stats;
    }

    /**
     * Stores {@code values} under {@code keys} (distinct), with the puts of other connections under way, and
     * returns one result per key; throws what the store threw for a batch that failed as a whole.
     */
    List<KeyResult<Void>> putAll(List<String> keys, List<ByteBuf> values) {
        Request mine = new Request(keys, values);
        pending.add(mine);
        while (!mine.done()) {
            if (leading.compareAndSet(false, true)) {
                try {
                    lead();
                } finally {
                    leading.set(false);
                }
                // puts queued after the last round: wake one of their callers to take over
                Request next = pending.peek();
                if (next != null && next != mine) {
                    LockSupport.unpark(next.waiter);
                }
            } else if (!mine.done()) {
                LockSupport.park(this);
            }
        }
        if (mine.failure != null) {
            throw mine.failure;
        }
        return mine.results;
    }

    /** Runs batches of what is queued, a few rounds at most. */
    private void lead() {
        List<Request> deferred = new ArrayList<>();
        for (int round = 0; round < MAX_ROUNDS; round++) {
            List<Request> batch = new ArrayList<>();
            Set<String> keys = new HashSet<>();
            int size = 0;
            List<Request> carried = deferred;
            deferred = new ArrayList<>();
            for (Request r : carried) {
                size = take(r, batch, keys, deferred, size);
            }
            Request r;
            while (size < MAX_KEYS && (r = pending.poll()) != null) {
                size = take(r, batch, keys, deferred, size);
            }
            if (batch.isEmpty()) {
                break;
            }
            run(batch);
        }
        for (Request r : deferred) {
            pending.add(r); // rare: the same key again; the next leader takes it
        }
    }

    /** Adds {@code r} to the batch unless one of its keys is in it already; returns the batch's size. */
    private static int take(Request r, List<Request> batch, Set<String> keys, List<Request> deferred, int size) {
        for (String k : r.keys) {
            if (keys.contains(k)) {
                deferred.add(r);
                return size;
            }
        }
        keys.addAll(r.keys);
        batch.add(r);
        return size + r.keys.size();
    }

    private void run(List<Request> batch) {
        List<String> keys = new ArrayList<>();
        List<ByteBuf> values = new ArrayList<>();
        for (Request r : batch) {
            keys.addAll(r.keys);
            values.addAll(r.values);
        }
        stats.putBatches.increment();
        stats.putBatchKeys.add(keys.size());
        List<KeyResult<Void>> results;
        try {
            results = store.putAll(keys, values);
        } catch (RuntimeException e) {
            for (Request r : batch) {
                r.failure = e;
                LockSupport.unpark(r.waiter);
            }
            return;
        }
        int at = 0;
        for (Request r : batch) {
            r.results = List.copyOf(results.subList(at, at + r.keys.size()));
            at += r.keys.size();
            LockSupport.unpark(r.waiter);
        }
    }
}
