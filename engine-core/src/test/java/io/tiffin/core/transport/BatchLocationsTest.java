package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.BatchLocationsReply;
import io.tiffin.core.transport.proto.LocationResult;
import io.tiffin.core.transport.proto.ObjectLocationMsg;
import io.tiffin.core.transport.proto.Replica;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchLocationsTest {

    private static ReplicaDescriptor replica(long id, String segment, String node, String endpoint, long offset,
                                             DataGrant grant) {
        return new ReplicaDescriptor(id, ReplicaType.MEMORY, ReplicaStatus.COMPLETE, segment, node, endpoint, offset,
                4096, 7, grant);
    }

    /** 128 keys over 8 segments, some with two replicas, a failure every 16th, names that share a segment name. */
    private static List<KeyResult<ObjectLocation>> results(List<String> keys) {
        List<KeyResult<ObjectLocation>> out = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            String key = "model-7/prefix-" + i + "/é";
            keys.add(key);
            if (i % 16 == 5) {
                out.add(KeyResult.failed(key, ErrorCode.OBJECT_NOT_FOUND));
                continue;
            }
            List<ReplicaDescriptor> replicas = new ArrayList<>();
            int s = i % 8;
            replicas.add(replica(1000 + i, "node-" + s + "-seg0-5e1a2b3c", "node-" + s, "10.0.0." + s + ":7000",
                    4096L * i, i % 3 == 0 ? new DataGrant(DataGrant.READ, 99_000 + i, i, -i) : null));
            if (i % 4 == 0) {
                // the same segment name under another endpoint (a re-mount elsewhere): must not borrow the first's
                replicas.add(replica(5000 + i, "node-" + s + "-seg0-5e1a2b3c", "node-" + s, "10.0.1." + s + ":7000",
                        8192L * i, null));
            }
            out.add(KeyResult.ok(key, new ObjectLocation(key, 4096, 3 + i, 10_000, replicas, i)));
        }
        return out;
    }

    @Test
    void bothFormsCarryEveryLocationAndTheCompactOneInFewerBytes() throws Exception {
        List<String> keys = new ArrayList<>();
        List<KeyResult<ObjectLocation>> results = results(keys);

        byte[] full = BatchLocations.toReply(results, false).toByteArray();
        byte[] compact = BatchLocations.toReply(results, true).toByteArray();

        assertThat(BatchLocations.fromReply(BatchLocationsReply.parseFrom(full), keys)).isEqualTo(results);
        assertThat(BatchLocations.fromReply(BatchLocationsReply.parseFrom(compact), keys)).isEqualTo(results);
        BatchLocationsReply parsed = BatchLocationsReply.parseFrom(compact);
        assertThat(parsed.getSegmentsCount()).as("each segment named once").isEqualTo(8);
        assertThat(parsed.getResults(0).getLocation().getKey()).as("the request's key, left out").isEmpty();
        assertThat(compact.length).isLessThan(full.length);
        // the full form is what clients that do not ask for the compact one (the Python client) have always read
        ObjectLocationMsg first = BatchLocationsReply.parseFrom(full).getResults(0).getLocation();
        assertThat(Messages.fromMsg(first)).isEqualTo(results.getFirst().value());
    }

    @Test
    void aBatchOfOneReplicaPerKeyTakesUnderHalfTheBytesCompact() {
        List<KeyResult<ObjectLocation>> results = new ArrayList<>();
        for (int i = 0; i < 128; i++) {
            String key = "bench-1733212345-warm3-" + i * 37;
            results.add(KeyResult.ok(key, new ObjectLocation(key, 4096, 5 + i, 10_000, List.of(replica(1000 + i,
                    "fake-node-" + i % 16 + "-seg0-5e1a2b3c", "fake-node-" + i % 16, "127.0.0.1:" + (45000 + i % 16),
                    4096L * i * 977, null)), 0)));
        }
        int full = BatchLocations.toReply(results, false).getSerializedSize();
        int compact = BatchLocations.toReply(results, true).getSerializedSize();
        assertThat(compact).as("compact %d bytes, full %d", compact, full).isLessThan(full / 2);
    }

    @Test
    void aReplyThatDoesNotAnswerEveryKeyOrNamesNoSuchSegmentIsRefused() {
        List<String> keys = List.of("a", "b");
        BatchLocationsReply one = BatchLocationsReply.newBuilder().addResults(LocationResult.newBuilder()
                .setCode(ErrorCode.OBJECT_NOT_FOUND.value())).build();
        assertThat(catchThrowableOfType(TiffinException.class, () -> BatchLocations.fromReply(one, keys)).code())
                .isEqualTo(ErrorCode.DESERIALIZE_FAIL);

        LocationResult dangling = LocationResult.newBuilder().setLocation(ObjectLocationMsg.newBuilder().setSize(1)
                .addReplicas(Replica.newBuilder().setReplicaId(1).setSegmentRef(3))).build();
        BatchLocationsReply bad = BatchLocationsReply.newBuilder().addResults(dangling).addResults(dangling).build();
        TiffinException e = catchThrowableOfType(TiffinException.class, () -> BatchLocations.fromReply(bad, keys));
        assertThat(e.code()).isEqualTo(ErrorCode.DESERIALIZE_FAIL);
        assertThat(e.getMessage()).contains("refers to segment 3 of the 0");
    }
}
