package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.core.util.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code master.put-timeout}: an abandoned put's space comes back; a retried put stays idempotent before it. */
class PutTimeoutTest {
    private static final long MiB = 1L << 20;
    private static final Duration TIMEOUT = MasterSettings.defaults().putTimeout();

    private ManualTicker ticker;
    private MasterService master;

    @BeforeEach
    void setUp() {
        ticker = new ManualTicker();
        ticker.advance(Duration.ofSeconds(100));
        master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER, ticker, null);
        master.mountSegment("s1", "node-s1", "127.0.0.1:1", 64 * MiB);
    }

    private long used() {
        return master.segmentViews().getFirst().used();
    }

    @Test
    void theDefaultIsAMinute() {
        assertThat(TIMEOUT).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void aPutNeverEndedFreesItsSpaceAfterThePutTimeoutAndItsLatePutEndIsRefused() {
        KeyResult<PutGrant> first = master.putStart("w1", "k", 4096, PutOptions.DEFAULT, 7);
        assertThat(first.code()).isEqualTo(ErrorCode.OK);
        assertThat(used()).isEqualTo(4096);

        ticker.advance(TIMEOUT.minusMillis(1));
        assertThat(master.releaseStuckPuts()).isZero();
        assertThat(used()).as("still within its timeout").isEqualTo(4096);
        KeyResult<PutGrant> retried = master.putStart("w1", "k", 4096, PutOptions.DEFAULT, 7);
        assertThat(retried.code()).as("the same put id again: the same put").isEqualTo(ErrorCode.OK);
        assertThat(retried.value().replicas()).isEqualTo(first.value().replicas());
        assertThat(retried.value().version()).isEqualTo(first.value().version());
        assertThat(used()).as("not allocated twice").isEqualTo(4096);

        ticker.advance(Duration.ofMillis(1));
        assertThat(master.releaseStuckPuts()).isEqualTo(1);
        assertThat(used()).as("the abandoned put's space is free").isZero();
        assertThat(master.counters().putTimeouts()).isEqualTo(1);
        assertThat(master.getReplicaList("k").code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);

        ErrorCode late = master.putEnd("w1", "k");
        assertThat(late).isEqualTo(ErrorCode.INVALID_WRITE);
        assertThat(master.putEndFailure("k", late)).isEqualTo("k: INVALID_WRITE: the put timed out: neither PutEnd"
                + " nor PutRevoke came within master.put-timeout = 60s of its PutStart, so the master freed its space"
                + " (0 ms ago); put the object again");
        assertThat(master.putEnd("w1", "never-put")).as("a put that never started").isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(master.putEndFailure("never-put", ErrorCode.OBJECT_NOT_FOUND)).as("says the put did not take effect")
                .startsWith("never-put: OBJECT_NOT_FOUND: this master holds no put of the key in progress")
                .endsWith("nothing was stored: put the object again");
        assertThat(master.putEndFailure("k", ErrorCode.ILLEGAL_CLIENT)).as("another writer's put: the usual hint").isNull();

        assertThat(master.putStart("w1", "k", 4096, PutOptions.DEFAULT, 8).code()).as("the key can be put again")
                .isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("w1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.putEndFailure("k", ErrorCode.INVALID_WRITE)).as("forgotten once the key is put again")
                .isNull();
    }

    /** A replacing put (the gateway's SET) abandoned: its space comes back, the value it was to replace stays. */
    @Test
    void anAbandonedReplacementFreesItsSpaceAndLeavesTheReplacedValue() {
        assertThat(master.putStart("w1", "k", 4096, PutOptions.DEFAULT, 1).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("w1", "k")).isEqualTo(ErrorCode.OK);
        PutOptions set = PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true);
        assertThat(master.putStart("w2", "k", 8192, set, 2).code()).isEqualTo(ErrorCode.OK);
        assertThat(used()).isEqualTo(4096 + 8192);

        ticker.advance(TIMEOUT);
        assertThat(master.releaseStuckPuts()).isEqualTo(1);
        assertThat(used()).as("the replacement's space is free").isEqualTo(4096);
        assertThat(master.counters().putTimeouts()).isEqualTo(1);
        assertThat(master.getReplicaList("k").value().size()).as("the replaced value stays").isEqualTo(4096);
        ErrorCode late = master.putEnd("w2", "k");
        assertThat(late).isEqualTo(ErrorCode.INVALID_WRITE);
        assertThat(master.putEndFailure("k", late)).contains("the put timed out").endsWith("put the object again");
        assertThat(master.getReplicaList("k").value().size()).isEqualTo(4096);
    }

    @Test
    void putsThatEndOrAreRevokedInTimeAreNotTouchedAndLeaveNothingToWatch() {
        for (int i = 0; i < 1000; i++) {
            assertThat(master.putStart("w1", "k" + i, 4096, PutOptions.DEFAULT, i + 1).code()).isEqualTo(ErrorCode.OK);
        }
        assertThat(master.watchedPutsAndTasks()).isEqualTo(1000);
        for (int i = 0; i < 1000; i++) {
            assertThat(i % 2 == 0 ? master.putEnd("w1", "k" + i) : master.putRevoke("w1", "k" + i))
                    .isEqualTo(ErrorCode.OK);
        }
        assertThat(master.watchedPutsAndTasks()).as("the sweep has nothing to look at").isZero();
        ticker.advance(TIMEOUT.multipliedBy(2));
        assertThat(master.releaseStuckPuts()).isZero();
        assertThat(used()).isEqualTo(500 * 4096);
        assertThat(master.getReplicaList("k0").isOk()).isTrue();
        assertThat(master.counters().putTimeouts()).isZero();
    }

    @Test
    void theSweepFreesOnlyThePutsThatAreDue() {
        master.putStart("w1", "early", 4096, PutOptions.DEFAULT, 1);
        ticker.advance(TIMEOUT.dividedBy(2));
        master.putStart("w1", "late", 8192, PutOptions.DEFAULT, 2);
        ticker.advance(TIMEOUT.dividedBy(2));
        assertThat(master.releaseStuckPuts()).isEqualTo(1);
        assertThat(used()).isEqualTo(8192);
        assertThat(master.putEnd("w1", "late")).isEqualTo(ErrorCode.OK);
        ticker.advance(TIMEOUT);
        assertThat(master.releaseStuckPuts()).isZero();
        assertThat(master.getReplicaList("late").isOk()).isTrue();
    }

    /** A put whose object went while it was written (its node left) is no later put of the key. */
    @Test
    void theSweepLeavesAKeysNewPutAloneWhenAnEarlierPutOfItWentWhileBeingWritten() {
        master.mountSegment("s2", "node-s2", "127.0.0.1:2", 64 * MiB);
        master.putStart("w1", "k", 4096, PutOptions.DEFAULT.withPreferredSegment("s1"), 1);
        master.unmountSegment("node-s1", "s1");
        assertThat(master.getReplicaList("k").code()).as("gone with its node").isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        ticker.advance(TIMEOUT.dividedBy(2));
        assertThat(master.putStart("w2", "k", 8192, PutOptions.DEFAULT, 2).code()).isEqualTo(ErrorCode.OK);
        ticker.advance(TIMEOUT.dividedBy(2));
        assertThat(master.releaseStuckPuts()).as("the first put's object is not the key's put now").isZero();
        assertThat(master.counters().putTimeouts()).isZero();
        assertThat(master.putEnd("w2", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k").value().size()).isEqualTo(8192);
        assertThat(master.watchedPutsAndTasks()).isZero();
    }

    @Test
    void aPreemptedStuckPutKeepsItsBuffersOnlyUntilItsPutTimeout() {
        master.putStart("w1", "k", 4096, PutOptions.DEFAULT, 1);
        ticker.advance(MasterSettings.defaults().putStartDiscardTimeout());
        assertThat(master.putStart("w2", "k", 4096, PutOptions.DEFAULT, 2).code()).as("pre-empts the stuck put")
                .isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("w2", "k")).isEqualTo(ErrorCode.OK);
        assertThat(used()).as("the stuck put's buffer is kept: its writer may still write").isEqualTo(2 * 4096);
        ticker.advance(TIMEOUT.minus(MasterSettings.defaults().putStartDiscardTimeout()));
        master.releaseStuckPuts();
        assertThat(used()).isEqualTo(4096);
    }
}
