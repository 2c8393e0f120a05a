package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The {@code reuse-interval} policy: Belady's rule with a guessed future. Each block's next read is predicted to
 * come one reuse interval after its last read, the interval being the number of reads between its last two
 * reads (as LIRS ranks blocks by their last inter-reference recency, but on a continuous scale); the policy
 * evicts the resident block predicted to be read farthest in the future and admits a new block only if it is
 * predicted to be read sooner than that victim. A block read once has no interval and is predicted never to be
 * read again: it is taken only while the cache has free room, and its second read (a miss whose interval the
 * history gives) is what earns it a place. A block whose predicted read is overdue is assumed to come half its
 * time since the last read later, so blocks that stopped being read drift out.
 *
 * <p>Where this wins: loops larger than the cache, and popular blocks re-read at distances beyond LRU's reach
 * under one-time blocks. LRU keeps the most recent part of a loop and misses all of it; this policy keeps the
 * blocks already resident (a newcomer's interval is as long as theirs, and it is predicted later) and hits them
 * on every pass. On the shared Mooncake trace at 1% of the distinct blocks it measured 1.46 times LRU's hit ratio
 * ({@code tiffin bench cache-sim}), where LIRS (1% of the cache for resident HIR blocks) reached 1.37 and TinyLFU
 * with exact counts 1.29 in a Python replay. Where it loses: blocks re-read once soon after their first read
 * (multi-turn prompts), which a policy that admits on first read keeps and this one cannot, and large caches of
 * the generated traces (2 to 8 points below LRU at 10% and 25%); {@link ShadowTunedPolicy} runs it as one of its
 * shadows for that reason.
 *
 * <p>History: the last read and interval of up to {@value #HISTORY} times the capacity in non-resident keys,
 * the ones read longest ago forgotten first (a forgotten key counts as read once). Time is counted in reads
 * ({@link #onHit} and {@link #onMiss}), not the clock.
 *
 * <p>Eviction samples {@value #SAMPLES} resident entries (all of them in a smaller cache) with a fixed-seed
 * generator and takes the one predicted farthest, ties to the first sampled: deterministic for a given sequence
 * of calls. Weights: predictions are per entry whatever its weight; an entry that needs several victims is
 * compared with the first only.
 *
 * <p>Costs: per read, a hash lookup; per eviction, {@value #SAMPLES} predictions; memory, an object per resident
 * or remembered key (about 100 bytes each, so about a kilobyte per block of capacity with the history).
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class ReuseIntervalPolicy implements HotCachePolicy {
    /** Non-resident keys remembered, in capacities. */
    static final int HISTORY = 8;
    /** Resident entries compared per eviction. */
    static final int SAMPLES = 64;
    /** An interval not known yet: the key was read once (as far as the history remembers). */
    private static final long UNKNOWN = -1;
    private static final long SEED = 0x5eed_1e75L;

    private final String name;
    private final long capacity;
    private final Map<Long, Entry> resident = new HashMap<>();
    /** Resident entries in no order, for sampling; {@link Entry#slot} is each one's index. */
    private Entry[] slots = new Entry[16];
    private int size;
    private long residentBlocks;
    /** Non-resident keys with their last read and interval, least recently read (or evicted) first. */
    private final LinkedHashMap<Long, Entry> history = new LinkedHashMap<>();
    private final long historyMax;
    private final SplittableRandom random = new SplittableRandom(SEED);
    /** Reads so far: the clock of the predictions. */
    private long now;
    /** The victim admit() compared the candidate with; victim() returns it first. */
    private Entry chosen;

    ReuseIntervalPolicy(String name, long capacityBlocks) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException(name + " capacityBlocks = " + capacityBlocks + " (expected: >= 1)");
        }
        this.name = name;
        this.capacity = capacityBlocks;
        this.historyMax = HISTORY * capacityBlocks;
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
    public long residentBlocks() {
        return residentBlocks;
    }

    @Override
    public void onHit(long keyHash) {
        Entry entry = resident.get(keyHash);
        if (entry != null) {
            entry.read(now);
        }
        now++;
    }

    @Override
    public void onMiss(long keyHash) {
        Entry entry = history.remove(keyHash);
        if (entry == null) {
            entry = resident.get(keyHash);
        }
        if (entry == null) {
            entry = new Entry(keyHash);
            entry.last = now;
        } else {
            entry.read(now);
        }
        if (entry.slot < 0) {
            remember(entry);
        }
        now++;
    }

    @Override
    public boolean admit(long keyHash, int weight) {
        checkWeight(weight);
        chosen = null;
        if (weight > capacity) {
            return false;
        }
        if (residentBlocks + weight <= capacity) {
            return true;
        }
        Entry candidate = history.get(keyHash);
        long next = candidate == null ? Long.MAX_VALUE : candidate.nextRead(now);
        Entry victim = farthest();
        if (victim == null || next >= victim.nextRead(now)) {
            return false;
        }
        chosen = victim;
        return true;
    }

    @Override
    public void onInsert(long keyHash, int weight) {
        checkWeight(weight);
        onRemove(keyHash);
        Entry entry = history.remove(keyHash);
        if (entry == null) {
            entry = new Entry(keyHash);
            entry.last = now;
        }
        entry.weight = weight;
        resident.put(keyHash, entry);
        if (size == slots.length) {
            slots = Arrays.copyOf(slots, size * 2);
        }
        entry.slot = size;
        slots[size++] = entry;
        residentBlocks += weight;
    }

    @Override
    public void onRemove(long keyHash) {
        Entry entry = resident.remove(keyHash);
        if (entry == null) {
            return;
        }
        residentBlocks -= entry.weight;
        Entry moved = slots[--size];
        slots[entry.slot] = moved;
        moved.slot = entry.slot;
        slots[size] = null;
        entry.slot = -1;
        if (chosen == entry) {
            chosen = null;
        }
        remember(entry);
    }

    @Override
    public long victim() {
        Entry victim = chosen != null ? chosen : farthest();
        chosen = null;
        return victim == null ? -1 : victim.key;
    }

    /** The resident entry (of those sampled) predicted to be read farthest in the future, or null if none. */
    private Entry farthest() {
        if (size == 0) {
            return null;
        }
        Entry best = null;
        long bestNext = Long.MIN_VALUE;
        boolean all = size <= SAMPLES;
        for (int i = 0; i < (all ? size : SAMPLES); i++) {
            Entry e = slots[all ? i : random.nextInt(size)];
            long next = e.nextRead(now);
            if (next > bestNext) {
                best = e;
                bestNext = next;
            }
        }
        return best;
    }

    /** Puts a non-resident entry at the recent end of the history, forgetting the oldest beyond its bound. */
    private void remember(Entry entry) {
        history.put(entry.key, entry);
        Iterator<Entry> oldest = history.values().iterator();
        while (history.size() > historyMax && oldest.hasNext()) {
            oldest.next();
            oldest.remove();
        }
    }

    private static void checkWeight(int weight) {
        if (weight < 1) {
            throw new IllegalArgumentException("weight = " + weight + " (expected: >= 1 block)");
        }
    }

    /** A key's last read and reuse interval; resident when {@link #slot} is not negative. */
    private static final class Entry {
        final long key;
        long last;
        long interval = UNKNOWN;
        int weight;
        int slot = -1;

        Entry(long key) {
            this.key = key;
        }

        void read(long now) {
            interval = now - last;
            last = now;
        }

        /** The read after the last one: an interval after it, or if that is past, half the time since it from now. */
        long nextRead(long now) {
            if (interval == UNKNOWN) {
                return Long.MAX_VALUE;
            }
            long next = last + interval;
            return next >= now ? next : now + (now - last) / 2;
        }
    }
}
