package io.tiffin.core.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.tiffin.api.PutOptions;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.LocationCache;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A gateway reads a key while another client's replacement of it, by a smaller value, waits for the gateway's cached
 * location: once a listing of the key (as STRLEN makes) has named the replacement's size, a GET sized by it does not
 * fit the object the cached location still reads. The second try reads at the size of the object it reads; it failed
 * with BUFFER_OVERFLOW ("kept growing") for as long as the location stayed cached, and an MGET with it.
 */
class GatewayReadDuringReplacementTest {
    private static byte[] value(int size, char fill) {
        byte[] v = new byte[size];
        Arrays.fill(v, (byte) fill);
        return v;
    }

    private static byte[] read(GatewayStore store, String key) {
        ByteBuf b = store.get(key, Unpooled::buffer);
        try {
            return b == null ? null : ByteBufUtil.getBytes(b);
        } finally {
            if (b != null) {
                b.release();
            }
        }
    }

    @Test
    void aGetDuringAReplacementBySmallerValueReadsWholeBytes() throws Exception {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "64MiB").build();
        try (Tiffin tiffin = Tiffin.embedded(config)) {
            String master = "127.0.0.1:" + tiffin.master().address().getPort();
            byte[] old = value(11_657, 'A');
            byte[] replacement = value(3_649, 'B');
            tiffin.client().put("k", old);
            try (TiffinClient readerClient = TiffinClient.connect(TiffinClient.Options.builder(master)
                    .localMemcpy(false).locationCache(new LocationCache.Settings(Duration.ofSeconds(2), 1000)).build());
                 TiffinGatewayStore store = TiffinGatewayStore.over(readerClient, 1, master)) {
                assertThat(read(store, "k")).isEqualTo(old); // its location cached
                CompletableFuture<Void> set = CompletableFuture.runAsync(() -> tiffin.client().put("k", replacement,
                        PutOptions.DEFAULT.withUpsert(true).withReplaceLeased(true)));
                await("the listing names the replacement").atMost(Duration.ofSeconds(5))
                        .pollInterval(Duration.ofMillis(5)).until(() -> store.size("k").orElse(-1) == replacement.length);
                assertThat(set).as("the replacement waits for the cached location").isNotDone();
                assertThat(read(store, "k")).as("the object before or after, whole").isIn(old, replacement);
                set.get(10, TimeUnit.SECONDS);
                assertThat(read(store, "k")).isEqualTo(replacement);
            }
        }
    }
}
