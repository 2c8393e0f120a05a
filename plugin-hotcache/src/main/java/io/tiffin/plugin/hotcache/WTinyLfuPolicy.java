package io.tiffin.plugin.hotcache;

import java.util.ArrayDeque;

/**
 * Window TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy",
 * and Caffeine): new entries enter a small LRU window; the rest of the cache is a segmented LRU main
 * area (probation, and protected for entries read again while in probation). When the window
 * overflows, its oldest entry duels the main area's victim: the one a {@link FrequencySketch} says was
 * read more often recently stays, so a burst of one-time reads cannot push out the popular set.
 *
 * <p>Adaptive (the {@code w-tinylfu} policy): a hill climber resizes the window as Caffeine does. Every
 * sample of reads it compares the hit ratio with the previous sample's and keeps moving the
 * window/main split in the direction that improved it, with a step that decays, and restarts with a
 * large step when the hit ratio jumps (the workload changed). Recency-heavy traces grow the window
 * towards LRU; frequency-heavy traces shrink it towards plain TinyLFU.
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
    private static final double RESTART_THRESHOLD = 0.05;
    private static final double STEP_SHARE = 0.0625;
    private static final double STEP_DECAY = 0.98;

    private final NodeQueue window = new NodeQueue();
    private final NodeQueue probation = new NodeQueue();
    private final NodeQueue protectedQueue = new NodeQueue();
    private final ArrayDeque<Node> candidates = new ArrayDeque<>();
    private final FrequencySketch sketch;
    private final GhostQueue windowGhosts;
    private final GhostQueue mainGhosts;
    private final boolean ghostFeedback;
    /** The entry victim() chose and where it was: its removal is remembered in a ghost queue. */
    private long victimKey = -1;
    private boolean victimFromMain;
    private final boolean adaptive;
    private final long sampleSize;

    private double windowMax;

    private long hitsInSample;
    private long missesInSample;
    private double previousHitRatio;
    private double step;

    /**
     * @param name the registered name
     * @param capacityBlocks the capacity
     * @param windowShare the initial share of the capacity given to the window, 0 to 1
     * @param adaptive whether the hill climber resizes the window
     * @param sampleSize reads per hill-climbing sample
     */
    WTinyLfuPolicy(String name, long capacityBlocks, double windowShare, boolean adaptive, long sampleSize) {
        super(name, capacityBlocks);
        if (!(windowShare >= 0 && windowShare <= 1)) {
            throw new IllegalArgumentException("windowShare = " + windowShare + " (expected: 0 to 1)");
        }
        if (sampleSize < 1) {
            throw new IllegalArgumentException("sampleSize = " + sampleSize + " (expected: >= 1)");
        }
        this.sketch = new FrequencySketch(capacityBlocks);
        this.adaptive = adaptive;
        this.ghostFeedback = Boolean.getBoolean("tiffin.ghost");
        this.windowGhosts = new GhostQueue(capacityBlocks);
        this.mainGhosts = new GhostQueue(capacityBlocks);
        this.sampleSize = sampleSize;
        this.windowMax = windowShare * capacityBlocks;
        this.step = -STEP_SHARE * capacityBlocks;
    }

    @Override
    public void onMiss(long keyHash) {
        sketch.increment(keyHash);
        if (ghostFeedback) {
            feedback(keyHash);
        }
        missesInSample++;
        climb();
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
            double ratio = Math.max(1.0, (double) mainGhosts.weight() / Math.max(1, windowGhosts.weight()));
            windowMax = Math.min(capacity, windowMax + ratio);
        } else if (mainGhosts.remove(keyHash)) {
            double ratio = Math.max(1.0, (double) windowGhosts.weight() / Math.max(1, mainGhosts.weight()));
            windowMax = Math.max(0, windowMax - ratio);
        }
    }

    @Override
    protected void hit(Node node) {
        sketch.increment(node.key);
        hitsInSample++;
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
        climb();
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

    /** Caffeine's hill climber: move the window size in the direction that raised the hit ratio. */
    private void climb() {
        if (!adaptive || hitsInSample + missesInSample < sampleSize) {
            return;
        }
        double hitRatio = (double) hitsInSample / (hitsInSample + missesInSample);
        hitsInSample = 0;
        missesInSample = 0;
        if (residentBlocks() < capacity / 2) {
            previousHitRatio = hitRatio;
            return;
        }
        double change = hitRatio - previousHitRatio;
        double amount = change >= 0 ? step : -step;
        step = Math.abs(change) >= RESTART_THRESHOLD
                ? STEP_SHARE * capacity * (amount >= 0 ? 1 : -1)
                : STEP_DECAY * amount;
        previousHitRatio = hitRatio;
        windowMax = Math.clamp(windowMax + amount, 0, capacity);
    }
}
