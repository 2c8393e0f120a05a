package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.allocation.SegmentView;
import io.tiffin.core.util.ManualTicker;
import org.junit.jupiter.api.Test;

/** A mount the master refuses (here for a data-plane key too short) changes nothing: it is refused whole. */
class MountRefusalTest {
    private static final long MIB = 1 << 20;
    private final ManualTicker ticker = new ManualTicker();
    private final MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
            ticker, null);

    @Test
    void aRefusedMountOfANewIncarnationLeavesThePreviousOneAndItsObjects() {
        master.mountSegment("node-6-segA", "node-6", "h:1", 64 * MIB, 1, 1, 1000, new byte[32]);
        master.putStart("writer", "kept", 1000, PutOptions.DEFAULT);
        master.putEnd("writer", "kept");
        ticker.advanceMillis(3500); // quiet for long enough that a new incarnation may take over the node id

        assertThatThrownBy(() -> master.mountSegment("node-6-segB", "node-6", "h:1", 64 * MIB, 2, 1, 1000,
                new byte[5])).isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("at least 16");
        assertThat(master.segmentViews()).extracting(SegmentView::name).containsExactly("node-6-segA");
        assertThat(master.existKey("kept").value()).isTrue();
    }

    @Test
    void aRefusedFirstMountLeavesNoNodeBehind() {
        assertThatThrownBy(() -> master.mountSegment("node-5-seg", "node-5", "h:2", 64 * MIB, 1, 1, 1000,
                new byte[1])).isInstanceOf(TiffinException.class).hasMessageContaining("at least 16");
        assertThat(master.liveNodes()).doesNotContain("node-5");
        assertThat(master.segmentViews()).isEmpty();
    }
}
