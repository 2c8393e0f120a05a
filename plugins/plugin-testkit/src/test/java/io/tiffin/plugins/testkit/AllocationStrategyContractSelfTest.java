package io.tiffin.plugins.testkit;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.spi.allocation.AllocationRequest;
import io.tiffin.api.spi.allocation.AllocationStrategy;
import io.tiffin.api.spi.allocation.SegmentStatus;
import io.tiffin.api.spi.allocation.SegmentView;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The contract accepts a correct strategy and catches broken ones. */
class AllocationStrategyContractSelfTest {
    /** First fit over OK segments, one replica per segment: correct. */
    private static final AllocationStrategy FIRST_FIT = (request, segments, sink) -> {
        for (SegmentView s : request.preferredSegments().isEmpty() ? segments : preferredFirst(request, segments)) {
            if (sink.remaining() == 0) {
                return;
            }
            if (s.status() == SegmentStatus.OK && s.largestFreeRegion() >= request.size()) {
                sink.tryPlace(s);
            }
        }
    };

    private static List<SegmentView> preferredFirst(AllocationRequest request,
            List<? extends SegmentView> segments) {
        List<SegmentView> order = new ArrayList<>();
        for (String name : request.preferredSegments()) {
            segments.stream().filter(s -> s.name().equals(name) && !order.contains(s)).forEach(order::add);
        }
        segments.stream().filter(s -> !order.contains(s)).forEach(order::add);
        return order;
    }

    @Test
    void correctFirstFitStrategyPasses() {
        assertThatCode(() -> AllocationStrategyContract.verify(FIRST_FIT)).doesNotThrowAnyException();
    }

    @Test
    void strategyOfferingDrainingSegmentsFails() {
        AllocationStrategy ignoresStatus = (request, segments, sink) -> {
            for (SegmentView s : preferredFirst(request, segments)) {
                if (sink.remaining() > 0 && s.largestFreeRegion() >= request.size()) {
                    sink.tryPlace(s);
                }
            }
        };
        assertThatThrownBy(() -> AllocationStrategyContract.verify(ignoresStatus))
                .isInstanceOf(AssertionError.class).hasMessageContaining("neverOffersDrainingOrUnmountingSegments");
    }

    @Test
    void strategyPlacingTwoReplicasOnOneSegmentFails() {
        AllocationStrategy sameSegment = (request, segments, sink) -> {
            for (SegmentView s : preferredFirst(request, segments)) {
                while (sink.remaining() > 0 && s.status() == SegmentStatus.OK && sink.tryPlace(s)) {
                    // keeps offering the same segment
                }
            }
        };
        assertThatThrownBy(() -> AllocationStrategyContract.verify(sameSegment))
                .isInstanceOf(AssertionError.class).hasMessageContaining("replicasGoToDistinctSegments");
    }

    @Test
    void strategyThatGivesUpEarlyFails() {
        AllocationStrategy oneTry = (request, segments, sink) -> {
            for (SegmentView s : preferredFirst(request, segments)) {
                if (s.status() == SegmentStatus.OK) {
                    sink.tryPlace(s);
                    return;
                }
            }
        };
        assertThatThrownBy(() -> AllocationStrategyContract.verify(oneTry)).isInstanceOf(AssertionError.class);
    }
}
