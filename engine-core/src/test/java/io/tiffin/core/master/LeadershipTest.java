package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import org.junit.jupiter.api.Test;

/** Which requests a master serves in each role, and the refusal the others get. */
class LeadershipTest {
    private static void assertRefuses(Leadership l, String... saying) {
        assertThatThrownBy(l::check).isInstanceOfSatisfying(TiffinException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
            assertThat(e.getMessage()).contains(saying);
        });
    }

    @Test
    void aStandbyServesNothingUntilItLeads() {
        Leadership l = Leadership.standby();
        l.leaderHint("10.0.0.2:50051");
        assertRefuses(l, "this master is a standby", "the leader is 10.0.0.2:50051");
        l.lead();
        l.check();
        assertThat(l.leads()).isTrue();
    }

    @Test
    void aClosingMasterServesNoNewRequestAndNeverLeadsAgain() {
        Leadership l = Leadership.alwaysLeader();
        l.check();
        l.close();
        assertThat(l.role()).isEqualTo(Leadership.Role.CLOSING);
        assertRefuses(l, "this master is shutting down");
        l.lead(); // an election that completes during the close
        assertThat(l.leads()).isFalse();
    }

    @Test
    void aDeposedMasterNeverLeadsAgain() {
        Leadership l = Leadership.standby();
        l.lead();
        l.depose();
        l.lead();
        assertThat(l.role()).isEqualTo(Leadership.Role.DEPOSED);
        assertRefuses(l, "this master was deposed");
    }

    @Test
    void aLeaderServesOnlyWithinItsLeaseAndAgainOnceItIsRenewed() {
        Leadership l = Leadership.standby();
        long[] deadline = {Long.MIN_VALUE};
        l.leaseFrom(() -> deadline[0]);
        l.leaderHint("10.0.0.1:50051"); // itself: not named while it cannot tell whether it still leads
        l.lead();
        assertThat(l.role()).isEqualTo(Leadership.Role.LEADER);
        assertThat(l.leads()).as("elected, no lease confirmed yet").isFalse();
        assertRefuses(l, "its leader lease lapsed", "the leader is not known yet");
        deadline[0] = System.nanoTime() + 60_000_000_000L;
        l.check();
        assertThat(l.leads()).isTrue();
        deadline[0] = System.nanoTime() - 1; // as after a pause longer than the lease
        assertThat(l.leads()).isFalse();
        assertRefuses(l, "its leader lease lapsed");
        deadline[0] = System.nanoTime() + 60_000_000_000L; // renewed: the session lived on
        assertThat(l.leads()).isTrue();
        l.depose();
        assertThat(l.leads()).as("a lease does not bring back a deposed master").isFalse();
        assertRefuses(l, "this master was deposed");
    }
}
