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
 */
public record TierSettings(OffloadMode offloadMode, int promotionThreshold, int promotionQueueLimit,
                           int offloadQueueLimit) {

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
        return new TierSettings(mode, promotionThreshold, promotionQueueLimit, offloadQueueLimit);
    }
}
