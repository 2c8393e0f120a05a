package io.tiffin.plugin.storage;

import java.util.Comparator;
import java.util.Locale;

/**
 * Which bucket goes first when the disk is above its high watermark. Thread-safe (immutable).
 */
public enum EvictionPolicy {
    /** The oldest bucket (smallest id) first. */
    FIFO(Comparator.comparingLong(Bucket::id)),
    /**
     * The least recently read bucket first; a bucket never read counts as read when it was created, so
     * fresh buckets are not evicted before old unread ones.
     */
    LRU(Comparator.comparingLong(Bucket::lastAccess).thenComparingLong(Bucket::id));

    private final Comparator<Bucket> order;

    EvictionPolicy(Comparator<Bucket> order) {
        this.order = order;
    }

    Comparator<Bucket> order() {
        return order;
    }

    /** Parses {@code fifo} or {@code lru} (any case). */
    static EvictionPolicy parse(String key, String text) {
        return switch (text.strip().toLowerCase(Locale.ROOT)) {
            case "fifo" -> FIFO;
            case "lru" -> LRU;
            default -> throw new IllegalArgumentException(key + " = " + text + " (expected: fifo or lru)");
        };
    }
}
