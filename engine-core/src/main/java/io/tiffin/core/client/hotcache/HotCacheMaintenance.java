package io.tiffin.core.client.hotcache;

import io.tiffin.core.client.hotcache.MaintenanceRing.Event;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What the hot cache's maintenance thread does with each ring event: tells the policy of hits and
 * misses, admits and makes room for fills and reservations (evicting the policy's victims), copies
 * fills into their blocks, makes filled entries visible, and retires entries that left the key map.
 *
 * <p>The cache's own bookkeeping ({@link EntryIndex}, {@link BlockPool}) is done before each policy
 * call, so a policy that throws ({@link GuardedPolicy}) leaves it whole.
 *
 * <p>Not thread-safe: the maintenance thread alone runs it.
 */
final class HotCacheMaintenance {
    private static final Logger LOG = LogManager.getLogger(HotCacheMaintenance.class);
    /** Victims in a row the cache does not hold, after which a fill gives up making room. */
    static final int MAX_STRAY_VICTIMS = 1024;
    private final BlockRegion region;
    private final BlockPool pool;
    private final EntryIndex index;
    private final GuardedPolicy policy;
    private final HotCacheCounters counters;
    private boolean warnedStrays;

    HotCacheMaintenance(BlockRegion region, BlockPool pool, EntryIndex index, GuardedPolicy policy,
                        HotCacheCounters counters) {
        this.region = region;
        this.pool = pool;
        this.index = index;
        this.policy = policy;
        this.counters = counters;
    }

    /** Handles one event; the ring releases its buffers and clears it afterwards. */
    void handle(Event ev) {
        switch (ev.kind) {
            case HIT -> policy.onHit(ev.keyHash);
            case MISS -> policy.onMiss(ev.keyHash);
            case INVALIDATE -> {
                if (index.retireUnmapped(ev.keyHash, ev.key)) {
                    policy.onRemove(ev.keyHash);
                }
            }
            case FILL -> fill(ev);
            case RESERVE -> {
                int[] blocks = takeBlocks(ev);
                if (!ev.reserve.complete(blocks) && blocks != null) {
                    pool.giveBack(blocks); // the reserver gave up waiting
                }
            }
            case COMMIT -> install(ev.entry);
            case ABORT -> pool.giveBack(ev.blocks);
            case SYNC -> {
                pool.drainReclaimed();
                ev.sync.complete(pool.free());
            }
        }
    }

    private void fill(Event ev) {
        int[] blocks = takeBlocks(ev);
        if (blocks == null) {
            return;
        }
        try {
            region.copyIn(blocks, ev.parts, ev.size);
        } catch (RuntimeException e) {
            pool.giveBack(blocks); // a short fill: the blocks were never anyone's
            throw e;
        }
        install(new CacheEntry(ev.key, ev.keyHash, ev.version, ev.size, blocks, pool));
    }

    /**
     * Admission and room for the object of {@code ev}: null when it is already cached, collides, is not
     * admitted or no blocks can be freed; else the blocks, taken from the free pool.
     */
    private int[] takeBlocks(Event ev) {
        int weight = region.blocksFor(ev.size);
        switch (index.judge(ev.key, ev.keyHash, ev.version, ev.size)) {
            case CACHED -> {
                return null;
            }
            case REFUSED -> {
                counters.rejectedFills.increment();
                return null;
            }
            case TAKE -> {
                // an older version of this key, if resident, goes first
                if (index.retireResident(ev.key, ev.keyHash)) {
                    policy.onRemove(ev.keyHash);
                }
            }
        }
        if (!policy.admit(ev.keyHash, weight)) {
            counters.rejectedFills.increment();
            return null;
        }
        pool.drainReclaimed();
        int strays = 0; // victims the cache does not hold: a policy (plugin code) that keeps naming them would spin
        while (pool.free() < weight) {
            long victim = policy.victim();
            if (victim == -1) {
                break;
            }
            if (index.evict(victim)) {
                counters.evictions.increment();
            } else if (++strays > MAX_STRAY_VICTIMS) {
                if (!warnedStrays) {
                    warnedStrays = true;
                    LOG.warn("Hot-cache policy {} named {} victims in a row that the cache does not hold (it must name"
                            + " a key it was told of by onAdd and not yet removed); fills are dropped while it does:"
                            + " fix the plugin or choose another hotcache.policy", policy.pluginName(), strays);
                }
                break;
            }
            policy.onRemove(victim);
            pool.drainReclaimed();
        }
        if (pool.free() < weight) {
            counters.droppedFills.increment(); // blocks still pinned by readers
            return null;
        }
        return pool.take(weight);
    }

    /** Makes a filled entry visible, unless another copy of the key got there first. */
    private void install(CacheEntry e) {
        if (!index.mayInstall(e)) {
            e.retire(); // never visible: its blocks come back once its reserver unpins it
            return;
        }
        if (index.retireResident(e.key, e.keyHash)) {
            policy.onRemove(e.keyHash);
        }
        if (!policy.onInsert(e.keyHash, e.blocks.length)) {
            e.retire(); // a copy the policy does not know could never be evicted: not kept
            return;
        }
        index.install(e);
        counters.fills.increment();
    }
}
