package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Messages;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.transport.proto.PutStartReply;
import io.tiffin.core.transport.proto.PutStartRequest;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A batch put that meets another writer's put of one of its keys, as two engines storing the same prefix's pages do:
 * that key is put again after the single put's pauses, so the batch succeeds once the other put ends (revoked here:
 * written by the batch) instead of failing the key at once with {@code REPLICA_IS_NOT_READY}.
 */
class BatchPutAgainstAnotherWriterTest {
    @Test
    void aKeyAnotherWriterIsWritingIsPutOnceThatPutEnds() throws Exception {
        var group = EventLoops.newGroup("batch-put-test", 1, false);
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            String[] hp = cluster.masterAddress().split(":");
            try (TransportClient other = TransportClient.connect(hp[0], Integer.parseInt(hp[1]),
                    TransportSettings.defaults(), "other-writer", group)) {
                PutStartReply started = other.callSync(Opcode.PUT_START, PutStartRequest.newBuilder()
                        .setClientId("other-writer").setKey("shared").setSize(3)
                        .setOptions(Messages.toMsg(PutOptions.DEFAULT)).build(), PutStartReply.parser());
                assertThat(started.getReplicasCount()).isPositive();
                TiffinClient c = cluster.remoteClient();
                CompletableFuture<List<KeyResult<Void>>> batch = CompletableFuture.supplyAsync(() -> c.batchPut(
                        Map.of("shared", new byte[] {1, 2, 3}, "mine", new byte[] {4}), PutOptions.DEFAULT));
                Thread.sleep(100); // the batch has met the other put, and waits
                other.callSync(Opcode.PUT_REVOKE, KeyRequest.newBuilder().setClientId("other-writer").setKey("shared")
                        .build(), Empty.parser());
                List<KeyResult<Void>> results = batch.get(30, TimeUnit.SECONDS);
                assertThat(results).extracting(KeyResult::code).containsOnly(ErrorCode.OK);
                assertThat(c.get("shared")).containsExactly(1, 2, 3);
                assertThat(c.get("mine")).containsExactly(4);
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
