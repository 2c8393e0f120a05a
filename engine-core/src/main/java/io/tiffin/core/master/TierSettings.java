package io.tiffin.core.master;

/**
 * How the master uses nodes' SSD tiers.
 *
 * <p>Thread-safe (immutable).
 *
 * @param offloadMode when objects are copied to SSD: never, when memory eviction would drop them, or at
 *     every completed put
 * @param promotionThreshold reads of an SSD-only object (count-min estimate) after which it is queued
 *     for promotion back to memory
 * @param promotionQueueLimit most promotion tasks queued at once, cluster-wide
 * @param offloadQueueLimit most offload tasks queued or running at once, cluster-wide
 * @param awayTtl how long the master keeps the keys of an away node's SSD-only objects ({@link AwayCopies}); after
 *     it, that node's copies are deleted when it returns
 */
public record TierSettings(OffloadMode offloadMode, int promotionThreshold, int promotionQueueLimit,
                           int offloadQueueLimit, java.time.Duration awayTtl) {

    /** The default of {@code offload.away-ttl}. */
    public static final java.time.Duration DEFAULT_AWAY_TTL = java.time.Duration.ofHours(24);

    public TierSettings(OffloadMode offloadMode, int promotionThreshold, int promotionQueueLimit,
                        int offloadQueueLimit) {
        this(offloadMode, promotionThreshold, promotionQueueLimit, offloadQueueLimit, DEFAULT_AWAY_TTL);
    }

    /** Configuration values of {@code offload.mode}. */
    public enum OffloadMode {
        OFF, ON_EVICT, WRITE_THROUGH;

        public static OffloadMode parse(String text) {
            return switch (text) {
                case "off" -> OFF;
                case "on-evict" -> ON_EVICT;
                case "write-through" -> WRITE_THROUGH;
                default -> throw new IllegalArgumentException("offload.mode = " + text
                        + " (expected: off, on-evict or write-through)");
            };
        }
    }

    public static TierSettings defaults() {
        return new TierSettings(OffloadMode.OFF, 2, 50_000, 25_000);
    }

    public TierSettings withOffloadMode(OffloadMode mode) {
        return new TierSettings(mode, promotionThreshold, promotionQueueLimit, offloadQueueLimit, awayTtl);
    }

    public TierSettings withAwayTtl(java.time.Duration ttl) {
        return new TierSettings(offloadMode, promotionThreshold, promotionQueueLimit, offloadQueueLimit, ttl);
    }
}
