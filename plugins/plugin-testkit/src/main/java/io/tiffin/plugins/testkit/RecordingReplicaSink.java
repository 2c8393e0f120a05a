package io.tiffin.plugins.testkit;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.ReplicaSink;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * A {@link ReplicaSink} for strategy tests that records every offer and enforces nothing: an offer
 * succeeds whenever the {@link SimulatedSegment} has room, even if the segment is not OK, already
 * holds a replica or no replica is wanted any more. So a test sees exactly what the strategy did and
 * can check the contract on the record.
 *
 * <p>Not thread-safe: one instance per placement call.
 */
public final class RecordingReplicaSink implements ReplicaSink {
    /**
     * One {@link #tryPlace} call.
     *
     * @param segment the offered segment's name
     * @param accepted whether a replica was allocated there
     * @param remainingBefore {@link #remaining()} when the offer was made
     */
    public record Offer(String segment, boolean accepted, int remainingBefore) {
    }

    private final long size;
    private final int wanted;
    private final RandomGenerator random;
    private final List<Offer> offers = new ArrayList<>();
    private final List<String> placed = new ArrayList<>();

    /**
     * @param request the request being placed (its size and replica count)
     * @param random the random source handed to the strategy
     */
    public RecordingReplicaSink(AllocationRequest request, RandomGenerator random) {
        this.size = request.size();
        this.wanted = request.replicas();
        this.random = random;
    }

    @Override
    public boolean tryPlace(SegmentView segment) {
        int before = remaining();
        boolean ok = segment instanceof SimulatedSegment s && s.allocate(size) >= 0;
        offers.add(new Offer(segment.name(), ok, before));
        if (ok) {
            placed.add(segment.name());
        }
        return ok;
    }

    /** Replicas still wanted; negative if the strategy placed more than asked. */
    @Override
    public int remaining() {
        return wanted - placed.size();
    }

    @Override
    public int attempts() {
        return offers.size();
    }

    @Override
    public RandomGenerator random() {
        return random;
    }

    /** Every offer, in order. */
    public List<Offer> offers() {
        return List.copyOf(offers);
    }

    /** Names of the segments that received a replica, in order (may repeat if the strategy erred). */
    public List<String> placed() {
        return List.copyOf(placed);
    }
}
