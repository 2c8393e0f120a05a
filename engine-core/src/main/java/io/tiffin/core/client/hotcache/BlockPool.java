package io.tiffin.core.client.hotcache;

import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The numbers of the blocks no entry holds, and the entries whose blocks come back once their last
 * reader has let go.
 *
 * <p>Thread-safety: {@link #reclaim} is thread-safe (the last reader of a retired entry calls it from
 * any thread); everything else belongs to the maintenance thread, which alone takes and returns blocks.
 */
final class BlockPool {
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final ConcurrentLinkedQueue<CacheEntry> reclaimed = new ConcurrentLinkedQueue<>();

    /** A pool in which blocks 0 to {@code blockCount - 1} are all free. */
    BlockPool(int blockCount) {
        for (int i = 0; i < blockCount; i++) {
            free.add(i);
        }
    }

    /** A retired entry nobody reads any more: its blocks return at the next {@link #drainReclaimed()}. */
    void reclaim(CacheEntry e) {
        reclaimed.add(e);
    }

    /** Returns the blocks of every entry reclaimed so far to the free pool. */
    void drainReclaimed() {
        CacheEntry e;
        while ((e = reclaimed.poll()) != null) {
            giveBack(e.blocks);
        }
    }

    /** Blocks free now (reclaimed entries not drained yet not counted). */
    int free() {
        return free.size();
    }

    /** Takes {@code n} free blocks; the caller has checked that {@link #free()} is at least {@code n}. */
    int[] take(int n) {
        int[] blocks = new int[n];
        for (int i = 0; i < n; i++) {
            blocks[i] = free.poll();
        }
        return blocks;
    }

    /** Returns blocks that no entry holds (an aborted reservation, a fill that failed). */
    void giveBack(int[] blocks) {
        for (int b : blocks) {
            free.add(b);
        }
    }
}
