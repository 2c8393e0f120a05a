package io.tiffin.plugin.hotcache;

/**
 * One resident entry as a policy tracks it: an intrusive list node with the per-policy state the
 * policies of this package need (a queue tag and a small access counter).
 *
 * <p>Not thread-safe; owned by one policy, which is confined to the cache's maintenance thread.
 */
final class Node {
    final long key;
    final int weight;
    Node prev;
    Node next;
    /** Which of the policy's queues holds the node; the meaning is the policy's. */
    int queue;
    /** Accesses since insertion or last reset, saturating; the meaning is the policy's. */
    int accesses;

    Node(long key, int weight) {
        this.key = key;
        this.weight = weight;
    }
}
