package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code w-tinylfu-tuned} policy: the cache follows whichever of several simulated caches is hitting best.
 * The shadows are caches of the same capacity without bytes (keys only): W-TinyLFU caches ({@link
 * WTinyLfuPolicy}) with fixed window shares from 1% (plain TinyLFU: frequency decides) to 100% (the window is
 * the whole cache: exactly LRU), an S3-FIFO cache ({@link S3FifoPolicy}, its paper's 10% small queue) and a
 * reuse-interval cache ({@link ReuseIntervalPolicy}: keeps the blocks predicted to be read soonest from their last
 * reuse interval, so a stable part of a loop larger than the cache); every read is replayed through all of them.
 * Every epoch ({@value #EPOCH} capacities of reads) the shadow with the most hits lately (hits per epoch, the
 * score multiplied by {@value #DECAY} each epoch: a memory of about {@code 1 / (1 - DECAY)} epochs) becomes the
 * leader if it beat the current leader by more than {@value #SWITCH_MARGIN_PERCENT}% and by more than {@value
 * #NOISE_Z} standard deviations of a difference of hit counts ({@code sqrt} of their sum, as for two Poisson
 * counts); the first is LRU, and ties go to the larger window (S3-FIFO, then reuse-interval, count as the
 * smallest).
 *
 * <p>Why the slow, noise-tested switching: each change costs the real cache a refill (it holds the old leader's
 * blocks and only takes the new one's as they are read again), and at small sizes the shadows hit a few times
 * per epoch, so the old rule (hits halved each epoch, a 2% margin) changed leader every few epochs on noise. On
 * the Mooncake trace at 1% of the distinct blocks the reuse-interval shadow hit 4.99% of the reads, and the real
 * cache 3.34% with the old rule against 4.90% with this one (cache-sim, LRU 3.43%). The price: on the synthetic
 * conversation trace at 5% the old rule profited from changing with the phases (25.1%, more than any single
 * shadow) and this one keeps S3-FIFO (23.9%). A paired test (counting only the reads one shadow hits and the
 * leader misses, and the converse) switched fast where it pays (24.9% there) but reached only 4.68% on the
 * Mooncake trace at 1%.
 *
 * <p>The real cache takes the leader's decisions rather than its parameters: it admits a key when the leader
 * holds it after the read (or while the cache has free room), and evicts first what the leader no longer holds
 * (the leader's evictions, and when the leader changes, every resident key the new one does not hold), else its least recently used entry. So
 * the resident set is the leader's within a few evictions of a change, and the cache hits about as well as the
 * best shadow of the moment: TinyLFU where a popular set recurs at distances LRU cannot keep, LRU where
 * recency wins (a prompt re-read a little later, as in multi-turn conversations and agent loops), S3-FIFO where
 * blocks read twice close together and then rarely dominate (it keeps what was re-read within a tenth of the
 * cache, where TinyLFU's sketch still counts one read and LRU keeps every one-time block as long), and what lies
 * between, and reuse-interval where a set read at distances beyond LRU's reach is larger than the cache (it
 * keeps a stable part of it; TinyLFU's sketch ages before the set comes round). Tuning a single W-TinyLFU's window instead (ARC-style ghost feedback, as {@code w-tinylfu}, or a
 * shadow-chosen window share) loses at each change: the cache's contents are those of the old setting for a long
 * while, and measured worse than both LRU and TinyLFU on Mooncake-like traces (docs/BENCHMARKS.md, cache-sim).
 * The shadows' sketches are {@value #SKETCH_WIDTH} times Caffeine's width: fewer collisions with the one-time
 * blocks that make up most KV-cache reads.
 *
 * <p>Costs: per read, one lookup and list move per shadow; memory, per shadow, a node per resident entry and a
 * sketch, and for the reuse-interval shadow a history of {@value ReuseIntervalPolicy#HISTORY} capacities of keys. Entries are blocks of megabytes, so a capacity is thousands to a few hundred thousand blocks.
 *
 * <p>Weights: a shadow takes a key it has not seen to weigh what the last admitted one did (a KV cache's blocks
 * are of one size); the real cache's weights are the ones it is told.
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class ShadowTunedPolicy implements HotCachePolicy {
    /** The window shares of the shadows. */
    static final double[] SHARES = {0.01, 0.05, 0.2, 0.5, 1.0};
    /** How much more (%) the best shadow must have hit lately than the leader to lead. */
    static final int SWITCH_MARGIN_PERCENT = 2;
    /** And by how many standard deviations of the difference of two hit counts. */
    static final double NOISE_Z = 4;
    /** What a score keeps of itself from one epoch to the next. */
    static final double DECAY = 0.98;
    /** Sketch width of the shadows, in times Caffeine's. */
    static final int SKETCH_WIDTH = 8;
    /** Reads per epoch, in capacities (at least {@value #MIN_EPOCH_READS}). */
    static final double EPOCH = 0.5;
    static final long MIN_EPOCH_READS = 256;
    /** Reads, in capacities, before the first change of leader: until the shadows are full. */
    static final long WARM_UP = 2;
    /** {@link #leaderShare()} of the S3-FIFO shadow and of the reuse-interval one. */
    static final double S3_FIFO = -1;
    static final double REUSE_INTERVAL = -2;

    private final String name;
    private final long capacity;
    private final Shadow[] shadows;
    private final long epochReads;
    private final long warmUpReads;
    private final double margin;
    private Shadow leader;
    private long reads;
    private int lastWeight = 1;

    /** Resident entries and their weights, least recently read first. */
    private final LinkedHashMap<Long, Integer> resident = new LinkedHashMap<>(16, 0.75f, true);
    private long residentBlocks;
    /** Resident keys the leader does not hold, to evict first (checked again when taken). */
    private final ArrayDeque<Long> evictFirst = new ArrayDeque<>();

    ShadowTunedPolicy(String name, long capacityBlocks) {
        this(name, capacityBlocks, true, true);
    }

    /**
     * @param withS3Fifo whether an S3-FIFO shadow runs beside the W-TinyLFU ones (false: as before it had one)
     * @param withReuseInterval whether a {@link ReuseIntervalPolicy} shadow does (false: as before it had one)
     */
    ShadowTunedPolicy(String name, long capacityBlocks, boolean withS3Fifo, boolean withReuseInterval) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException(name + " capacityBlocks = " + capacityBlocks + " (expected: >= 1)");
        }
        this.name = name;
        this.capacity = capacityBlocks;
        this.margin = SWITCH_MARGIN_PERCENT / 100.0;
        this.shadows = new Shadow[SHARES.length + (withS3Fifo ? 1 : 0) + (withReuseInterval ? 1 : 0)];
        int at = 0;
        if (withReuseInterval) {
            shadows[at++] = new Shadow(new ReuseIntervalPolicy(name + "-shadow", capacityBlocks), REUSE_INTERVAL);
        }
        if (withS3Fifo) {
            shadows[at++] = new Shadow(new S3FifoPolicy(capacityBlocks), S3_FIFO);
        }
        for (int i = 0; i < SHARES.length; i++) {
            shadows[at++] = new Shadow(new WTinyLfuPolicy(name + "-shadow", capacityBlocks, SHARES[i], false, SKETCH_WIDTH),
                    SHARES[i]);
        }
        this.leader = shadows[shadows.length - 1];
        this.epochReads = Math.max(MIN_EPOCH_READS, (long) (capacityBlocks * EPOCH));
        this.warmUpReads = WARM_UP * capacityBlocks;
    }

    /** The leader's window share, {@link #S3_FIFO} or {@link #REUSE_INTERVAL}; for tests. */
    double leaderShare() {
        return leader.share;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long capacityBlocks() {
        return capacity;
    }

    @Override
    public void onHit(long keyHash) {
        resident.get(keyHash); // the access order moves it to the end
        replay(keyHash);
    }

    @Override
    public void onMiss(long keyHash) {
        replay(keyHash);
    }

    @Override
    public boolean admit(long keyHash, int weight) {
        checkWeight(weight);
        lastWeight = weight;
        // free room never hurts; else only what the leader took
        return weight <= capacity && (residentBlocks + weight <= capacity || leader.holds(keyHash));
    }

    @Override
    public void onInsert(long keyHash, int weight) {
        checkWeight(weight);
        onRemove(keyHash);
        resident.put(keyHash, weight);
        residentBlocks += weight;
        lastWeight = weight;
    }

    @Override
    public void onRemove(long keyHash) {
        Integer weight = resident.remove(keyHash);
        if (weight != null) {
            residentBlocks -= weight;
        }
    }

    @Override
    public long victim() {
        while (!evictFirst.isEmpty()) {
            long key = evictFirst.peekFirst();
            if (resident.containsKey(key) && !leader.holds(key)) {
                return key;
            }
            evictFirst.pollFirst();
        }
        Iterator<Long> oldest = resident.keySet().iterator();
        return oldest.hasNext() ? oldest.next() : -1;
    }

    @Override
    public long residentBlocks() {
        return residentBlocks;
    }

    private static void checkWeight(int weight) {
        if (weight < 1) {
            throw new IllegalArgumentException("weight = " + weight + " (expected: >= 1 block)");
        }
    }

    private void replay(long keyHash) {
        for (Shadow s : shadows) {
            s.access(keyHash, lastWeight, s == leader && !resident.isEmpty() ? evictFirst : null);
        }
        if (++reads % epochReads == 0 && reads >= warmUpReads) {
            Shadow best = leader;
            for (Shadow s : shadows) {
                s.score = s.score * DECAY + s.epochHits;
                s.epochHits = 0;
            }
            for (Shadow s : shadows) {
                if (s.score >= best.score) {
                    best = s; // in order of share: ties go to the larger window, towards LRU
                }
            }
            if (best != leader && best.score > leader.score * (1 + margin)
                    && best.score - leader.score > NOISE_Z * Math.sqrt(best.score + leader.score)) {
                lead(best);
            }
        }
    }

    /** Makes {@code next} the leader: every resident key it does not hold goes first, oldest first. */
    private void lead(Shadow next) {
        leader = next;
        evictFirst.clear();
        for (long key : resident.keySet()) {
            if (!next.holds(key)) {
                evictFirst.addLast(key);
            }
        }
    }

    /**
     * A cache without bytes driven by one policy as the SPI's protocol says (as the real cache drives its
     * policy), counting its hits.
     */
    private static final class Shadow {
        private final HotCachePolicy policy;
        /** The W-TinyLFU window share, {@link #S3_FIFO} or {@link #REUSE_INTERVAL}. */
        private final double share;
        private final Map<Long, Integer> held = new HashMap<>();
        private long heldBlocks;
        long epochHits;
        double score;

        Shadow(HotCachePolicy policy, double share) {
            this.policy = policy;
            this.share = share;
        }

        boolean holds(long key) {
            return held.containsKey(key);
        }

        /** One read; the keys it evicts are added to {@code evicted} when that is not null. */
        void access(long key, int weight, ArrayDeque<Long> evicted) {
            if (held.containsKey(key)) {
                policy.onHit(key);
                epochHits++;
                return;
            }
            policy.onMiss(key);
            if (!policy.admit(key, weight)) {
                return;
            }
            long capacity = policy.capacityBlocks();
            while (heldBlocks + weight > capacity) {
                long victim = policy.victim();
                Integer w = victim == -1 ? null : held.remove(victim);
                if (w == null) {
                    return; // nothing known left to evict: not taken
                }
                heldBlocks -= w;
                policy.onRemove(victim);
                if (evicted != null) {
                    evicted.addLast(victim);
                }
            }
            policy.onInsert(key, weight);
            held.put(key, weight);
            heldBlocks += weight;
        }
    }
}
