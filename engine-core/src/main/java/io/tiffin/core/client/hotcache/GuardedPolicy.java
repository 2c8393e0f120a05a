package io.tiffin.core.client.hotcache;

import io.tiffin.api.spi.hotcache.HotCachePolicy;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The hot cache's {@link HotCachePolicy}, which is plugin code, with every call guarded: a call that
 * throws is logged (the first failure, then every 1000th) and taken as "no effect" (not admitted, no
 * victim, not inserted), so the cache's own bookkeeping, always done before the call, stays whole.
 *
 * <p>Not thread-safe: the maintenance thread alone calls it, as the policy's contract requires.
 */
final class GuardedPolicy {
    /** The cache's logger: its failures are the cache's to report. */
    private static final Logger LOG = LogManager.getLogger(LocalHotCache.class);

    private final HotCachePolicy policy;
    /** Policy calls that failed so far. */
    private long failures;

    GuardedPolicy(HotCachePolicy policy) {
        this.policy = policy;
    }

    void onHit(long keyHash) {
        try {
            policy.onHit(keyHash);
        } catch (RuntimeException e) {
            failed("onHit", e);
        }
    }

    void onMiss(long keyHash) {
        try {
            policy.onMiss(keyHash);
        } catch (RuntimeException e) {
            failed("onMiss", e);
        }
    }

    void onRemove(long keyHash) {
        try {
            policy.onRemove(keyHash);
        } catch (RuntimeException e) {
            failed("onRemove", e);
        }
    }

    /** Whether the policy admits the entry; false when it throws. */
    boolean admit(long keyHash, int weight) {
        try {
            return policy.admit(keyHash, weight);
        } catch (RuntimeException e) {
            failed("admit", e);
            return false;
        }
    }

    /** The entry to evict next, or -1 for none (also when the policy throws). */
    long victim() {
        try {
            return policy.victim();
        } catch (RuntimeException e) {
            failed("victim", e);
            return -1;
        }
    }

    /** Tells the policy the entry is resident; false when it throws (then the entry must not be kept). */
    boolean onInsert(long keyHash, int weight) {
        try {
            policy.onInsert(keyHash, weight);
            return true;
        } catch (RuntimeException e) {
            failed("onInsert", e);
            return false;
        }
    }

    /** The plugin's class, for messages. */
    String pluginName() {
        return policy.getClass().getName();
    }

    private void failed(String what, RuntimeException e) {
        long n = ++failures;
        if (n == 1 || n % 1000 == 0) {
            LOG.warn("Hot cache policy {} failed in {} ({} failures so far); the cache goes on without that call",
                    policy.getClass().getName(), what, n, e);
        }
    }
}
