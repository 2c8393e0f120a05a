package io.tiffin.plugin.hotcache;

/**
 * SIEVE (Zhang et al., NSDI '24): one FIFO queue with a visited bit per entry and a hand that sweeps
 * from the oldest entry towards the newest. A hit only sets the bit (no queue move, so hits are cheap);
 * the hand clears set bits as it passes and evicts the first entry whose bit is clear. Entries that are
 * never read again leave quickly, so one-time reads do not flush the popular ones.
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class SievePolicy extends AbstractPolicy {
    private final NodeQueue queue = new NodeQueue();
    /** The next entry the hand examines; null means start again from the oldest. */
    private Node hand;

    SievePolicy(long capacityBlocks) {
        super("sieve", capacityBlocks);
    }

    @Override
    public void onMiss(long keyHash) {
        // SIEVE keeps no history of non-resident keys.
    }

    @Override
    public long victim() {
        if (queue.isEmpty()) {
            return -1;
        }
        Node node = hand == null ? queue.first() : hand;
        while (node.accesses > 0) {
            node.accesses = 0;
            node = node.next == null ? queue.first() : node.next;
        }
        hand = node;
        return node.key;
    }

    @Override
    protected void hit(Node node) {
        node.accesses = 1;
    }

    @Override
    protected void linked(Node node) {
        queue.addLast(node);
    }

    @Override
    protected void unlinked(Node node) {
        if (node == hand) {
            hand = node.next;
        }
        queue.remove(node);
    }
}
