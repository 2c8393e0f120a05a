package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.core.client.TiffinClient;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * 0-byte values through real servers: put, get, getInto, batches and the location cache, over the socket, by
 * shared memory and through a location-caching client, next to non-empty ones.
 */
class EmptyValueTest {
    private static final long MiB = 1L << 20;

    @Test
    void anEmptyValueIsStoredAndReadBackEmptyByEveryReadPath() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 16 * MiB);
             TiffinClient shm = cluster.sharedMemoryClient();
             TiffinClient cached = cluster.locationCachingClient(java.time.Duration.ofSeconds(5))) {
            TiffinClient c = cluster.remoteClient();
            c.put("e/one", new byte[0], PutOptions.replicas(2));
            shm.put("e/shm", new byte[0], PutOptions.DEFAULT);
            assertThat(c.exists("e/one")).isTrue();
            assertThat(c.locate("e/one").orElseThrow().size()).isZero();
            assertThat(c.locate("e/one").orElseThrow().replicas()).hasSize(2)
                    .allSatisfy(r -> assertThat(r.size()).isZero());
            for (TiffinClient reader : List.of(c, shm, cached, cached)) {
                for (String k : List.of("e/one", "e/shm")) {
                    assertThat(reader.get(k)).as(k).isEmpty();
                    try (Arena arena = Arena.ofConfined()) {
                        assertThat(reader.getInto(k, arena.allocate(3))).as(k).isZero();
                    }
                }
            }
            Map<String, byte[]> batch = new LinkedHashMap<>();
            batch.put("e/b0", new byte[0]);
            batch.put("e/b1", new byte[] {1, 2, 3});
            batch.put("e/b2", new byte[0]);
            assertThat(c.batchPut(batch, PutOptions.DEFAULT)).allMatch(KeyResult::isOk);
            List<KeyResult<byte[]>> got = c.batchGet(List.of("e/b0", "e/b1", "e/b2", "e/one"));
            assertThat(got).allMatch(KeyResult::isOk);
            assertThat(got.get(0).value()).isEmpty();
            assertThat(got.get(1).value()).containsExactly(1, 2, 3);
            assertThat(got.get(2).value()).isEmpty();
            assertThat(got.get(3).value()).isEmpty();
            try (Arena arena = Arena.ofConfined()) {
                List<MemorySegment> dsts = List.of(arena.allocate(1), arena.allocate(8), arena.allocate(0));
                List<KeyResult<Long>> into = shm.batchGetInto(List.of("e/b0", "e/b1", "e/b2"), dsts);
                assertThat(into).extracting(KeyResult::value).containsExactly(0L, 3L, 0L);
            }
            // removed and put again, many times: each takes one allocation unit, which removal gives back
            long used = c.stats().used();
            for (int i = 0; i < 1000; i++) {
                c.put("e/loop", new byte[0], PutOptions.DEFAULT);
                c.remove("e/loop"); // never read: no lease
            }
            assertThat(c.stats().used()).isEqualTo(used);
        }
    }
}
