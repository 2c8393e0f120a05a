package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The liveness check counts against nodes only the time the master listened to them: not a pause of its own, and
 * not a lapse of its leader lease, during which it refused their pings. The master's clock and the check's monotonic
 * clock move together here, half a second a check.
 */
class LivenessCheckTest {
    private static final long MiB = 1L << 20;
    private static final Duration STEP = Duration.ofMillis(500);

    private final ManualTicker ticker = new ManualTicker();
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicBoolean leads = new AtomicBoolean(true);
    private final AtomicBoolean lapsed = new AtomicBoolean(false);

    private void step(LivenessCheck check, int times) {
        for (int i = 0; i < times; i++) {
            ticker.advance(STEP);
            nanos.addAndGet(STEP.toNanos());
            check.run();
        }
    }

    @Test
    void aLapseOfTheLeaseLongerThanTheNodeTtlExpiresNoNodeThatPingsAgainAfterIt() {
        MasterService m = new MasterService(MasterSettings.defaults(), (request, segments, sink) -> {
            segments.forEach(sink::tryPlace);
        }, ticker, null);
        m.mountSegment("s-n1", "n1", "ep-n1", 64 * MiB);
        LivenessCheck check = new LivenessCheck(m, STEP.toMillis(), leads::get, lapsed::get, nanos::get);
        long ttlSteps = MasterSettings.defaults().nodeTtl().toMillis() / STEP.toMillis();

        step(check, 2);
        leads.set(false);
        lapsed.set(true); // the lease lapses: the node's pings are refused
        step(check, (int) ttlSteps + 4);
        leads.set(true);
        lapsed.set(false); // renewed in the same session
        step(check, 1);
        assertThat(m.liveNodes()).as("the lapse does not count against the node").containsExactly("n1");

        step(check, (int) ttlSteps + 2); // now the node really is silent
        assertThat(m.liveNodes()).as("a silent node still expires").isEmpty();
    }

    @Test
    void aStandbysTimeIsNotAddedToTheNodesDeadlines() {
        MasterService m = new MasterService(MasterSettings.defaults(), (request, segments, sink) -> {
            segments.forEach(sink::tryPlace);
        }, ticker, null);
        leads.set(false); // a standby: it has no nodes and no lapse
        LivenessCheck check = new LivenessCheck(m, STEP.toMillis(), leads::get, lapsed::get, nanos::get);
        step(check, 40);
        leads.set(true); // elected; its nodes mount
        m.mountSegment("s-n1", "n1", "ep-n1", 64 * MiB);
        step(check, (int) (MasterSettings.defaults().nodeTtl().toMillis() / STEP.toMillis()) + 2);
        assertThat(m.liveNodes()).as("silent for a TTL since it mounted").isEmpty();
    }
}
