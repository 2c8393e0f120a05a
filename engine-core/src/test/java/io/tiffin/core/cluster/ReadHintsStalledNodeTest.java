package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Read hints and a stalled node (its only event loop blocked, as in a long GC pause or a stopped process):
 * a hinted get fails at the end of its read lease with LEASE_EXPIRED, as the usual read does, instead of
 * reading again with a lease that is over (a new connection would wait for the stalled node's HELLO, and
 * the get would fail later with another code or fall back to other replicas whose bytes can no longer be
 * trusted).
 *
 * <p>The node here is a stand-in TransportServer with one I/O thread, mounted at the master directly
 * (mount epoch 7, so the put's replica becomes a read hint).
 */
class ReadHintsStalledNodeTest {
    private static final long LEASE_MS = 300;
    private static final long STALL_MS = 3000;

    private static TiffinClient client(TestCluster cluster, long readHints) {
        TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                .transport(TransportSettings.defaults().withHandshakeTimeout(Duration.ofSeconds(1)))
                .readHints(readHints).build());
        cluster.clients.add(c);
        return c;
    }

    @Test
    void aHintedGetOfAStalledNodeFailsAtTheLeaseEndWithLeaseExpiredLikeAnUnhintedOne() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", LEASE_MS + "ms", "master.node-ttl", "60s"),
                0, 0);
             StallableNode node = new StallableNode()) {
            cluster.master.service().mountSegment("stallable-seg", "stallable-node", node.endpoint(), 1 << 20, 42, 7);
            byte[] v = TestCluster.randomBytes(100_000, 1);

            // A first connection with the usual handshake timeout: on a cold, loaded JVM the master's first
            // HELLO can take longer than the 1 s the clients below allow (a bound meant for the stalled node).
            cluster.remoteClient();

            // Control: without hints, the read gives up at the lease's end with LEASE_EXPIRED.
            TiffinClient plain = client(cluster, 0);
            plain.put("c", v);
            node.stallNextReadMillis.set(STALL_MS);
            long t0 = System.nanoTime();
            TiffinException control = catchThrowableOfType(TiffinException.class, () -> plain.get("c"));
            long controlMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(control).isNotNull();
            assertThat(control.code()).as("unhinted get, stalled node: %s", control.getMessage())
                    .isEqualTo(ErrorCode.LEASE_EXPIRED);
            assertThat(controlMs).as("unhinted get gave up at the lease's end").isLessThan(1000);
            node.awaitNotStalling();

            // The same with a read hint (the put's replica).
            TiffinClient reader = client(cluster, 1000);
            reader.put("k", v);
            node.stallNextReadMillis.set(STALL_MS);
            t0 = System.nanoTime();
            TiffinException e = catchThrowableOfType(TiffinException.class, () -> reader.get("k"));
            long hintedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(reader.readHintStats().orElseThrow().confirmed()).as("the hinted read was confirmed")
                    .isEqualTo(1);
            assertThat(e).isNotNull();
            assertThat(e.code()).as("hinted get, stalled node, after %d ms: %s", hintedMs, e.getMessage())
                    .isEqualTo(ErrorCode.LEASE_EXPIRED);
            assertThat(hintedMs).as("hinted get should give up at the lease's end (%d ms) too", LEASE_MS)
                    .isLessThan(1000);
            node.awaitNotStalling();
        }
    }
}
