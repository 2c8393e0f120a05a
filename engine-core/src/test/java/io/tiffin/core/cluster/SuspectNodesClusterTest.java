package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.transport.TransportSettings;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node that stalls (its only event loop blocked, as in a long GC pause or a stopped process) holding the first
 * replica of many keys: the first read that meets it pays the lease and fails ({@code LEASE_EXPIRED}, as designed:
 * after the lease no replica's bytes can be trusted), and the client remembers the node, so its next reads of other
 * keys go to their replicas on other nodes first and succeed at once. Before, each of them waited for the lease and
 * failed too, until the master dropped the node.
 */
class SuspectNodesClusterTest {
    private static final long LEASE_MS = 300;
    private static final long STALL_MS = 3000;

    @Test
    void afterOneReadMetAStalledNodeReadsOfOtherKeysGoToTheirOtherReplicasFirst() {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", LEASE_MS + "ms", "master.node-ttl", "60s"),
                1, 16L << 20);
             StallableNode node = new StallableNode()) {
            cluster.master.service().mountSegment("stallable-seg", "stallable-node", node.endpoint(), 1 << 20, 42, 7);
            cluster.remoteClient(); // a first connection with the usual handshake timeout (a cold JVM's first HELLO)
            TiffinClient c = TiffinClient.connect(TestCluster.remoteOptions(cluster.masterAddress())
                    .transport(TransportSettings.defaults().withHandshakeTimeout(Duration.ofSeconds(1)))
                    .readHints(0).build());
            cluster.clients.add(c);
            PutOptions firstOnTheStallable = PutOptions.DEFAULT.withReplicas(2).withPreferredSegment("stallable-seg");
            for (String k : new String[] {"a", "b", "c"}) {
                c.put(k, TestCluster.randomBytes(50_000, k.hashCode()), firstOnTheStallable);
            }

            node.stallNextReadMillis.set(STALL_MS);
            TiffinException first = catchThrowableOfType(TiffinException.class, () -> c.get("a"));
            assertThat(first).as("the read that meets the stalled node first").isNotNull();
            assertThat(first.code()).as(first.getMessage()).isEqualTo(ErrorCode.LEASE_EXPIRED);

            long t0 = System.nanoTime();
            assertThat(c.get("b")).isEqualTo(TestCluster.randomBytes(50_000, "b".hashCode()));
            assertThat(c.get("c")).isEqualTo(TestCluster.randomBytes(50_000, "c".hashCode()));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("read from the other replicas at once")
                    .isLessThan(STALL_MS / 2);
            node.awaitNotStalling();
        }
    }
}
