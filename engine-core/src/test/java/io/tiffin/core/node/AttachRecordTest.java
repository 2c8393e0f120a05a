package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.core.local.SegmentLedger;
import io.tiffin.core.transport.proto.CommitRecord;
import org.junit.jupiter.api.Test;

/** What a node reports of each record when it attaches: every field its writer recorded, none left behind. */
class AttachRecordTest {
    @Test
    void anAttachReportsEveryFieldOfARecord() {
        CommitRecord r = MasterLink.recordOf(new SegmentLedger.Entry("k", 4096, 1000, 7, 99, true, true, 0xCAFE, true,
                1_800_000_000_000L));
        assertThat(r).isEqualTo(CommitRecord.newBuilder().setKey("k").setOffset(4096).setSize(1000).setVersion(7)
                .setPutId(99).setHardPin(true).setSoftPin(true).setCrc32C(0xCAFE).setYields(true)
                .setExpireAtMs(1_800_000_000_000L).build());
        assertThat(MasterLink.recordOf(new SegmentLedger.Entry("k", 0, 1, 1, 1, false, false)).getYields()).isFalse();
        // every field of the message is set above: a field added to the record must be reported too
        assertThat(r.getAllFields()).hasSize(CommitRecord.getDescriptor().getFields().size());
    }
}
