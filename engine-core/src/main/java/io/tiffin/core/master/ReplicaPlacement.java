package io.tiffin.core.master;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Places new memory replicas: runs the configured {@link AllocationStrategy} (plugin code) over the
 * mounted segments into a {@link SegmentReplicaSink}, and remembers that an allocation found no room
 * so that the next eviction pass runs ({@link #takeAllocationFailed}).
 *
 * <p>Thread-safe: the strategy is called concurrently (strategies are stateless or thread-safe, see
 * {@link AllocationStrategy}); the sink is per call; the flag and failure count are atomic. Called under
 * a shard lock; takes segment monitors (in the sink).
 */
final class ReplicaPlacement {
    private static final Logger LOG = LogManager.getLogger(ReplicaPlacement.class);

    private final AllocationStrategy strategy;
    private final SegmentRegistry segments;
    private final RandomGenerator random;
    private final AtomicLong strategyFailures = new AtomicLong();
    private final AtomicBoolean allocationFailed = new AtomicBoolean();
    private volatile Runnable onFailure = () -> { };

    /**
     * @param random the random source handed to the strategy, or null for a thread-local one
     */
    ReplicaPlacement(AllocationStrategy strategy, SegmentRegistry segments, RandomGenerator random) {
        this.strategy = strategy;
        this.segments = segments;
        this.random = random;
    }

    /**
     * A sink for {@code wanted} replicas of {@code size} bytes of {@code key}'s object, with this placement's random
     * source.
     */
    SegmentReplicaSink sink(long size, String key, int wanted) {
        return new SegmentReplicaSink(size, key, wanted, random);
    }

    /**
     * Runs the allocation strategy. Returns false if it threw: what it placed so far is freed — nothing
     * else would ever free it — the failure is logged (the first, then every 1000th) and the caller fails
     * the key with {@code INTERNAL_ERROR} (other keys of a batch go on).
     */
    boolean place(AllocationRequest request, SegmentReplicaSink sink) {
        try {
            strategy.place(request, segments.segments(), sink);
            return true;
        } catch (RuntimeException | LinkageError | StackOverflowError e) {
            // plugin code: a NoClassDefFoundError (a missing or corrupt jar of the plugin's) must free what it
            // placed as surely as a bug's exception
            sink.rollback();
            long n = strategyFailures.incrementAndGet();
            if (n == 1 || n % 1000 == 0) {
                LOG.warn("Allocation strategy {} failed ({} failures so far); its puts fail with INTERNAL_ERROR:"
                        + " fix the plugin or choose another allocation.strategy", strategy.getClass().getName(), n, e);
            }
            return false;
        }
    }

    /**
     * An allocation of {@code size} bytes found no room: asks the next eviction pass to free some, unless
     * no mounted segment could hold the object even empty (evicting would cost objects and gain nothing).
     */
    void noteAllocationFailure(long size) {
        for (MountedSegment seg : segments.segments()) {
            if (seg.capacity() >= size) {
                if (!allocationFailed.get() && !allocationFailed.getAndSet(true)) {
                    onFailure.run();
                }
                return;
            }
        }
    }

    /**
     * Runs {@code listener} whenever the flag {@link #takeAllocationFailed} clears is set anew, on the failing
     * put's thread under its shard lock: it must not block.
     */
    void onAllocationFailure(Runnable listener) {
        onFailure = listener;
    }

    /** Whether an allocation failed since the last {@link #takeAllocationFailed} (without clearing it). */
    boolean allocationFailedPending() {
        return allocationFailed.get();
    }

    /** Whether an allocation failed since the last call (and clears it). */
    boolean takeAllocationFailed() {
        return allocationFailed.getAndSet(false);
    }
}
