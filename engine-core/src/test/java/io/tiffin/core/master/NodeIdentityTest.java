package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * One node.id, one running process: a second process under the same id is refused while the first one
 * pings (it used to take over and erase the first one's objects), a process that restarted after a crash
 * gets in once the old one has fallen silent, and the old one's pings then neither count nor keep the id
 * alive.
 */
class NodeIdentityTest {
    private static final long MiB = 1L << 20;
    private final ManualTicker ticker = new ManualTicker();
    private final MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER,
            ticker, null);

    @Test
    void aSecondProcessUnderARunningNodesIdIsRefusedAndTakesNothing() {
        master.mountSegment("n1-seg-a", "n1", "h:1", 64 * MiB, 1, 1, 1000);
        assertThat(master.putStart("c", "k", 4096, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("c", "k")).isEqualTo(ErrorCode.OK);
        ticker.advance(Duration.ofMillis(800));
        assertThat(master.ping("n1", 1)).isEqualTo(PingOutcome.OK);
        ticker.advance(Duration.ofMillis(500));

        assertThatThrownBy(() -> master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 1000))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_ALREADY_EXISTS);
                    assertThat(e.getMessage()).contains("node.id n1 belongs to another running node process")
                            .contains("give every node its own node.id");
                });

        assertThat(master.getReplicaList("k").isOk()).as("the running node's object").isTrue();
        assertThat(master.ping("n1", 1)).isEqualTo(PingOutcome.OK);
    }

    @Test
    void aRestartAfterACrashGetsInOnceTheOldProcessIsSilentAndTheOldOneIsThenSuperseded() {
        master.mountSegment("n1-seg-a", "n1", "h:1", 64 * MiB, 1, 1, 1000);
        ticker.advance(Duration.ofMillis(3100)); // the old process crashed: no pings for over 3 periods

        master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 1000);

        assertThat(master.ping("n1", 2)).isEqualTo(PingOutcome.OK);
        assertThat(master.ping("n1", 1)).as("the old process, if it was only stalled")
                .isEqualTo(PingOutcome.SUPERSEDED);
        // its pings do not keep the id alive: once the new process stops pinging, the node expires
        for (int i = 0; i < 12; i++) {
            ticker.advance(Duration.ofSeconds(1));
            master.ping("n1", 1);
        }
        assertThat(master.expireNodes()).containsExactly("n1");
    }

    @Test
    void aRestartAfterACrashBeforeTheFirstPingGetsInOnceTheOldProcessIsSilent() {
        master.mountSegment("n1-seg-a", "n1", "h:1", 64 * MiB, 1, 1, 1000); // crashed before its first ping
        ticker.advance(Duration.ofMillis(3100));

        master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 1000);

        assertThat(master.ping("n1", 2)).isEqualTo(PingOutcome.OK);
    }

    /**
     * After a takeover the new master has heard nothing from the node yet: a new process under its id waits until the
     * old one could have re-attached (three periods since the takeover), then gets in. It used to be refused until
     * the node's segments left the facts (the recovery window), and failed to start.
     */
    @Test
    void aNodeRestartedAfterATakeoverGetsInOnceItsPredecessorStayedSilentSinceTheTakeover() {
        master.restore(io.tiffin.core.transport.proto.ClusterStateMsg.newBuilder().setTerm(1)
                .addSegments(io.tiffin.core.transport.proto.SegmentFact.newBuilder().setName("n1-seg-a").setNodeId("n1")
                        .setEndpoint("h:1").setCapacity(64 * MiB).setIncarnation(1)).build(), 30_000);

        assertThatThrownBy(() -> master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 1000))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_ALREADY_EXISTS));
        ticker.advance(Duration.ofMillis(3100));

        master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 1000);

        assertThat(master.ping("n1", 2)).isEqualTo(PingOutcome.OK);
    }

    @Test
    void aMountWithoutAPingIntervalKeepsTheOldRule() {
        master.mountSegment("n1-seg-a", "n1", "h:1", 64 * MiB, 1, 1, 0);
        master.mountSegment("n1-seg-b", "n1", "h:2", 64 * MiB, 2, 1, 0); // an older node: taken as a restart
        assertThat(master.ping("n1", 2)).isEqualTo(PingOutcome.OK);
    }
}
