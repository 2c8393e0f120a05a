package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.EventLoops;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportClient;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.KeyRequest;
import io.tiffin.core.util.ManualTicker;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

/**
 * A forced removal whose reply must wait for other clients' cached locations, arriving when the master
 * can no longer schedule replies (it is shutting down): the caller is told the removal took effect.
 */
class HeldReplyShutdownTest {
    private static final long MiB = 1L << 20;

    @Test
    void aHeldRemovalThatCannotBeScheduledSaysItTookEffect() {
        ManualTicker ticker = new ManualTicker();
        MasterService master = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER, ticker, null);
        master.mountSegment("s1", "node-s1", "127.0.0.1:1", 64 * MiB);
        assertThat(master.putStart("c1", "k", 100, PutOptions.DEFAULT).code()).isEqualTo(ErrorCode.OK);
        assertThat(master.putEnd("c1", "k")).isEqualTo(ErrorCode.OK);
        assertThat(master.getReplicaList("k", 2_000, 7).isOk()).as("cached by client 7").isTrue();

        ClientReports reports = new ClientReports(ticker, 60_000);
        MasterRpcService rpc = new MasterRpcService(master, new MasterMetrics(master, reports), reports);
        ExecutorService workers = Executors.newFixedThreadPool(2);
        ScheduledExecutorService heldReplies = Executors.newSingleThreadScheduledExecutor();
        heldReplies.shutdown(); // the master is stopping: nothing more can be scheduled
        EventLoopGroup clientGroup = EventLoops.newGroup("held-test-client", 1, true);
        TransportServer server = new TransportServer("master", TransportSettings.defaults());
        try {
            rpc.registerOn(server, workers, heldReplies);
            server.start("127.0.0.1", 0);
            try (TransportClient client = TransportClient.connect("127.0.0.1", server.localAddress().getPort(),
                    TransportSettings.defaults(), "held-test", clientGroup)) {
                TiffinException e = catchThrowableOfType(TiffinException.class, () -> client.callSync(Opcode.REMOVE,
                        KeyRequest.newBuilder().setClientId("c2").setKey("k").setForce(true).setCacheOwner(9).build(),
                        Empty.parser()));
                assertThat(e).as("the removal's reply could not be held").isNotNull();
                assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
                assertThat(e.getMessage()).contains("REMOVE took effect, but the master is shutting down")
                        .contains("nothing needs redoing");
            }
            assertThat(master.existKey("k").value()).as("the removal did take effect").isFalse();
        } finally {
            server.close();
            workers.shutdownNow();
            clientGroup.shutdownGracefully();
        }
    }
}
