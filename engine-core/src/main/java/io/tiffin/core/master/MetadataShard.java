package io.tiffin.core.master;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One of the master's 1024 metadata shards: a key → {@link ObjectMetadata} map and the lock that guards
 * it and every object in it. A key's shard is fixed by its hash ({@link #indexOf}).
 *
 * <p>Thread-safe only under {@link #lock}: callers take it around every access.
 */
final class MetadataShard {
    static final int COUNT = 1024;

    final ReentrantLock lock = new ReentrantLock();
    final Map<String, ObjectMetadata> objects = new HashMap<>();

    static int indexOf(String key) {
        int h = key.hashCode();
        h ^= (h >>> 16);
        return h & (COUNT - 1);
    }
}
