package io.tiffin.core.master;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Whether this master started while clients may still read objects of its previous run through cached
 * locations, and until when. A node that was mounted to a previous master run (mount epoch > 1) and
 * mounts here for the first time within the longest cache window of this master's start reveals such a
 * restart: PutEnds and removals are then reported only from {@link #untilMillis()} on, since a client
 * could otherwise miss the new object (or the removal) by reading the key's old object through a
 * location cached from a node that has not re-mounted yet.
 *
 * <p>Thread-safe: {@link #noteMount} is called under {@link SegmentMembership}'s mount monitor; the
 * instant is volatile, the set of mounted nodes concurrent.
 */
final class RestartGuard {
    private static final Logger LOG = LogManager.getLogger(RestartGuard.class);

    /** When this master started (ticker ms). */
    private final long startMillis;
    private final long leaseTtlMillis;
    /** Reports answer only from this instant (ms; 0 = no restart seen). */
    private volatile long untilMillis;
    /**
     * Ids of the nodes that have mounted a segment to this master within the longest cache window of its start
     * (a re-mount after a restart is a node's first here); cleared at the first mount after that window.
     */
    private final Set<String> mountedNodes = ConcurrentHashMap.newKeySet();

    RestartGuard(long startMillis, long leaseTtlMillis) {
        this.startMillis = startMillis;
        this.leaseTtlMillis = leaseTtlMillis;
    }

    /**
     * The instant (ms) before which a PutEnd or a removal may not be answered (0 = none); see the class
     * comment.
     */
    long untilMillis() {
        return untilMillis;
    }

    /**
     * A node mounts a segment at {@code now} with {@code mountEpoch}: arms the guard if that reveals a
     * restart. Called before the segment takes puts, so no PutEnd answered after it misses the guard.
     */
    void noteMount(String nodeId, long mountEpoch, long now) {
        long guardEnd = startMillis + longestCacheWindowMillis();
        if (now < guardEnd) {
            boolean firstMountHere = mountedNodes.add(nodeId);
            if (mountEpoch > 1 && firstMountHere && untilMillis == 0) {
                // A node mounted to a previous master: that master's clients may still read its objects through
                // cached locations on nodes that have not re-mounted yet (their mount epoch has not moved), so
                // a new object under the same key must wait until every such reuse has ended.
                untilMillis = guardEnd;
                LOG.info("Node {} was mounted to a previous master run; puts and removes answer only in {} ms,"
                        + " once locations cached from that run have expired", nodeId, guardEnd - now);
            }
        } else if (!mountedNodes.isEmpty()) {
            mountedNodes.clear(); // only a mount within the window can reveal a restart
        }
    }

    /** Notes in {@code hold} (if not null) that a removal at {@code now} answers no earlier than the guard. */
    void cover(CacheHold hold, long now) {
        long guard = untilMillis;
        if (hold != null && guard > now) {
            hold.cover(guard);
        }
    }

    /**
     * The longest a lookup's answer may be reused from a location cache, with its margin
     * ({@link ObjectMetadata#noteCachedLookup}).
     */
    private long longestCacheWindowMillis() {
        return longestCacheWindowMillis(leaseTtlMillis);
    }

    /** As {@link #longestCacheWindowMillis()} for a lease of {@code leaseTtlMillis}. */
    static long longestCacheWindowMillis(long leaseTtlMillis) {
        long window = ObjectMetadata.cacheWindowMillis(Long.MAX_VALUE, leaseTtlMillis);
        return Math.min(leaseTtlMillis, window + window / 4 + 1);
    }
}
