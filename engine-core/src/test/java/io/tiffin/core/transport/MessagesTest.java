package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.PutOptionsMsg;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessagesTest {

    @Test
    void aLocationSurvivesTheWireWithNamesEncodedOnce() throws Exception {
        ReplicaDescriptor first = new ReplicaDescriptor(7, ReplicaType.MEMORY, ReplicaStatus.COMPLETE, "seg-ä-1",
                "node-東京", "127.0.0.1:7000", 4096, 1 << 20, 99, new DataGrant(DataGrant.READ, 123_456, 1, 2));
        ReplicaDescriptor second = new ReplicaDescriptor(8, ReplicaType.MEMORY, ReplicaStatus.COMPLETE, "seg-ä-1",
                "node-東京", "127.0.0.1:7000", 1 << 21, 1 << 20, 99, null);
        ObjectLocation loc = new ObjectLocation("kéy", 1 << 20, 3, 5_000, List.of(first, second), 0xCAFEBABE);

        byte[] wire = Messages.toMsg(loc).toByteArray();
        ObjectLocation back = Messages.fromMsg(ObjectLocationMsg.parseFrom(wire));

        assertThat(back).isEqualTo(loc);
        assertThat(Messages.toMsg(first).getSegmentBytes()).isSameAs(Messages.toMsg(second).getSegmentBytes());
    }

    @Test
    void theNameCacheStartsOverWhenFull() {
        Utf8Cache cache = new Utf8Cache();
        for (int i = 0; i < Utf8Cache.MAX_ENTRIES; i++) {
            assertThat(cache.utf8("segment-" + i).toStringUtf8()).isEqualTo("segment-" + i);
        }
        assertThat(cache.size()).isEqualTo(Utf8Cache.MAX_ENTRIES);

        assertThat(cache.utf8("one more").toStringUtf8()).isEqualTo("one more");
        assertThat(cache.size()).isEqualTo(1);
    }

    /**
     * A put condition outside the four is refused with INVALID_PARAMS, negative ones too (a fuzzing finding: -1 got
     * past the check and the master's PUT_START answered INTERNAL_ERROR with an ArrayIndexOutOfBoundsException).
     */
    @Test
    void aPutConditionOfAnyOtherNumberIsAnInvalidParameter() {
        for (int condition : new int[] {-1, Integer.MIN_VALUE, 4, Integer.MAX_VALUE}) {
            PutOptionsMsg m = PutOptionsMsg.newBuilder().setCondition(condition).build();
            assertThatThrownBy(() -> Messages.fromMsg(m)).as("condition %d", condition)
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("put condition " + condition + " is none of 0 (always)");
        }
        for (PutOptions.Condition c : PutOptions.Condition.values()) {
            PutOptionsMsg m = PutOptionsMsg.newBuilder().setCondition(c.ordinal()).setUpsert(true)
                    .setIfVersion(c == PutOptions.Condition.IF_VERSION ? 7 : 0).build();
            assertThat(Messages.fromMsg(m).condition()).isEqualTo(c);
        }
    }
}
