package io.tiffin.core.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
 * <p>Thread-safe.
 */
final class MemoryBudget {
    private final long limit;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    /** Guarded by lock. */
    private long used;
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
        lock.lock();
        try {
            return used;
        } finally {
            lock.unlock();
        }
    }

    /** Whether everything reserved exceeds the limit (connections then pause at their next command). */
    boolean exhausted() {
        lock.lock();
        try {
            return used >= limit;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reserves {@code n} bytes if they fit, or if the caller already holds all that is in use
     * ({@code heldByCaller >= used}); returns whether it did.
     */
    boolean tryReserve(long n, long heldByCaller) {
        lock.lock();
        try {
            if (used + n <= limit || heldByCaller >= used) {
                used += n;
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Counts {@code n} bytes that are already in memory (a received command), fitting or not. */
    void forceReserve(long n) {
        lock.lock();
        try {
            used += n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reserves {@code n} bytes, waiting up to {@code timeout} for them (on a thread that may block, never
     * an event loop); returns whether it did.
     */
    boolean reserve(long n, long timeout, TimeUnit unit) throws InterruptedException {
        long left = unit.toNanos(timeout);
        lock.lock();
        try {
            while (used + n > limit && used > 0) {
                if (left <= 0) {
                    return false;
                }
                left = released.awaitNanos(left);
            }
            used += n;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Gives back {@code n} reserved bytes and calls the waiters registered meanwhile. */
    void release(long n) {
        if (n == 0) {
            return;
        }
        List<Runnable> wake;
        lock.lock();
        try {
            used -= n;
            if (used < 0) {
                throw new IllegalStateException("gateway memory released twice: " + used + " bytes in use");
            }
            released.signalAll();
            if (waiters.isEmpty()) {
                return;
            }
            wake = waiters;
            waiters = new ArrayList<>();
        } finally {
            lock.unlock();
        }
        wake.forEach(Runnable::run);
    }

    /**
     * Runs {@code r} once memory is released next (at once if nothing is in use). {@code r} runs on the
     * releasing thread and must only hand work over (e.g. to an event loop).
     */
    void whenReleased(Runnable r) {
        lock.lock();
        try {
            if (used > 0) {
                waiters.add(r);
                return;
            }
        } finally {
            lock.unlock();
        }
        r.run();
    }
}
