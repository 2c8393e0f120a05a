package io.tiffin.core.local;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The segments served by nodes in this JVM, by name. A client that finds a replica's segment here
 * copies the bytes directly (a plain memory copy, no socket), as Mooncake does for replicas in the
 * same process.
 *
 * <p>Thread-safe.
 */
public final class LocalSegmentDirectory {
    private static final ConcurrentHashMap<String, LocalSegment> SEGMENTS = new ConcurrentHashMap<>();

    private LocalSegmentDirectory() {
    }

    public static void register(LocalSegment segment) {
        SEGMENTS.put(segment.name(), segment);
    }

    public static void unregister(LocalSegment segment) {
        SEGMENTS.remove(segment.name(), segment);
    }

    /** The live local segment with this name, or null. */
    public static LocalSegment find(String name) {
        LocalSegment s = SEGMENTS.get(name);
        return s == null || s.isClosed() ? null : s;
    }
}
