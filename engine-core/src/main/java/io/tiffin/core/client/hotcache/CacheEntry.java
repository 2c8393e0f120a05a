package io.tiffin.core.client.hotcache;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One cached object: its key, the version and size it had when it was fetched, and the blocks that
 * hold its bytes.
 *
 * <p>Thread-safe. Readers {@link #acquire()} before copying and {@link #release()} after; the
 * maintenance thread {@link #retire()}s an entry when it is evicted, invalidated or replaced. The
 * blocks go back to the free pool only when the entry is retired and its last reader has released it,
 * so a block is never rewritten while someone copies from it.
 */
final class CacheEntry {
    private static final int RETIRED = 1 << 30;

    final String key;
    final long keyHash;
    final long version;
    final long size;
    final int[] blocks;
    /** Reader count, plus {@link #RETIRED} once retired. */
    private final AtomicInteger state = new AtomicInteger();
    /** Where the blocks go back once the entry is retired and unpinned. */
    private final BlockPool owner;

    CacheEntry(String key, long keyHash, long version, long size, int[] blocks, BlockPool owner) {
        this.key = key;
        this.keyHash = keyHash;
        this.version = version;
        this.size = size;
        this.blocks = blocks;
        this.owner = owner;
    }

    /** Pins the entry for reading; false if it was retired. */
    boolean acquire() {
        while (true) {
            int s = state.get();
            if ((s & RETIRED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    void release() {
        if (state.decrementAndGet() == RETIRED) {
            owner.reclaim(this);
        }
    }

    /** Marks the entry gone; its blocks are reclaimed now or when the last reader releases. Once only. */
    void retire() {
        int before = state.getAndAdd(RETIRED);
        if ((before & RETIRED) != 0) {
            throw new IllegalStateException("entry " + key + " retired twice");
        }
        if (before == 0) {
            owner.reclaim(this);
        }
    }

    boolean isRetired() {
        return (state.get() & RETIRED) != 0;
    }
}
