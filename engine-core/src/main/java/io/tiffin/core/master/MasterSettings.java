package io.tiffin.core.master;

import java.time.Duration;

/**
 * The master's tunables, with Mooncake Store's defaults. Built from configuration keys
 * {@code master.*} (see docs/CONFIGURATION.md).
 *
 * <p>Thread-safe (immutable).
 *
 * @param leaseTtl read lease granted by every successful lookup
 * @param softPinTtl how long a soft pin protects an object
 * @param allowEvictSoftPinned whether the second eviction pass may take soft-pinned objects
 * @param evictionHighWatermark used/capacity ratio above which eviction runs
 * @param evictionRatio fraction of evictable objects freed per eviction run
 * @param evictionInterval how often the eviction loop wakes
 * @param nodeTtl a node silent for this long loses its segments
 * @param nodeCheckInterval how often node liveness is checked
 * @param putStartDiscardTimeout an unfinished put older than this may be pre-empted by a new put
 * @param putStartReleaseTimeout an SSD-tier task (offload, promotion) whose node never reports is abandoned after this
 * @param putTimeout a put in progress (no PutEnd or PutRevoke yet) is abandoned and its space freed this long after
 *     its PutStart ({@code master.put-timeout})
 * @param maxKeyLength longest key, in bytes of UTF-8
 * @param maxObjectSize largest object, in bytes
 * @param tier SSD tier: offload mode and promotion limits
 * @param recoveryReadWait how long into a takeover's recovery a lookup that needs an object not recovered yet is
 *     refused for the client to retry rather than answered "not ready" ({@code master.recovery-read-wait})
 */
public record MasterSettings(Duration leaseTtl, Duration softPinTtl, boolean allowEvictSoftPinned,
                             double evictionHighWatermark, double evictionRatio, Duration evictionInterval,
                             Duration nodeTtl, Duration nodeCheckInterval, Duration putStartDiscardTimeout,
                             Duration putStartReleaseTimeout, Duration putTimeout, int maxKeyLength,
                             long maxObjectSize, TierSettings tier, Duration recoveryReadWait) {

    public static MasterSettings defaults() {
        return new MasterSettings(Duration.ofSeconds(10), Duration.ofMinutes(30), true, 0.90, 0.05,
                Duration.ofMillis(10), Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(30),
                Duration.ofSeconds(600), Duration.ofSeconds(60), 4096, 1L << 40, TierSettings.defaults(),
                Duration.ofSeconds(2));
    }

    public MasterSettings withLeaseTtl(Duration d) {
        return new MasterSettings(d, softPinTtl, allowEvictSoftPinned, evictionHighWatermark, evictionRatio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, tier, recoveryReadWait);
    }

    public MasterSettings withNodeTtl(Duration d) {
        return new MasterSettings(leaseTtl, softPinTtl, allowEvictSoftPinned, evictionHighWatermark, evictionRatio,
                evictionInterval, d, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, tier, recoveryReadWait);
    }

    public MasterSettings withEviction(double highWatermark, double ratio) {
        return new MasterSettings(leaseTtl, softPinTtl, allowEvictSoftPinned, highWatermark, ratio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, tier, recoveryReadWait);
    }

    public MasterSettings withTier(TierSettings t) {
        return new MasterSettings(leaseTtl, softPinTtl, allowEvictSoftPinned, evictionHighWatermark, evictionRatio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, t, recoveryReadWait);
    }

    public MasterSettings withAllowEvictSoftPinned(boolean allow) {
        return new MasterSettings(leaseTtl, softPinTtl, allow, evictionHighWatermark, evictionRatio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, tier, recoveryReadWait);
    }

    public MasterSettings withPutTimeout(Duration d) {
        return new MasterSettings(leaseTtl, softPinTtl, allowEvictSoftPinned, evictionHighWatermark, evictionRatio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                d, maxKeyLength, maxObjectSize, tier, recoveryReadWait);
    }

    public MasterSettings withRecoveryReadWait(Duration d) {
        return new MasterSettings(leaseTtl, softPinTtl, allowEvictSoftPinned, evictionHighWatermark, evictionRatio,
                evictionInterval, nodeTtl, nodeCheckInterval, putStartDiscardTimeout, putStartReleaseTimeout,
                putTimeout, maxKeyLength, maxObjectSize, tier, d);
    }
}
