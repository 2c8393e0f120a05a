package io.tiffin.plugin.hotcache;

/**
 * S3-FIFO (Yang et al., SOSP '23): three FIFO queues. New entries go to a small queue (10% of the
 * capacity by default, {@code hotcache.policy.s3-fifo.small-share}); an entry read while there moves to the main queue when it reaches the small queue's end,
 * the others leave and their keys are remembered in a ghost queue. A new entry whose key is in the ghost
 * queue goes straight to main. Main is a FIFO with reinsertion: an entry read since it last passed the
 * end goes round again (up to three times). One-time reads therefore only ever occupy the small queue.
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class S3FifoPolicy extends AbstractPolicy {
    private static final int SMALL = 0;
    private static final int MAIN = 1;
    private static final int MAX_ACCESSES = 3;
    /** The paper's small queue: a tenth of the capacity. */
    static final double DEFAULT_SMALL_SHARE = 0.1;

    private final NodeQueue small = new NodeQueue();
    private final NodeQueue main = new NodeQueue();
    private final long smallMax;
    /** Keys evicted from the small queue. */
    private final GhostQueue ghost;
    /** The small-queue entry victim() chose; its removal sends its key to the ghost queue. */
    private long smallVictim = -1;

    S3FifoPolicy(long capacityBlocks) {
        this(capacityBlocks, DEFAULT_SMALL_SHARE);
    }

    /**
     * @param smallShare the small queue's share of the capacity, in (0, 1); at least one block
     * @throws IllegalArgumentException for a share outside (0, 1)
     */
    S3FifoPolicy(long capacityBlocks, double smallShare) {
        super("s3-fifo", capacityBlocks);
        if (!(smallShare > 0 && smallShare < 1)) {
            throw new IllegalArgumentException("smallShare = " + smallShare + " (expected: between 0 and 1, exclusive)");
        }
        // at least one block, and (from two blocks up) one block left for the main queue
        this.smallMax = Math.max(1, Math.min(capacityBlocks - 1, (long) (capacityBlocks * smallShare)));
        this.ghost = new GhostQueue(capacityBlocks - smallMax);
    }

    /** Most blocks the small queue holds before its oldest entry leaves; for tests. */
    long smallMaxBlocks() {
        return smallMax;
    }

    @Override
    public void onMiss(long keyHash) {
        // The ghost queue is consulted when the entry is inserted.
    }

    @Override
    public long victim() {
        while (true) {
            if (!small.isEmpty() && (small.weight() >= smallMax || main.isEmpty())) {
                Node oldest = small.first();
                if (oldest.accesses > 0) {
                    small.remove(oldest);
                    oldest.queue = MAIN;
                    oldest.accesses = 0;
                    main.addLast(oldest);
                    continue;
                }
                smallVictim = oldest.key;
                return oldest.key;
            }
            Node oldest = main.first();
            if (oldest == null) {
                return -1;
            }
            if (oldest.accesses > 0) {
                oldest.accesses--;
                main.moveToLast(oldest);
                continue;
            }
            return oldest.key;
        }
    }

    @Override
    protected void hit(Node node) {
        node.accesses = Math.min(node.accesses + 1, MAX_ACCESSES);
    }

    @Override
    protected void linked(Node node) {
        if (ghost.remove(node.key)) {
            node.queue = MAIN;
            main.addLast(node);
        } else {
            node.queue = SMALL;
            small.addLast(node);
        }
    }

    @Override
    protected void unlinked(Node node) {
        if (node.queue == SMALL) {
            small.remove(node);
            if (node.key == smallVictim) {
                ghost.add(node.key, node.weight);
            }
        } else {
            main.remove(node);
        }
        if (node.key == smallVictim) {
            smallVictim = -1;
        }
    }
}
