package io.tiffin.plugin.hotcache;

import java.util.ArrayDeque;

/**
 * Window TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
 * and Caffeine): new entries enter a small LRU window; the rest of the cache is a segmented LRU main
 * area (probation, and protected for entries read again while in probation). When the window
 * overflows, its oldest entry duels the main area's victim: the one a {@link FrequencySketch} says was
 * read more often recently stays, so a burst of one-time reads cannot push out the popular set.
 *
 * <p>Adaptive (the {@code w-tinylfu} policy): the window/main split moves with ARC-style ghost feedback
 * (Megiddo and Modha, FAST '03). The keys of entries evicted from the window (candidates that lost a
 * duel) and from the main area are remembered, each up to the capacity in blocks. A miss on a key the
 * window evicted means a larger window would have hit: the window grows; a miss on a key the main area
 * evicted shrinks it. The step is ARC's (the ratio of the two ghost weights, at least 1) times one
 * block per 4096 blocks of capacity. Recency-heavy traces grow the window towards LRU; frequency-heavy
 * traces keep it small, as plain TinyLFU. Caffeine's hill climber (compare the hit ratio of successive
 * samples) was tried first and measured worse on Mooncake traces, whose hit ratio swings between
 * samples for reasons unrelated to the window (docs/experiments/HISTORY.md, "How the adaptive window was chosen").
 *
 * <p>Weights: queues are measured in blocks. An entry heavier than the window passes straight through
 * it and duels as a candidate at once.
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class WTinyLfuPolicy extends AbstractPolicy {
    private static final int WINDOW = 0;
    private static final int PROBATION = 1;
    private static final int PROTECTED = 2;
    /** In probation, moved there from the window and not yet through a duel. */
    private static final int CANDIDATE = 3;
    private static final double PROTECTED_SHARE = 0.8;
    /** A ghost hit moves the window by at least one block, and by one block per this many of capacity. */
    private static final double BLOCKS_PER_STEP = 4096;

    private final NodeQueue window = new NodeQueue();
    private final NodeQueue probation = new NodeQueue();
    private final NodeQueue protectedQueue = new NodeQueue();
    private final ArrayDeque<Node> candidates = new ArrayDeque<>();
    private final FrequencySketch sketch;
    private final GhostQueue windowGhosts;
    private final GhostQueue mainGhosts;
    /** The entry victim() chose and where it was: its removal is remembered in a ghost queue. */
    private long victimKey = -1;
    private boolean victimFromMain;
    private final boolean adaptive;

    private double windowMax;

    /**
     * @param name the registered name
     * @param capacityBlocks the capacity
     * @param windowShare the (initial) share of the capacity given to the window, 0 to 1
     * @param adaptive whether ghost feedback resizes the window
     */
    WTinyLfuPolicy(String name, long capacityBlocks, double windowShare, boolean adaptive) {
        this(name, capacityBlocks, windowShare, adaptive, 1);
    }

    /** As above with a sketch of {@code sketchWidth} times the usual counters ({@link FrequencySketch}). */
    WTinyLfuPolicy(String name, long capacityBlocks, double windowShare, boolean adaptive, int sketchWidth) {
        super(name, capacityBlocks);
        if (!(windowShare >= 0 && windowShare <= 1)) {
            throw new IllegalArgumentException("windowShare = " + windowShare + " (expected: 0 to 1)");
        }
        this.sketch = new FrequencySketch(capacityBlocks, sketchWidth);
        this.adaptive = adaptive;
        this.windowGhosts = new GhostQueue(capacityBlocks);
        this.mainGhosts = new GhostQueue(capacityBlocks);
        this.windowMax = windowShare * capacityBlocks;
    }

    /** The window's current size bound in blocks; for tests. */
    double windowMaxBlocks() {
        return windowMax;
    }

    @Override
    public void onMiss(long keyHash) {
        sketch.increment(keyHash);
        if (adaptive) {
            feedback(keyHash);
        }
    }

    @Override
    public long victim() {
        Node candidate = candidates.peekFirst();
        Node mainVictim = mainVictim();
        if (candidate != null && mainVictim != null) {
            if (sketch.frequency(candidate.key) > sketch.frequency(mainVictim.key)) {
                accept(candidate);
                return chosen(mainVictim, true);
            }
            return chosen(candidate, false);
        }
        if (candidate != null) {
            return chosen(candidate, false);
        }
        if (mainVictim != null) {
            return chosen(mainVictim, true);
        }
        Node oldest = window.first();
        return oldest == null ? -1 : chosen(oldest, false);
    }

    /** ARC's step, larger when the other side's ghosts outnumber ours, scaled up for large caches. */
    private double step(GhostQueue other, GhostQueue ours) {
        double ratio = Math.max(1.0, (double) other.weight() / Math.max(1, ours.weight()));
        return Math.max(1, capacity / BLOCKS_PER_STEP) * ratio;
    }

    private long chosen(Node victim, boolean fromMain) {
        victimKey = victim.key;
        victimFromMain = fromMain;
        return victim.key;
    }

    /**
     * ARC-style feedback: a miss on a key the window evicted (a lost duel) says the window was too small;
     * a miss on a key evicted from the main area says the main area was.
     */
    private void feedback(long keyHash) {
        if (windowGhosts.remove(keyHash)) {
            windowMax = Math.min(capacity, windowMax + step(mainGhosts, windowGhosts));
        } else if (mainGhosts.remove(keyHash)) {
            windowMax = Math.max(0, windowMax - step(windowGhosts, mainGhosts));
        }
    }

    @Override
    protected void hit(Node node) {
        sketch.increment(node.key);
        switch (node.queue) {
            case WINDOW -> window.moveToLast(node);
            case PROBATION, CANDIDATE -> {
                if (node.queue == CANDIDATE) {
                    candidates.removeFirstOccurrence(node);
                }
                probation.remove(node);
                node.queue = PROTECTED;
                protectedQueue.addLast(node);
                long protectedMax = (long) (PROTECTED_SHARE * (capacity - windowMax));
                while (protectedQueue.weight() > protectedMax && protectedQueue.first() != node) {
                    Node demoted = protectedQueue.first();
                    protectedQueue.remove(demoted);
                    demoted.queue = PROBATION;
                    probation.addLast(demoted);
                }
            }
            default -> protectedQueue.moveToLast(node);
        }
    }

    @Override
    protected void linked(Node node) {
        node.queue = WINDOW;
        window.addLast(node);
        drainWindow();
    }

    @Override
    protected void unlinked(Node node) {
        if (node.key == victimKey) {
            (victimFromMain ? mainGhosts : windowGhosts).add(node.key, node.weight);
            victimKey = -1;
        }
        switch (node.queue) {
            case WINDOW -> window.remove(node);
            case PROBATION -> probation.remove(node);
            case CANDIDATE -> {
                probation.remove(node);
                candidates.removeFirstOccurrence(node);
            }
            default -> protectedQueue.remove(node);
        }
    }

    /** Moves the window's overflow to the end of probation, as candidates for the next duels. */
    private void drainWindow() {
        while (window.weight() > windowMax && !window.isEmpty()) {
            Node oldest = window.first();
            window.remove(oldest);
            oldest.queue = CANDIDATE;
            probation.addLast(oldest);
            candidates.addLast(oldest);
        }
    }

    /** The main area's entry to duel a candidate: the oldest in probation that is not a candidate. */
    private Node mainVictim() {
        for (Node node = probation.first(); node != null; node = node.next) {
            if (node.queue == PROBATION) {
                return node;
            }
        }
        return protectedQueue.first();
    }

    private void accept(Node candidate) {
        candidates.removeFirstOccurrence(candidate);
        candidate.queue = PROBATION;
    }
}
