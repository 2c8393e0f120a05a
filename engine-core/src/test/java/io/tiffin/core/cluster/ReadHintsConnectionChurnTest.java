package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Read hints and pooled connections: the answer of a speculative read the lookup did not confirm (the key
 * was replaced, or is gone) is read and thrown away, so the connection stays in the pool and the next
 * read of that node needs no new connection; a key that is not found loses its hint.
 */
class ReadHintsConnectionChurnTest {
    private static final long MiB = 1L << 20;

    @Test
    void aRefutedHintKeepsThePooledConnectionToItsNode() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            reader.put("k", TestCluster.randomBytes(100_000, 1));
            long opened = reader.connectionsOpened();
            for (int i = 0; i < 10; i++) {
                byte[] v = TestCluster.randomBytes(100_000, 100 + i);
                writer.remove("k", true);
                writer.put("k", v); // another replica: the reader's hint is stale
                assertThat(reader.get("k")).isEqualTo(v);
            }
            assertThat(reader.readHintStats().orElseThrow().refuted()).as("scenario: every hint was stale")
                    .isEqualTo(10);
            assertThat(reader.connectionsOpened() - opened).as("connections the reader opened for 10 sequential gets")
                    .isZero();
        }
    }

    @Test
    void aKeyThatIsNotFoundForgetsItsHintAndKeepsThePooledConnection() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 16 * MiB)) {
            TiffinClient reader = cluster.remoteClient();
            TiffinClient writer = cluster.remoteClient();
            byte[] live = TestCluster.randomBytes(100_000, 2);
            reader.put("gone", TestCluster.randomBytes(100_000, 3));
            reader.put("live", live);
            writer.remove("gone", true); // as an eviction or another client's remove would
            long opened = reader.connectionsOpened();
            for (int i = 0; i < 10; i++) {
                TiffinException e = catchThrowableOfType(TiffinException.class, () -> reader.get("gone"));
                assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                assertThat(reader.get("live")).isEqualTo(live);
            }
            assertThat(reader.readHintStats().orElseThrow().size()).as("hints kept: 'live' only, not the missing key")
                    .isEqualTo(1);
            assertThat(reader.connectionsOpened() - opened).as("connections the reader opened for 20 sequential gets")
                    .isZero();
        }
    }
}
