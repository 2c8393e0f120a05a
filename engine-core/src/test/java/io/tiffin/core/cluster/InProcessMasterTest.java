package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.local.InProcessMaster;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.proto.ExistReply;
import io.tiffin.core.transport.proto.KeyRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A client whose master runs in its JVM calls it directly ({@link InProcessMasters}) when same-JVM
 * shortcuts are on, with the same answers and failures as over the network.
 */
class InProcessMasterTest {

    @Test
    void theInProcessMasterAnswersLikeTheNetworkOne() {
        String address;
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            address = cluster.masterAddress();
            int port = cluster.master.address().getPort();
            InProcessMaster rpc = InProcessMasters.find(address);
            assertThat(rpc).isNotNull();
            assertThat(InProcessMasters.find("localhost:" + port)).isSameAs(rpc);
            assertThat(InProcessMasters.find("127.0.0.1:" + (port == 65535 ? 1 : port + 1))).isNull();

            TiffinClient direct = TiffinClient.connect(TestCluster.remoteOptions(address).localMemcpy(true)
                    .sharedMemory(true).build());
            TiffinClient remote = cluster.remoteClient();
            try {
                byte[] a = "written through the in-process master".getBytes(StandardCharsets.UTF_8);
                byte[] b = "written over the network".getBytes(StandardCharsets.UTF_8);
                direct.put("a", a, PutOptions.DEFAULT);
                remote.put("b", b, PutOptions.DEFAULT);
                assertThat(remote.get("a")).isEqualTo(a);
                assertThat(direct.get("b")).isEqualTo(b);
                assertThat(direct.batchExists(List.of("a", "missing", "b"))).extracting(KeyResult::value)
                        .containsExactly(true, false, true);

                TiffinException viaCall = catchThrowableOfType(TiffinException.class, () -> direct.get("missing"));
                TiffinException viaNetwork = catchThrowableOfType(TiffinException.class, () -> remote.get("missing"));
                assertThat(viaCall.code()).isEqualTo(viaNetwork.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                assertThat(viaCall.getMessage()).isEqualTo(viaNetwork.getMessage());
                direct.remove("b", true);
                assertThat(remote.exists("b")).isFalse();

                // the service itself: a reply object, a failure, an opcode the master does not serve
                ExistReply exists = (ExistReply) rpc.call(Opcode.EXIST_KEY, KeyRequest.newBuilder().setKey("a").build());
                assertThat(exists.getExists()).isTrue();
                assertThat(catchThrowableOfType(TiffinException.class, () -> rpc.call(Opcode.GET_REPLICA_LIST,
                        KeyRequest.newBuilder().setKey("missing").build())).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                assertThat(catchThrowableOfType(TiffinException.class, () -> rpc.call(Opcode.DATA_READ,
                        KeyRequest.getDefaultInstance())).code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
            } finally {
                direct.close();
            }
        }
        assertThat(InProcessMasters.find(address)).as("unregistered when the master closes").isNull();
    }

    @Test
    void anInProcessForcedRemoveWaitsForCachedEntriesLikeTheNetworkOne() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            java.time.Duration ttl = java.time.Duration.ofMillis(500);
            TiffinClient reader = cluster.locationCachingClient(ttl);
            InProcessMaster rpc = InProcessMasters.find(cluster.masterAddress());
            reader.put("k", new byte[1000]);
            long t = System.nanoTime();
            assertThat(reader.get("k")).hasSize(1000);
            rpc.call(Opcode.REMOVE, KeyRequest.newBuilder().setKey("k").setForce(true).build());
            assertThat(System.nanoTime() - t).as("the caller's thread waited for the reader's entry")
                    .isGreaterThanOrEqualTo(ttl.toNanos());
            assertThat(catchThrowableOfType(TiffinException.class, () -> reader.get("k")).code())
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        }
    }

    @Test
    void anInProcessCallerInterruptedWhileItsRemovalIsHeldIsToldTheRemovalTookEffect() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            TiffinClient reader = cluster.locationCachingClient(java.time.Duration.ofSeconds(5));
            InProcessMaster rpc = InProcessMasters.find(cluster.masterAddress());
            reader.put("k", new byte[1000]);
            assertThat(reader.get("k")).hasSize(1000);
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread remover = new Thread(() -> {
                try {
                    rpc.call(Opcode.REMOVE, KeyRequest.newBuilder().setKey("k").setForce(true).build());
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            remover.start();
            // held: the key is gone for lookups and the caller's thread waits for the reader's entry
            TiffinClient looker = cluster.remoteClient();
            await("the removal held for the reader's entry").atMost(java.time.Duration.ofSeconds(5))
                    .pollInterval(java.time.Duration.ofMillis(5))
                    .until(() -> !looker.exists("k") && remover.getState() == Thread.State.TIMED_WAITING);
            remover.interrupt();
            remover.join(5_000);
            assertThat(thrown.get()).isInstanceOf(TiffinException.class);
            assertThat(((TiffinException) thrown.get()).code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
            assertThat(thrown.get().getMessage()).contains("REMOVE took effect").contains("nothing needs redoing");
            assertThat(cluster.remoteClient().exists("k")).as("the key is gone for lookups").isFalse();
        }
    }

    /**
     * A forced removal held over the network for another client's cached location, when the master closes
     * before the hold ends: the remover is told the removal took effect, not just that the connection went.
     */
    @Test
    void aHeldRemovalStillWaitingWhenTheMasterClosesIsToldItTookEffect() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64L << 20)) {
            TiffinClient reader = cluster.locationCachingClient(java.time.Duration.ofSeconds(5));
            TiffinClient remover = cluster.remoteClient();
            reader.put("k", new byte[1000]);
            assertThat(reader.get("k")).hasSize(1000);
            java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
            Thread removal = new Thread(() -> {
                try {
                    remover.remove("k", true);
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            removal.start();
            // The key goes for lookups at once; only the answer is held (for about 6 s).
            TiffinClient looker = cluster.remoteClient();
            await("the master to take the removal").atMost(java.time.Duration.ofSeconds(5))
                    .pollInterval(java.time.Duration.ofMillis(10)).until(() -> !looker.exists("k"));
            assertThat(removal.isAlive()).as("the removal is held").isTrue();
            cluster.master.close();
            removal.join(10_000);
            assertThat(removal.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(TiffinException.class)
                    .hasMessageContaining("REMOVE took effect, but the master closed before");
            assertThat(((TiffinException) thrown.get()).code()).isEqualTo(ErrorCode.INTERNAL_ERROR);
            remover.close();
        }
    }
}
