package io.tiffin.plugin.hotcache;

/**
 * Least recently used, what Mooncake's upstream hot cache does: every fill is admitted and the entry
 * read longest ago is evicted. Good when recent reads predict the next ones; a scan of one-time reads
 * flushes it.
 *
 * <p>Not thread-safe: confined to the cache's maintenance thread, as the SPI allows.
 */
final class LruPolicy extends AbstractPolicy {
    private final NodeQueue queue = new NodeQueue();

    LruPolicy(long capacityBlocks) {
        super("lru", capacityBlocks);
    }

    @Override
    public void onMiss(long keyHash) {
        // Recency only: a read of a non-resident key teaches LRU nothing.
    }

    @Override
    public long victim() {
        Node oldest = queue.first();
        return oldest == null ? -1 : oldest.key;
    }

    @Override
    protected void hit(Node node) {
        queue.moveToLast(node);
    }

    @Override
    protected void linked(Node node) {
        queue.addLast(node);
    }

    @Override
    protected void unlinked(Node node) {
        queue.remove(node);
    }
}
