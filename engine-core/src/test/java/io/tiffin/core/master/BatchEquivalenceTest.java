package io.tiffin.core.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.PutOptions;
import io.tiffin.core.util.ManualTicker;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.RepeatedTest;

/**
 * Every batch call gives, key by key and in request order, exactly what the single-key call gives,
 * including leases: two masters driven identically, one through batches and one through single calls,
 * stay identical.
 */
class BatchEquivalenceTest {

    private static MasterService newMaster(ManualTicker ticker) {
        MasterService m = new MasterService(MasterSettings.defaults(), MasterServiceTest.IN_ORDER, ticker, null);
        m.mountSegment("s1", "n1", "h:1", 256L << 20);
        m.mountSegment("s2", "n2", "h:2", 256L << 20);
        return m;
    }

    /** Puts some keys complete, leaves some in progress, leases some, and leaves some missing. */
    private static void prepare(MasterService m, ManualTicker t, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < 60; i++) {
            String key = "k" + i;
            int state = rnd.nextInt(4);
            if (state == 0) {
                continue; // missing
            }
            m.putStart("writer", key, 1 + rnd.nextInt(100_000), PutOptions.replicas(1 + rnd.nextInt(2)));
            if (state >= 2) {
                m.putEnd("writer", key);
            }
            if (state == 3) {
                m.getReplicaList(key); // leased
            }
        }
        t.advanceMillis(1);
    }

    private static List<String> randomKeys(SplittableRandom rnd) {
        List<String> keys = new ArrayList<>();
        int n = 1 + rnd.nextInt(40);
        for (int i = 0; i < n; i++) {
            keys.add(rnd.nextInt(20) == 0 ? "" : "k" + rnd.nextInt(70));
        }
        return keys;
    }

    @RepeatedTest(10)
    void batchesMatchSingleKeyCalls() {
        long seed = System.nanoTime();
        ManualTicker ta = new ManualTicker();
        ManualTicker tb = new ManualTicker();
        MasterService batch = newMaster(ta);
        MasterService single = newMaster(tb);
        prepare(batch, ta, seed);
        prepare(single, tb, seed);
        SplittableRandom rnd = new SplittableRandom(seed ^ 0x5DEECE66DL);
        for (int round = 0; round < 30; round++) {
            List<String> keys = randomKeys(rnd);
            String client = rnd.nextBoolean() ? "writer" : "other";
            switch (rnd.nextInt(6)) {
                case 0 -> {
                    var b = batch.batchGetReplicaList(keys);
                    for (int i = 0; i < keys.size(); i++) {
                        var s = single.getReplicaList(keys.get(i));
                        assertThat(b.get(i).code()).as("seed %d get %s", seed, keys.get(i)).isEqualTo(s.code());
                        if (s.isOk()) {
                            assertThat(b.get(i).value().size()).isEqualTo(s.value().size());
                            assertThat(b.get(i).value().replicas()).hasSameSizeAs(s.value().replicas());
                        }
                    }
                }
                case 1 -> {
                    var b = batch.batchExistKey(keys);
                    for (int i = 0; i < keys.size(); i++) {
                        assertThat(b.get(i)).as("seed %d exist %s", seed, keys.get(i))
                                .isEqualTo(single.existKey(keys.get(i)));
                    }
                }
                case 2 -> {
                    List<Long> sizes = keys.stream().map(k -> 1L + rnd.nextInt(50_000)).toList();
                    var b = batch.batchPutStart(client, keys, sizes, PutOptions.DEFAULT);
                    for (int i = 0; i < keys.size(); i++) {
                        // Batches allocate in shard order, so offsets and replica ids may differ; the
                        // outcome, the segments and the sizes may not.
                        var s = single.putStart(client, keys.get(i), sizes.get(i), PutOptions.DEFAULT);
                        assertThat(b.get(i).code()).as("seed %d putStart %s", seed, keys.get(i)).isEqualTo(s.code());
                        if (s.isOk()) {
                            assertThat(b.get(i).value()).extracting(d -> d.segment() + "/" + d.size())
                                    .isEqualTo(s.value().stream().map(d -> d.segment() + "/" + d.size()).toList());
                        }
                    }
                }
                case 3 -> {
                    List<ErrorCode> b = batch.batchPutEnd(client, keys);
                    for (int i = 0; i < keys.size(); i++) {
                        assertThat(b.get(i)).as("seed %d putEnd %s", seed, keys.get(i))
                                .isEqualTo(single.putEnd(client, keys.get(i)));
                    }
                }
                case 4 -> {
                    List<ErrorCode> b = batch.batchPutRevoke(client, keys);
                    for (int i = 0; i < keys.size(); i++) {
                        assertThat(b.get(i)).as("seed %d revoke %s", seed, keys.get(i))
                                .isEqualTo(single.putRevoke(client, keys.get(i)));
                    }
                }
                default -> {
                    boolean force = rnd.nextBoolean();
                    List<ErrorCode> b = batch.batchRemove(keys, force);
                    for (int i = 0; i < keys.size(); i++) {
                        assertThat(b.get(i)).as("seed %d remove %s", seed, keys.get(i))
                                .isEqualTo(single.remove(keys.get(i), force));
                    }
                }
            }
            long step = rnd.nextInt(4000);
            ta.advanceMillis(step);
            tb.advanceMillis(step);
        }
        assertThat(batch.keyCount()).isEqualTo(single.keyCount());
        assertThat(batch.usedBytes()).isEqualTo(single.usedBytes());
    }
}
