package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.KeyListing;
import io.tiffin.core.client.TiffinClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The master's request limits as a client meets them: listings cut at {@code transport.max-query-answer-size},
 * regex lookups and batches over their limits refused naming the key, hard pins over
 * {@code master.max-hard-pinned-share} refused.
 */
class RequestLimitsClusterTest {
    @Test
    void listingsStopAtTheAnswerLimitAndLargerQueriesAreRefused() {
        try (TestCluster cluster = new TestCluster(Map.of("transport.max-query-answer-size", "1KiB"), 1, 16L << 20)) {
            TiffinClient client = cluster.remoteClient();
            for (int i = 0; i < 40; i++) {
                client.put(String.format("listed-%03d-", i) + "x".repeat(40), new byte[] {1}, PutOptions.DEFAULT);
            }
            KeyListing listing = client.listKeys("listed-", 1000);
            assertThat(listing.truncated()).isTrue();
            assertThat(listing.keys()).hasSizeBetween(10, 25);
            assertThat(listing.keys().getFirst().key()).startsWith("listed-000-");
            assertThatThrownBy(() -> client.locateByRegex("^listed-"))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("transport.max-query-answer-size");
        }
    }

    @Test
    void batchesOverTheKeyLimitAreRefusedNamingIt() {
        try (TestCluster cluster = new TestCluster(Map.of("transport.max-batch-keys", "10"), 1, 16L << 20)) {
            TiffinClient client = cluster.remoteClient();
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < 11; i++) {
                keys.add("batch-" + i);
            }
            List<KeyResult<Boolean>> exists = client.batchExists(keys.subList(0, 10));
            assertThat(exists).allMatch(KeyResult::isOk);
            assertThatThrownBy(() -> client.batchExists(keys))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("BATCH_EXIST_KEY request of 11 keys exceeds transport.max-batch-keys = 10");
        }
    }

    @Test
    void hardPinsBeyondTheirShareOfTheCapacityAreRefused() {
        try (TestCluster cluster = new TestCluster(Map.of("master.max-hard-pinned-share", "0.1"), 1, 64L << 20)) {
            TiffinClient client = cluster.remoteClient();
            PutOptions pinned = PutOptions.DEFAULT.withHardPin(true);
            client.put("pinned-1", new byte[4 << 20], pinned);
            assertThatThrownBy(() -> client.put("pinned-2", new byte[4 << 20], pinned))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS))
                    .hasMessageContaining("master.max-hard-pinned-share = 0.1");
            client.put("unpinned", new byte[4 << 20], PutOptions.DEFAULT);
            client.remove("pinned-1", true);
            client.put("pinned-2", new byte[4 << 20], pinned);
        }
    }
}
