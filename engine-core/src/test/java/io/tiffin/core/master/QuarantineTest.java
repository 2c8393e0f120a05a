package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ReplicaStatus;
import io.tiffin.core.util.ManualTicker;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Quarantine}: buffers go back to their segment at their release time, not before. */
class QuarantineTest {
    private static final long WRITER_TIMEOUT = 600_000;

    private final ManualTicker ticker = new ManualTicker();
    private final Quarantine quarantine = new Quarantine(ticker, WRITER_TIMEOUT);
    private final MountedSegment segment = new MountedSegment("s", "n", "ep", 1 << 20, 0, 0);

    private ReplicaRecord replica(ReplicaStatus status) {
        long handle = segment.allocate(4096, "k");
        ReplicaRecord r = new ReplicaRecord(handle, segment, handle, segment.offset(handle));
        r.status(status);
        return r;
    }

    @Test
    void buffersGoBackAtTheirReleaseTimeEarliestFirst() {
        long now = ticker.millis();
        quarantine.add(replica(ReplicaStatus.COMPLETE), 0, now + 100);
        quarantine.addAll(List.of(replica(ReplicaStatus.COMPLETE)), 0, now + 50);
        assertThat(quarantine.releaseDue()).isZero();
        assertThat(segment.used()).isEqualTo(2 * 4096);

        ticker.advanceMillis(50);
        assertThat(quarantine.releaseDue()).isEqualTo(1);
        assertThat(segment.used()).isEqualTo(4096);
        ticker.advanceMillis(49);
        assertThat(quarantine.releaseDue()).isZero();
        ticker.advanceMillis(1);
        assertThat(quarantine.releaseDue()).isEqualTo(1);
        assertThat(segment.used()).isZero();
    }

    @Test
    void replicasBeingWrittenLeaveTheObjectAndWaitForTheWriterTimeout() {
        ReplicaRecord complete = replica(ReplicaStatus.COMPLETE);
        ReplicaRecord writing = replica(ReplicaStatus.PROCESSING);
        ObjectMetadata m = new ObjectMetadata("k", "w", 4096, 0, false, false, List.of(complete, writing));

        assertThat(quarantine.takeWriting(m)).isEqualTo(1);

        assertThat(m.replicas()).containsExactly(complete);
        ticker.advanceMillis(WRITER_TIMEOUT - 1);
        assertThat(quarantine.releaseDue()).isZero();
        assertThat(segment.used()).as("the writer may still write into it").isEqualTo(2 * 4096);
        ticker.advanceMillis(1);
        assertThat(quarantine.releaseDue()).isEqualTo(1);
        assertThat(segment.used()).isEqualTo(4096);
        assertThat(quarantine.takeWriting(m)).as("nothing left being written").isZero();
    }
}
