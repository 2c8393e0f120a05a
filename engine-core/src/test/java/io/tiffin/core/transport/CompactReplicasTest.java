package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.DataGrant;
import io.tiffin.api.ReplicaDescriptor;
import io.tiffin.api.ReplicaStatus;
import io.tiffin.api.ReplicaType;
import io.tiffin.core.transport.proto.Replica;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompactReplicasTest {

    private static ReplicaDescriptor replica(long id, String segment, String endpoint) {
        return new ReplicaDescriptor(id, ReplicaType.MEMORY, ReplicaStatus.PROCESSING, segment, "node-of-" + segment,
                endpoint, 4096 * id, 1 << 20, 11, new DataGrant(DataGrant.WRITE, 5_000, id, ~id));
    }

    @Test
    void eachSegmentIsNamedOnceAndEveryReplicaReadsBackWhole() {
        List<ReplicaDescriptor> ds = List.of(replica(1, "seg-a", "h1:1"), replica(2, "seg-b", "h2:1"),
                replica(3, "seg-a", "h1:1"), replica(4, "seg-a", "h9:9"));
        CompactReplicas.Writer writer = new CompactReplicas.Writer();
        List<Replica> msgs = ds.stream().map(d -> writer.replica(d).build()).toList();

        assertThat(msgs).extracting(Replica::getSegmentRef).containsExactly(1, 2, 1, 0);
        assertThat(writer.segments()).extracting(n -> n.getSegment() + "@" + n.getEndpoint())
                .containsExactly("seg-a@h1:1", "seg-b@h2:1");
        assertThat(msgs.getFirst().getSegment()).as("left out").isEmpty();
        assertThat(msgs.get(3).getEndpoint()).as("same segment name, other names: in full").isEqualTo("h9:9");
        assertThat(CompactReplicas.read(msgs, writer.segments())).isEqualTo(ds);
    }
}
