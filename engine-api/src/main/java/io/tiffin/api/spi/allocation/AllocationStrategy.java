package io.tiffin.api.spi.allocation;

import java.util.List;

/**
 * Decides on which segments the replicas of a new object go. A strategy is a decider over read-only
 * {@link SegmentView}s: it looks at the segments and offers them to the {@link ReplicaSink} in the
 * order it prefers; the core performs each allocation and reports the outcome. A strategy never sees
 * or changes allocator internals.
 *
 * <p><b>Contract</b> (checked by the plugin test kit's {@code AllocationStrategyContract}):
 * <ul>
 *   <li>preferred segments ({@link AllocationRequest#preferredSegments()}) are offered first, in
 *       order, when they are OK and large enough;</li>
 *   <li>placement is best effort: the strategy keeps offering candidates until
 *       {@link ReplicaSink#remaining()} is zero or it has exhausted its candidates (it may bound its
 *       tries, as Mooncake's random strategy does at 100);</li>
 *   <li>segments that are not {@link SegmentStatus#OK} are never offered;</li>
 *   <li>the call returns without throwing when nothing fits (the core reports
 *       {@code NO_AVAILABLE_HANDLE}).</li>
 * </ul>
 *
 * <p><b>Threads</b>: the core may call {@link #place} from many threads at once, so implementations
 * must be thread-safe; the simplest is to keep no mutable state and use {@link ReplicaSink#random()}.
 */
public interface AllocationStrategy {
    /**
     * Places the replicas of one object.
     *
     * <p>A strategy that throws fails the key with {@code INTERNAL_ERROR} (the core frees what it placed
     * before throwing and logs the exception); other keys of a batch go on.
     *
     * @param request what to place
     * @param segments the mounted segments, in a stable order (the list and the views are valid for
     *     this call only)
     * @param sink where to place replicas
     */
    void place(AllocationRequest request, List<? extends SegmentView> segments, ReplicaSink sink);
}
