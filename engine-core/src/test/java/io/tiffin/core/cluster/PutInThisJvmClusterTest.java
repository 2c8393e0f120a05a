package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link TiffinClient#tryPutInThisJvm}: a put made of direct calls to a master of this JVM and memory copies into
 * segments of this JVM, for callers that must not wait — null (nothing stored) whenever it would have to, and a
 * future for the master's answer when that answer is held for other clients' caches.
 */
class PutInThisJvmClusterTest {
    private static final long MiB = 1L << 20;
    private static final PutOptions UPSERT = PutOptions.replicas(1).withUpsert(true).withReplaceLeased(true);

    private static MemorySegment segmentOf(byte[] b) {
        return MemorySegment.ofArray(b);
    }

    @Test
    void aPutWithTheMasterAndTheSegmentHereIsStoredOnReturn() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient here = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(here);
            TiffinClient reader = cluster.remoteClient();
            byte[] first = TestCluster.randomBytes(4096, 1);
            CompletableFuture<Void> put = here.tryPutInThisJvm("p", segmentOf(first), UPSERT);
            assertThat(put).isNotNull();
            assertThat(put).as("no other cache held the key: answered at once").isDone();
            put.get();
            assertThat(reader.get("p")).isEqualTo(first);
            assertThat(here.get("p")).isEqualTo(first);

            byte[] second = TestCluster.randomBytes(30_000, 2);
            here.tryPutInThisJvm("p", segmentOf(second), UPSERT).get(10, TimeUnit.SECONDS);
            assertThat(reader.get("p")).isEqualTo(second);
            assertThat(here.get("p")).as("its own location cache dropped the old location").isEqualTo(second);

            // Mooncake's rule, as putFrom: a plain put of an existing key is a successful no-op
            here.tryPutInThisJvm("p", segmentOf(first), PutOptions.replicas(1)).get(10, TimeUnit.SECONDS);
            assertThat(reader.get("p")).isEqualTo(second);

            assertThatThrownBy(() -> here.tryPutInThisJvm(null, segmentOf(first), UPSERT))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY));
        }
    }

    @Test
    void whatWouldWaitIsLeftToThePutThatWaits() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient here = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(here);
            TiffinClient remote = cluster.remoteClient();
            byte[] value = TestCluster.randomBytes(4096, 3);

            assertThat(remote.tryPutInThisJvm("r", segmentOf(value), UPSERT))
                    .as("a client that does not call a master of its JVM directly").isNull();
            assertThat(remote.exists("r")).as("nothing stored").isFalse();

            byte[] huge = new byte[(int) (96 * MiB)];
            assertThat(here.tryPutInThisJvm("huge", segmentOf(huge), UPSERT))
                    .as("no segment can take it: the waiting put reports why").isNull();
            assertThat(remote.exists("huge")).isFalse();
            assertThatThrownBy(() -> here.putFrom("huge", segmentOf(huge), UPSERT))
                    .isInstanceOf(TiffinException.class);
        }
    }

    @Test
    void anAnswerHeldForAnotherClientsCacheComesLaterWithoutTheCallerWaiting() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient here = TiffinClient.connect(TiffinClient.Options.builder(cluster.masterAddress()).build());
            cluster.clients.add(here);
            TiffinClient caching = cluster.locationCachingClient(Duration.ofSeconds(4));
            byte[] old = TestCluster.randomBytes(4096, 4);
            byte[] fresh = TestCluster.randomBytes(4096, 5);
            here.put("h", old, UPSERT);
            assertThat(caching.get("h")).isEqualTo(old); // its cache now holds the old value's location

            CompletableFuture<Void> put = here.tryPutInThisJvm("h", segmentOf(fresh), UPSERT);
            assertThat(put).isNotNull();
            assertThat(put).as("the answer waits for the other client's cache; the caller did not").isNotDone();
            put.get(30, TimeUnit.SECONDS);
            assertThat(caching.get("h")).as("once answered, no client reads the old bytes").isEqualTo(fresh);
            assertThat(here.get("h")).isEqualTo(fresh);
        }
    }
}
