package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The gateway's memory for commands and replies in flight, shared by all connections
 * ({@code gateway.max-memory}). Values are reserved before their buffers are allocated and released when
 * the buffers are: a command's when it has run, a reply's when it has been written to the socket.
 *
 * <p>A reservation that does not fit waits (a connection stops reading; a reply's thread blocks) rather
 * than failing, except that a caller holding everything in use is always granted its reservation, so a
 * value larger than the whole budget still passes when nothing else is in flight and two halves of one
 * command can never wait for each other.
 *
 * <p>Thread-safe. Reservations that fit and releases nobody waits for take no lock.
 */
final class MemoryBudget {
    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    /** Threads blocked in {@link #reserve} plus registered waiters; releases signal only when it is positive. */
    private final AtomicLong waiting = new AtomicLong();
    /**
     * Releases and partial writes of replies so far: a waiter whose wait sees either is not stuck (memory is
     * being given back, or a reply that holds it is reaching its client, however slowly) and waits on.
     */
    private final AtomicLong progress = new AtomicLong();
    /** Called once each when memory is released. Guarded by lock. */
    private List<Runnable> waiters = new ArrayList<>();

    MemoryBudget(long limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("gateway.max-memory = " + limit + " (expected: > 0)");
        }
        this.limit = limit;
    }

    long limit() {
        return limit;
    }

    long used() {
        return used.get();
    }

    /** Whether everything reserved reaches the limit (connections then pause at their next command). */
    boolean exhausted() {
        return used.get() >= limit;
    }

    /**
     * Reserves {@code n} bytes if they fit, or if the caller already holds all that is in use
     * ({@code heldByCaller >= used}); returns whether it did.
     */
    boolean tryReserve(long n, long heldByCaller) {
        while (true) {
            long u = used.get();
            if (u + n > limit && heldByCaller < u) {
                return false;
            }
            if (used.compareAndSet(u, u + n)) {
                return true;
            }
        }
    }

    /** Counts {@code n} bytes that are already in memory (a received command), fitting or not. */
    void forceReserve(long n) {
        used.addAndGet(n);
    }

    /**
     * Reserves {@code n} bytes, waiting for them (on a thread that may block, never an event loop) as long as
     * memory is being released or replies written ({@link #writeProgressed}), and giving up when neither
     * happened for {@code timeout} (the memory is held by what cannot go on, e.g. the caller's own earlier
     * reservations, or by replies to clients that stopped reading); granted at once when nothing else is in use.
     * Returns whether it reserved them.
     */
    boolean reserve(long n, long timeout, TimeUnit unit) throws InterruptedException {
        if (tryReserve(n, 0)) {
            return true;
        }
        long stall = unit.toNanos(timeout);
        long left = stall;
        long seen = progress.get();
        waiting.incrementAndGet();
        lock.lock();
        try {
            while (!tryReserve(n, 0)) {
                long now = progress.get();
                if (now != seen) {
                    seen = now;
                    left = stall; // memory released or replies being written: keep waiting
                }
                if (left <= 0) {
                    return false;
                }
                left = released.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
            waiting.decrementAndGet();
        }
    }

    /** Gives back {@code n} reserved bytes and wakes whoever waits for memory. */
    void release(long n) {
        if (n == 0) {
            return;
        }
        long u = used.addAndGet(-n);
        progress.incrementAndGet();
        if (u < 0) {
            throw new IllegalStateException("gateway memory released twice: " + u + " bytes in use");
        }
        if (waiting.get() == 0) {
            return;
        }
        List<Runnable> wake;
        lock.lock();
        try {
            released.signalAll();
            wake = waiters;
            waiters = new ArrayList<>();
            waiting.addAndGet(-wake.size());
        } finally {
            lock.unlock();
        }
        wake.forEach(Runnable::run);
    }

    /**
     * Notes that part of a reply holding reserved memory reached its socket: a client that reads a large reply
     * slowly keeps its memory for long without a release, yet is no reason for a waiting reservation to give up.
     * Wakes nobody (a waiter looks at it when its wait ends); called on event loops, so it only counts.
     */
    void writeProgressed() {
        progress.incrementAndGet();
    }

    /**
     * Runs {@code r} once memory is released next (at once if nothing is in use). {@code r} runs on the
     * releasing thread and must only hand work over (e.g. to an event loop).
     */
    void whenReleased(Runnable r) {
        lock.lock();
        try {
            waiting.incrementAndGet();
            if (used.get() > 0) {
                waiters.add(r);
                return;
            }
            waiting.decrementAndGet();
        } finally {
            lock.unlock();
        }
        r.run();
    }

    /**
     * How long a reply's value waits for memory while none is released and no reply is being written before its
     * command fails.
     */
    static final long VALUE_WAIT_SECONDS = 10;

    /** The memory a value of {@code size} bytes takes with its reply's framing ({@link EncodedReply}). */
    static int valueCapacity(int size) {
        return size + EncodedReply.HEADROOM + EncodedReply.TAILROOM;
    }

    /**
     * Reserves {@code n} bytes for values to be read, waiting for room as long as memory is being released.
     *
     * @throws TiffinException {@code NO_AVAILABLE_HANDLE} after {@link #VALUE_WAIT_SECONDS} without a release or
     *     a reply's bytes written,
     *     {@code UNAVAILABLE_IN_CURRENT_STATUS} when the thread is interrupted (the gateway is stopping)
     */
    void reserveForValues(long n) {
        boolean ok;
        try {
            ok = reserve(n, VALUE_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the gateway is stopping");
        }
        if (!ok) {
            throw new TiffinException(ErrorCode.NO_AVAILABLE_HANDLE, "the gateway's memory for values in flight"
                    + " (gateway.max-memory = " + limit + " bytes) stayed full for " + VALUE_WAIT_SECONDS
                    + "s with nothing released and no reply being written (clients that stopped reading their replies, or a"
                    + " reply larger than the memory?); retry, or raise gateway.max-memory");
        }
    }

    /**
     * A direct buffer for a value of {@code size} bytes whose memory ({@link #valueCapacity}) the caller has
     * reserved, with room for its reply's framing before and after it (its readable part starts after that
     * room).
     *
     * @throws TiffinException {@code NO_AVAILABLE_HANDLE} when the memory cannot be had
     */
    static ByteBuf valueBuffer(ByteBufAllocator alloc, int size) {
        int capacity = valueCapacity(size);
        try {
            return alloc.directBuffer(capacity, capacity).setIndex(EncodedReply.HEADROOM, EncodedReply.HEADROOM);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw new TiffinException(ErrorCode.NO_AVAILABLE_HANDLE, "the gateway cannot allocate " + size
                    + " bytes for a value: " + e, e);
        }
    }
}
