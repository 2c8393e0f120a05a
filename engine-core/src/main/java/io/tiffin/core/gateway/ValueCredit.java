package io.tiffin.core.gateway;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The buffers one store call reads values into, with their memory reserved in the {@link MemoryBudget}: what
 * a batch is expected to need is reserved in one piece before the call ({@link #expect}), so that two
 * batches can never each hold half of what they need while waiting for the other's half; a buffer beyond it
 * (an unknown or grown size) is reserved when it is allocated.
 *
 * <p>Not thread-safe: one store call on one thread uses it.
 */
final class ValueCredit implements GatewayStore.ValueBuffers {
    private final MemoryBudget budget;
    private final ByteBufAllocator alloc;
    /** Reserved and not yet given to a buffer. */
    private long credit;
    /** Reserved in all, given to buffers or not. */
    private long reserved;

    ValueCredit(MemoryBudget budget, ByteBufAllocator alloc) {
        this.budget = budget;
        this.alloc = alloc;
    }

    /** Reserves, in one piece, the memory of values of {@code sizes} bytes in all (framing included). */
    void expect(long bytes) {
        if (bytes > 0) {
            budget.reserveForValues(bytes);
            credit += bytes;
            reserved += bytes;
        }
    }

    @Override
    public ByteBuf allocate(int size) {
        int capacity = MemoryBudget.valueCapacity(size);
        if (capacity > credit) {
            budget.reserveForValues(capacity - credit);
            reserved += capacity - credit;
            credit = capacity;
        }
        ByteBuf buf = MemoryBudget.valueBuffer(alloc, size);
        credit -= capacity;
        return buf;
    }

    /** The buffer's memory stays reserved for this call's next buffers. */
    @Override
    public void giveBack(ByteBuf buf) {
        credit += buf.capacity();
        buf.release();
    }

    /**
     * Gives back what was reserved and not given to a buffer, and returns what stays reserved: the buffers'
     * memory, which the caller releases once their replies are written.
     */
    long settle() {
        budget.release(credit);
        reserved -= credit;
        credit = 0;
        long held = reserved;
        reserved = 0;
        return held;
    }
}
