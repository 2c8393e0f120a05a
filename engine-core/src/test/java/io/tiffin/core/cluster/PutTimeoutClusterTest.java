package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A writer that starts a put and goes quiet: a real master frees the space after master.put-timeout. */
class PutTimeoutClusterTest {
    private static final long MiB = 1L << 20;

    @Test
    void aWriterThatNeverEndsItsPutLosesItsSpaceAndHearsWhyOnALatePutEnd() {
        try (TestCluster cluster = new TestCluster(Map.of("master.put-timeout", "1s"), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "slow-writer")) {
            PutStartRequest start = PutStartRequest.newBuilder().setKey("k").setSize(MiB)
                    .setOptions(Messages.toMsg(PutOptions.DEFAULT)).setPutId(42).build();
            PutStartReply grant = pool.call(cluster.masterAddress(), Opcode.PUT_START, start, PutStartReply.parser());
            assertThat(cluster.master.service().usedBytes()).isEqualTo(MiB);

            await("the abandoned put's space").atMost(Duration.ofSeconds(15))
                    .until(() -> cluster.master.service().usedBytes() == 0);
            TiffinException late = catchThrowableOfType(TiffinException.class, () -> pool.call(cluster.masterAddress(),
                    Opcode.PUT_END, KeyRequest.newBuilder().setKey("k").build(), Empty.parser()));
            assertThat(late.code()).isEqualTo(ErrorCode.INVALID_WRITE);
            assertThat(late.getMessage()).contains("k: INVALID_WRITE: the put timed out: neither PutEnd nor PutRevoke"
                    + " came within master.put-timeout = 1s of its PutStart, so the master freed its space");

            PutStartReply again = pool.call(cluster.masterAddress(), Opcode.PUT_START, start, PutStartReply.parser());
            assertThat(again.getReplicasCount()).as("the key can be put again").isEqualTo(grant.getReplicasCount());
        }
    }

    @Test
    void aPutEndThatFindsNoPutSaysTheObjectWasNotStored() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB);
             BlockingConnectionPool pool = new BlockingConnectionPool("t", TransportSettings.defaults(), "writer")) {
            PutStartRequest start = PutStartRequest.newBuilder().setKey("k").setSize(MiB)
                    .setOptions(Messages.toMsg(PutOptions.DEFAULT)).setPutId(7).build();
            pool.call(cluster.masterAddress(), Opcode.PUT_START, start, PutStartReply.parser());
            pool.call(cluster.masterAddress(), Opcode.PUT_REVOKE, KeyRequest.newBuilder().setKey("k").build(),
                    Empty.parser());

            TiffinException end = catchThrowableOfType(TiffinException.class, () -> pool.call(cluster.masterAddress(),
                    Opcode.PUT_END, KeyRequest.newBuilder().setKey("k").build(), Empty.parser()));
            assertThat(end.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(end.getMessage()).startsWith("k: OBJECT_NOT_FOUND: this master holds no put of the key in"
                    + " progress").endsWith("nothing was stored: put the object again");
        }
    }
}
