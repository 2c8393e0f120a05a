package io.tiffin.plugin.hotcache;

/**
 * A doubly linked queue of {@link Node}s from oldest ({@link #first()}) to newest ({@link #last()}),
 * with O(1) removal and move-to-end, and the total weight of its nodes.
 *
 * <p>Not thread-safe; owned by one policy.
 */
final class NodeQueue {
    private Node head;
    private Node tail;
    private long weight;

    Node first() {
        return head;
    }

    Node last() {
        return tail;
    }

    boolean isEmpty() {
        return head == null;
    }

    long weight() {
        return weight;
    }

    void addLast(Node node) {
        node.prev = tail;
        node.next = null;
        if (tail == null) {
            head = node;
        } else {
            tail.next = node;
        }
        tail = node;
        weight += node.weight;
    }

    void remove(Node node) {
        if (node.prev == null) {
            head = node.next;
        } else {
            node.prev.next = node.next;
        }
        if (node.next == null) {
            tail = node.prev;
        } else {
            node.next.prev = node.prev;
        }
        node.prev = null;
        node.next = null;
        weight -= node.weight;
    }

    void moveToLast(Node node) {
        if (node != tail) {
            remove(node);
            addLast(node);
        }
    }
}
