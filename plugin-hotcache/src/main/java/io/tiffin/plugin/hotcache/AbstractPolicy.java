package io.tiffin.plugin.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import java.util.HashMap;
import java.util.Map;

/**
 * What every policy of this package shares: the index of resident entries, the resident weight, the
 * argument checks and the protocol's not-found rules. Subclasses keep their own queues in step through
 * {@link #linked} and {@link #unlinked}.
 *
 * <p>Not thread-safe, as {@link HotCachePolicy} allows: confined to the cache's maintenance thread.
 */
abstract class AbstractPolicy implements HotCachePolicy {
    private final String name;
    protected final long capacity;
    private final Map<Long, Node> resident = new HashMap<>();
    private long residentBlocks;

    protected AbstractPolicy(String name, long capacityBlocks) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException(name + " capacityBlocks = " + capacityBlocks + " (expected: >= 1)");
        }
        this.name = name;
        this.capacity = capacityBlocks;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final long capacityBlocks() {
        return capacity;
    }

    @Override
    public final long residentBlocks() {
        return residentBlocks;
    }

    @Override
    public final void onHit(long keyHash) {
        Node node = resident.get(keyHash);
        if (node != null) {
            hit(node);
        }
    }

    @Override
    public boolean admit(long keyHash, int weight) {
        checkWeight(weight);
        return weight <= capacity;
    }

    @Override
    public final void onInsert(long keyHash, int weight) {
        checkWeight(weight);
        onRemove(keyHash);
        Node node = new Node(keyHash, weight);
        resident.put(keyHash, node);
        residentBlocks += weight;
        linked(node);
    }

    @Override
    public final void onRemove(long keyHash) {
        Node node = resident.remove(keyHash);
        if (node != null) {
            residentBlocks -= node.weight;
            unlinked(node);
        }
    }

    /** A read of a resident node. */
    protected abstract void hit(Node node);

    /** A new resident node: put it in a queue. */
    protected abstract void linked(Node node);

    /** A node that left the cache: take it out of its queue. */
    protected abstract void unlinked(Node node);

    private static void checkWeight(int weight) {
        if (weight < 1) {
            throw new IllegalArgumentException("weight = " + weight + " (expected: >= 1 block)");
        }
    }
}
