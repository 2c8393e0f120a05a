package io.tiffin.core.master;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Collects, over one removal call, the latest instant (master ms) until which a client may still read
 * a force-removed object through a location it cached ({@link ObjectMetadata#cachedUntilMillis}). The
 * caller reports the removal only after it ({@link MasterService#millisUntil}), so a get that starts after
 * the removal returned finds nothing, cached or not; until then puts of the key are refused with
 * OBJECT_HAS_LEASE. A PutEnd's hold also collects the node records it changed ({@link #awaitRecords}: a KEEPTTL
 * replacement's deadline that moved during its put), which its answer waits for as well.
 *
 * <p>Thread-safe.
 */
public final class CacheHold {
    private final AtomicLong untilMillis = new AtomicLong();
    private final long owner;
    /** What the nodes' records must have before the answer (null = nothing); guarded by this. */
    private CompletableFuture<Void> records;

    /** For a removal by an unknown client: every cache's locations are waited for. */
    public CacheHold() {
        this(0);
    }

    /**
     * For a removal by the client whose location cache is {@code owner} (> 0; 0 = unknown): objects only
     * that cache holds are not waited for, since the client drops its own entries around the removal.
     */
    public CacheHold(long owner) {
        this.owner = owner;
    }

    /** The remover's location cache (> 0), or 0 when unknown. */
    long owner() {
        return owner;
    }

    /** The removal may be reported no earlier than {@code until} (master ms). */
    void cover(long until) {
        untilMillis.accumulateAndGet(until, Math::max);
    }

    /** The instant (master ms) to wait for; 0 = none. */
    public long untilMillis() {
        return untilMillis.get();
    }

    /** The call may be reported only once {@code recorded} completes too: the nodes' records have a change it made. */
    synchronized void awaitRecords(CompletableFuture<Void> recorded) {
        records = records == null ? recorded : CompletableFuture.allOf(records, recorded);
    }

    /**
     * What the call waits for besides the instant: {@code other} (null = nothing) and the records it made; null if
     * neither. Fails as either fails.
     */
    public synchronized CompletableFuture<?> awaited(CompletableFuture<?> other) {
        return records == null ? other : other == null ? records : CompletableFuture.allOf(other, records);
    }
}
