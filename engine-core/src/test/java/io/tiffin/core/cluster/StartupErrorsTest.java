package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.ConfigException;
import io.tiffin.core.config.TiffinConfig;
import org.junit.jupiter.api.Test;

/** Wrong configuration stops start-up with a message that says what to fix. */
class StartupErrorsTest {

    @Test
    void unknownAllocationStrategyListsTheInstalledOnes() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").set("allocation.strategy", "no-such-strategy").build();
        assertThatThrownBy(() -> Tiffin.embedded(config).close())
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                .hasMessageContaining("no-such-strategy")
                .hasMessageContaining("random");
    }

    @Test
    void unknownKeyAndWrongTypedValueAreReportedTogether() {
        assertThatThrownBy(() -> TiffinConfig.builder().set("master.lease-tt", "5s").set("master.port", "abc").build())
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("master.lease-tt")
                .hasMessageContaining("master.lease-ttl")
                .hasMessageContaining("master.port = abc");
    }

    @Test
    void aBusyPortIsAClearError() {
        TiffinConfig first = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build();
        try (Tiffin running = Tiffin.embedded(first)) {
            int port = running.master().address().getPort();
            TiffinConfig clash = TiffinConfig.builder().set("master.port", String.valueOf(port))
                    .set("master.admin-port", "0").set("node.segment-size", "16MiB").build();
            assertThatThrownBy(() -> Tiffin.embedded(clash).close()).isInstanceOf(TiffinException.class)
                    .hasMessageContaining(String.valueOf(port));
            // The running instance is unaffected.
            running.client().put("k", new byte[] {1, 2, 3});
            assertThat(running.client().get("k")).containsExactly(1, 2, 3);
        }
    }

    /**
     * Two running node processes under one node.id: the second is refused with a message saying so, and
     * the first keeps its objects (the master used to take the second for a restart of the first and
     * erase them). After the first crashes, a process with that id gets in.
     */
    @Test
    void aSecondNodeWithTheIdOfARunningOneIsRefusedAndTheFirstKeepsItsObjects() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build();
        try (Tiffin running = Tiffin.embedded(config)) {
            String master = "127.0.0.1:" + running.master().address().getPort();
            java.util.function.Supplier<io.tiffin.core.node.NodeServer> twin = () -> io.tiffin.core.node.NodeServer.start(
                    io.tiffin.core.node.NodeOptions.builder(master).nodeId("twin").segmentSize(16L << 20)
                            .pingInterval(java.time.Duration.ofMillis(200)).build());
            io.tiffin.core.node.NodeServer first = twin.get();
            running.client().put("k", new byte[] {4, 5, 6}, io.tiffin.api.PutOptions.DEFAULT.withPreferredSegment(
                    first.segmentName()));

            assertThatThrownBy(twin::get).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_ALREADY_EXISTS))
                    .hasMessageContaining("node.id twin belongs to another running node process");

            assertThat(running.client().get("k")).containsExactly(4, 5, 6);
            first.crash();
            try (io.tiffin.core.node.NodeServer restarted = twin.get()) {
                assertThat(restarted.segmentName()).isNotEqualTo(first.segmentName());
            }
        }
    }

    /**
     * A node process whose node.id another process has taken over (it was stalled long enough for the
     * master to let the newcomer in) learns it from its next ping and stops pinging, so it no longer keeps
     * the id alive for the master.
     */
    @Test
    void aSupersededNodeStopsItsHeartbeats() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build();
        try (Tiffin running = Tiffin.embedded(config)) {
            String master = "127.0.0.1:" + running.master().address().getPort();
            try (io.tiffin.core.node.NodeServer old = io.tiffin.core.node.NodeServer.start(
                    io.tiffin.core.node.NodeOptions.builder(master).nodeId("taken").segmentSize(16L << 20)
                            .pingInterval(java.time.Duration.ofMillis(100)).build())) {
                // another process of "taken" mounts (as one that found the old one silent would)
                running.master().service().mountSegment("taken-seg0-newcomer", "taken", "127.0.0.1:1", 16L << 20, 42, 1, 0);

                await("the old process learns it was superseded").atMost(java.time.Duration.ofSeconds(10))
                        .pollInterval(java.time.Duration.ofMillis(20)).until(old::superseded);
                assertThat(running.master().service().ping("taken", 42))
                        .isEqualTo(io.tiffin.core.master.PingOutcome.OK);
            }
        }
    }

    @Test
    void aSegmentTooLargeForTheMachineIsRefused() {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "64TiB").build();
        assertThatThrownBy(() -> Tiffin.embedded(config).close()).isInstanceOf(TiffinException.class)
                .hasMessageContaining("node.segment-size");
    }
}
