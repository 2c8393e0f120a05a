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
}
