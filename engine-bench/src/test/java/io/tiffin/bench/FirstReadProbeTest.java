package io.tiffin.bench;

import io.tiffin.api.PutOptions;
import io.tiffin.core.Tiffin;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.master.MasterServer;
import io.tiffin.core.node.NodeServer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FirstReadProbeTest {
    @Test
    void probe() throws Exception {
        TiffinConfig config = TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("master.eviction-high-watermark", "1.0").build();
        try (MasterServer master = MasterServer.start(Tiffin.injector(config).getInstance(MasterServer.Options.class))) {
            String address = "127.0.0.1:" + master.address().getPort();
            try (NodeServer a = NodeServer.start(NodeServer.Options.builder(address).nodeId("a").segmentSize(1L << 30).pingInterval(Duration.ofSeconds(1)).build());
                 NodeServer b = NodeServer.start(NodeServer.Options.builder(address).nodeId("b").segmentSize(64L << 20).pingInterval(Duration.ofSeconds(1)).build());
                 TiffinClient writer = TiffinClient.connect(BenchClientOptions.hotCacheWriter(address))) {
                List<String> names = new ArrayList<>();
                int value = 10_000_000;
                for (int i = 0; i < 25; i++) {
                    byte[] bytes = new byte[value];
                    new SplittableRandom(i).nextBytes(bytes);
                    writer.put("k" + i, bytes, PutOptions.DEFAULT.withPreferredSegment(a.segmentName()));
                    names.add("k" + i);
                }
                for (int pass = 0; pass < 10; pass++) {
                    try (TiffinClient r = TiffinClient.connect(BenchClientOptions.hotCacheReader(address, null, Duration.ofSeconds(2)));
                         Arena arena = Arena.ofShared()) {
                        MemorySegment buf = arena.allocate(value, 4096);
                        StringBuilder first = new StringBuilder();
                        StringBuilder second = new StringBuilder();
                        double s1 = 0;
                        double s2 = 0;
                        for (int round = 0; round < 2; round++) {
                            for (String k : names) {
                                if (round == 0) { long q = System.nanoTime(); r.locate(k); long q2 = System.nanoTime(); r.locate(k); long q3 = System.nanoTime(); Thread.sleep(2); long q4 = System.nanoTime(); r.locate(k); second.append(String.format(" L%.0f/%.0f/%.0f", (q2 - q) / 1e3, (q3 - q2) / 1e3, (System.nanoTime() - q4) / 1e3)); }
                                long t = System.nanoTime();
                                r.getInto(k, buf);
                                double us = (System.nanoTime() - t) / 1e3;
                                (round == 0 ? first : second).append(String.format(" %.0f", us / 100));
                                if (round == 0) s1 += us; else s2 += us;
                            }
                        }
                        System.out.printf("pass %d first %.0f second %.0f us/key%n  1st:%s%n  2nd:%s%n", pass, s1 / 25, s2 / 25, first, second);
                    }
                }
            }
        }
    }
}
