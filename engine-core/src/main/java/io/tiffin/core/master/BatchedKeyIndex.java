package io.tiffin.core.master;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The master's ordered key index ({@link KeyIndex}) with its changes applied in batches: an add or a remove is
 * appended to a buffer, and the buffer is applied to the index in arrival order, under one hold of the index's
 * write lock, once it holds {@value #DEFAULT_BATCH} changes, or before anything reads the index ({@link #from}).
 * Readers therefore see every change made before they asked, as with the index alone. (The key count is
 * {@link ObjectTable}'s counter, which reads nothing here.)
 *
 * <p>Why: every PutStart of a new key changes the index, and the master's event loops (one per processor) do it at
 * the same time; one write-lock hold per key parked a loop about 16,000 times a second during a BatchPut of 4 KiB
 * values, and the index's updates were about a sixth of the master's CPU per key (docs/BENCHMARKS.md, "The key
 * index's updates in batches").
 *
 * <p>Order: changes of one key are made under its shard's lock ({@link ObjectTable}), so they reach the buffer in
 * the order they were made, and batches are applied one at a time in the order they were taken from the buffer
 * (the {@link #applying} lock is held from taking a batch to the end of applying it).
 *
 * <p>Thread-safe: {@link #add} and {@link #remove} take the buffer's monitor for a few stores (a writer that fills
 * it applies the batch itself unless another thread is applying one, which then applies this one too); readers
 * apply what is buffered first.
 */
final class BatchedKeyIndex {
    static final int DEFAULT_BATCH = 1024;

    private final KeyIndex index;
    private final int batch;
    /** Held from taking a batch out of the buffer until it is applied: batches are applied in order. */
    private final ReentrantLock applying = new ReentrantLock();
    /** Guards the buffer arrays and {@link #count}. */
    private final Object buffer = new Object();
    private String[] keys;
    private boolean[] adds;
    private int count;

    BatchedKeyIndex() {
        this(new KeyIndex(), DEFAULT_BATCH);
    }

    /** @param batch buffered changes that make a writer apply them (at least 1) */
    BatchedKeyIndex(KeyIndex index, int batch) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch = " + batch + " (expected: >= 1, e.g. " + DEFAULT_BATCH + ")");
        }
        this.index = Objects.requireNonNull(index, "index");
        this.batch = batch;
        this.keys = new String[batch];
        this.adds = new boolean[batch];
    }

    /** Adds {@code key} (nothing changes if it is there). */
    void add(String key) {
        append(Objects.requireNonNull(key, "key"), true);
    }

    /** Removes {@code key} (nothing changes if it is not there). */
    void remove(String key) {
        append(Objects.requireNonNull(key, "key"), false);
    }

    /** As {@link KeyIndex#from}, every change made before the call applied first. */
    Iterable<String> from(String fromInclusive) {
        Objects.requireNonNull(fromInclusive, "fromInclusive");
        flush();
        return index.from(fromInclusive);
    }

    private void append(String key, boolean add) {
        boolean full;
        synchronized (buffer) {
            if (count == keys.length) {
                // full while another thread applies a batch (it takes this one next): grow rather than wait
                keys = Arrays.copyOf(keys, count * 2);
                adds = Arrays.copyOf(adds, count * 2);
            }
            keys[count] = key;
            adds[count] = add;
            count++;
            full = count >= batch;
        }
        if (full && applying.tryLock()) {
            try {
                applyBuffered();
            } finally {
                applying.unlock();
            }
        }
    }

    /** Applies every change buffered before the call. */
    void flush() {
        applying.lock();
        try {
            applyBatch();
        } finally {
            applying.unlock();
        }
    }

    /** A writer filled the buffer: applies batches while a whole one waits (others keep appending meanwhile). */
    private void applyBuffered() {
        while (applyBatch() && pending() >= batch) {
            // the next batch filled while this one was applied
        }
    }

    private int pending() {
        synchronized (buffer) {
            return count;
        }
    }

    /** Takes what the buffer holds and applies it; false if it held nothing. Caller holds {@link #applying}. */
    private boolean applyBatch() {
        String[] k;
        boolean[] a;
        int n;
        synchronized (buffer) {
            n = count;
            if (n == 0) {
                return false;
            }
            k = keys;
            a = adds;
            // fresh arrays, about 5 bytes per change: cheaper than keeping a spare pair, and a young array takes
            // the keys' references without the card marks of an old one
            keys = new String[batch];
            adds = new boolean[batch];
            count = 0;
        }
        index.applyAll(k, a, n);
        return true;
    }
}
