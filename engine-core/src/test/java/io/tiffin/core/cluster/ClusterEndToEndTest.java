package io.tiffin.core.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.ObjectLocation;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.client.TiffinClient;
import io.tiffin.core.node.NodeOptions;
import io.tiffin.core.node.NodeServer;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A master and nodes as separate servers on loopback, driven through the client API. */
class ClusterEndToEndTest {
    private static final long MiB = 1L << 20;

    static byte[] bytes(long seed, int size) {
        byte[] b = new byte[size];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    @Test
    void putAndGetAcrossNodesIncludingMultiSliceObjects() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 128 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            for (int size : new int[] {1, 4096, 1 << 20, 40 * (1 << 20) + 17}) {
                byte[] v = bytes(size, size);
                c.put("obj-" + size, v, PutOptions.replicas(2));
                assertThat(c.get("obj-" + size)).as("size %d", size).isEqualTo(v);
            }
            ObjectLocation loc = c.locate("obj-4096").orElseThrow();
            assertThat(loc.replicas()).hasSize(2);
            assertThat(loc.replicas().get(0).nodeId()).isNotEqualTo(loc.replicas().get(1).nodeId());
        }
    }

    /** A regex lookup whose answer would not fit one frame says so (it was a "malformed answer" RPC_FAIL). */
    @Test
    void aRegexLookupWithMoreMatchesThanOneAnswerCarriesAsksToNarrowThePattern() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            String pad = "x".repeat(4000);
            for (int batch = 0; batch < 5; batch++) {
                java.util.Map<String, byte[]> values = new java.util.LinkedHashMap<>();
                for (int i = 0; i < 1000; i++) {
                    values.put("wide/" + batch + "/" + i + "/" + pad, new byte[] {1});
                }
                assertThat(c.batchPut(values, PutOptions.DEFAULT)).allMatch(r -> r.isOk());
            }
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.locateByRegex("^wide/"))
                    .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.INVALID_PARAMS);
                        assertThat(e.getMessage()).contains("5000 keys match").contains("narrow the pattern");
                    });
            assertThat(c.locateByRegex("^wide/3/")).hasSize(1000);
        }
    }

    /** A call on an interrupted thread fails saying so, not as a network failure, and keeps the flag. */
    @Test
    void aGetOnAnInterruptedThreadSaysItWasInterrupted() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            c.put("k", new byte[] {7});
            Thread.currentThread().interrupt();
            try {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.get("k"))
                        .isInstanceOf(io.tiffin.api.TiffinException.class).hasMessageContaining("interrupted")
                        .hasMessageNotContaining("check that the server is running")
                        .hasMessageNotContaining("check the address");
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
            assertThat(c.get("k")).containsExactly(7);
        }
    }

    /** Keys that UTF-8 cannot carry are refused, so two of them never name one object. */
    @Test
    void keysThatAreNotValidUnicodeAreRefusedAndNeverShareAnObject() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            c.put("s?", new byte[] {1});
            for (Runnable call : List.<Runnable>of(() -> c.put("s\uD800", new byte[] {2}), () -> c.get("s\uDBFF"),
                    () -> c.remove("s\uD800", true), () -> c.batchGet(List.of("ok", "s\uDBFF")))) {
                org.assertj.core.api.Assertions.assertThatThrownBy(call::run)
                        .isInstanceOfSatisfying(io.tiffin.api.TiffinException.class,
                                e -> assertThat(e.code()).isEqualTo(io.tiffin.api.ErrorCode.INVALID_KEY));
            }
            assertThat(c.get("s?")).containsExactly(1);
        }
    }

    @Test
    void objectSurvivesTheDeathOfOneReplicaNodeAndTheDeadNodeIsDroppedAfterTheTtl() {
        try (TestCluster cluster = new TestCluster(Map.of("master.node-ttl", "2s",
                "master.node-check-interval", "100ms"), 2, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            byte[] v = bytes(1, 3 * (1 << 20));
            c.put("survivor", v, PutOptions.replicas(2));
            NodeServer victim = cluster.nodes.get(0);
            victim.crash();

            // Readable at once: the client falls back to the replica on the live node.
            assertThat(c.get("survivor")).isEqualTo(v);

            // After the TTL the master drops the dead node's segment and its replicas.
            ObjectLocation loc = await("the dead node's replica dropped").atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> c.locate("survivor").orElseThrow(), l -> l.replicas().size() == 1);
            assertThat(loc.replicas()).singleElement()
                    .satisfies(r -> assertThat(r.nodeId()).isEqualTo(cluster.nodes.get(1).nodeId()));
            assertThat(cluster.master.service().segmentViews()).extracting(s -> s.name())
                    .containsExactly(cluster.nodes.get(1).segmentName());
            assertThat(c.get("survivor")).isEqualTo(v);
            assertThat(c.stats().liveNodes()).isEqualTo(1);
        }
    }

    @Test
    void singleReplicaObjectOnADeadNodeIsGoneAfterTheTtl() {
        try (TestCluster cluster = new TestCluster(Map.of("master.node-ttl", "1s",
                "master.node-check-interval", "100ms"), 2, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            NodeServer victim = cluster.nodes.get(0);
            c.put("lonely", bytes(2, 1000), PutOptions.DEFAULT.withPreferredSegment(victim.segmentName()));
            victim.crash();
            await("the dead node's object dropped").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> c.locate("lonely").isEmpty());
            assertThatThrownBy(() -> c.get("lonely")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
        }
    }

    @Test
    void readThatOutlivesItsLeaseFailsWithLeaseExpired() {
        try (TestCluster cluster = new TestCluster(Map.of("master.lease-ttl", "1ms"), 1, 256 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            byte[] v = bytes(3, 128 * (1 << 20));
            c.put("big", v);
            assertThatThrownBy(() -> c.get("big")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.LEASE_EXPIRED));
        }
    }

    @Test
    void aNodesDataPlaneHasOneEventLoopPerProcessorUnlessConfigured() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 8 * MiB)) {
            assertThat(cluster.nodes.getFirst().ioThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
            NodeServer three = NodeServer.start(NodeOptions.builder(cluster.masterAddress())
                    .nodeId("three-loops").segmentSize(8 * MiB)
                .pingInterval(Duration.ofMillis(200)).transport(io.tiffin.core.transport.TransportSettings.defaults().withIoThreads(3)).build());
            cluster.nodes.add(three);
            assertThat(three.ioThreads()).isEqualTo(3);
        }
        NodeOptions configured = io.tiffin.core.Tiffin.injector(io.tiffin.core.config.TiffinConfig.builder()
                .set("node.io-threads", "5").set("transport.io-threads", "2").build())
                .getInstance(NodeOptions.class);
        assertThat(configured.transport().ioThreads()).as("node.io-threads, not transport.io-threads").isEqualTo(5);
    }

    @Test
    void theMasterHasOneEventLoopPerProcessorUnlessConfigured() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 8 * MiB)) {
            assertThat(cluster.master.ioThreads()).isEqualTo(Runtime.getRuntime().availableProcessors());
        }
        try (TestCluster cluster = new TestCluster(Map.of("transport.io-threads", "3"), 1, 8 * MiB)) {
            assertThat(cluster.master.ioThreads()).isEqualTo(3);
        }
    }

    @Test
    void nodeRemountsWhenARestartedMasterDoesNotKnowIt() {
        TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
        try (cluster) {
            TiffinClient c = cluster.remoteClient();
            c.put("before", bytes(4, 100));
            // The master forgets the node (as after a restart or a TTL expiry while the node was paused).
            cluster.master.service().forgetNode(cluster.nodes.get(0).nodeId());
            await("the node re-mounted").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> cluster.nodes.get(0).remounts() > 0);
            assertThat(cluster.master.service().segmentViews()).hasSize(1);
            c.put("after", bytes(5, 100));
            assertThat(c.get("after")).isEqualTo(bytes(5, 100));
            assertThatThrownBy(() -> c.get("before")).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND));
        }
    }

    @Test
    void zeroCopyFormsAndBatchesWork() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 64 * MiB); Arena arena = Arena.ofConfined()) {
            TiffinClient c = cluster.remoteClient();
            MemorySegment src = arena.allocate(5000);
            for (int i = 0; i < 5000; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            c.putFrom("zc", src, PutOptions.DEFAULT);
            MemorySegment dst = arena.allocate(8000);
            assertThat(c.getInto("zc", dst)).isEqualTo(5000);
            assertThat(dst.asSlice(0, 5000).mismatch(src)).isEqualTo(-1);
            assertThatThrownBy(() -> c.getInto("zc", arena.allocate(10))).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.BUFFER_OVERFLOW));

            Map<String, byte[]> batch = new LinkedHashMap<>();
            for (int i = 0; i < 20; i++) {
                batch.put("b" + i, bytes(100 + i, 1000 + i));
            }
            assertThat(c.batchPut(batch, PutOptions.replicas(2))).allMatch(KeyResult::isOk);
            List<String> keys = new ArrayList<>(batch.keySet());
            keys.add("missing");
            List<KeyResult<byte[]>> got = c.batchGet(keys);
            for (int i = 0; i < 20; i++) {
                assertThat(got.get(i).value()).isEqualTo(batch.get("b" + i));
            }
            assertThat(got.get(20).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(c.batchExists(List.of("b1", "nope"))).extracting(KeyResult::value).containsExactly(true, false);
            assertThat(c.removeByRegex("^b1", true)).isEqualTo(11);
            assertThat(c.batchRemove(List.of("b2", "b1"), true)).extracting(KeyResult::code)
                    .containsExactly(ErrorCode.OK, ErrorCode.OBJECT_NOT_FOUND);
            assertThat(c.removeAll(true)).isEqualTo(9);
        }
    }

    @Test
    void zeroCopyFormsWorkWithSharedAndConfinedSegments() {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 64 * MiB);
             Arena shared = Arena.ofShared(); Arena confined = Arena.ofConfined()) {
            TiffinClient c = cluster.remoteClient();
            for (Arena arena : List.of(shared, confined)) {
                int size = 20 * (1 << 20) + 5; // two transfer slices
                MemorySegment src = arena.allocate(size);
                src.copyFrom(MemorySegment.ofArray(bytes(size, size)));
                String key = arena == shared ? "shared" : "confined";
                c.putFrom(key, src, PutOptions.replicas(2));
                MemorySegment dst = arena.allocate(size);
                assertThat(c.getInto(key, dst)).isEqualTo(size);
                assertThat(dst.mismatch(src)).isEqualTo(-1);
                MemorySegment dst2 = arena.allocate(size);
                assertThat(c.batchGetInto(List.of(key), List.of(dst2)).get(0).value()).isEqualTo(size);
                assertThat(dst2.mismatch(src)).isEqualTo(-1);
            }
        }
    }

    @Test
    void badRequestsGetClearErrorsAndTheClusterKeepsServing() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            assertThatThrownBy(() -> c.put("", new byte[10])).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY));
            assertThatThrownBy(() -> c.put("k".repeat(5000), new byte[10])).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_KEY));
            c.put("empty", new byte[0]); // stored (EmptyValueTest), not refused
            assertThat(c.get("empty")).isEmpty();
            assertThatThrownBy(() -> c.put("huge", new byte[100 * (1 << 20)])).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.NO_AVAILABLE_HANDLE));
            assertThatThrownBy(() -> c.removeByRegex("(", false)).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));

            // Random bytes on every port: the servers drop those connections and keep serving.
            SplittableRandom rnd = new SplittableRandom(42);
            int[] ports = {cluster.master.address().getPort(), cluster.master.adminAddress().getPort(),
                    Integer.parseInt(cluster.nodes.get(0).endpoint().split(":")[1])};
            for (int port : ports) {
                for (int round = 0; round < 3; round++) {
                    try (Socket s = new Socket("127.0.0.1", port); OutputStream out = s.getOutputStream()) {
                        byte[] garbage = new byte[1 + rnd.nextInt(4096)];
                        rnd.nextBytes(garbage);
                        out.write(garbage);
                        out.flush();
                    }
                }
            }
            c.put("still-works", bytes(9, 12345));
            assertThat(c.get("still-works")).isEqualTo(bytes(9, 12345));
        }
    }

    @Test
    void theDataPlaneRejectsRangesOutsideTheSegmentAndUnknownSegments() {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB);
             io.tiffin.core.transport.TransportClientPool pool = new io.tiffin.core.transport.TransportClientPool(
                     "test", io.tiffin.core.transport.TransportSettings.defaults(), "probe")) {
            NodeServer node = cluster.nodes.get(0);
            var client = pool.get(node.endpoint());
            var outside = io.tiffin.core.transport.proto.DataRequest.newBuilder().setSegment(node.segmentName())
                    .setOffset(64 * MiB - 10).setLength(100).build();
            assertThatThrownBy(() -> client.callSync(io.tiffin.core.transport.Opcode.DATA_READ, outside,
                    io.tiffin.core.transport.proto.Empty.parser()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT))
                    .hasMessageContaining("carries no access grant");
            var unknown = io.tiffin.core.transport.proto.DataRequest.newBuilder().setSegment("nope").setOffset(0)
                    .setLength(10).build();
            assertThatThrownBy(() -> client.callSync(io.tiffin.core.transport.Opcode.DATA_READ, unknown,
                    io.tiffin.core.transport.proto.Empty.parser()))
                    .isInstanceOfSatisfying(TiffinException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND));
            // A write whose bulk length differs from the declared length is refused.
            var shortWrite = io.tiffin.core.transport.proto.DataRequest.newBuilder().setSegment(node.segmentName())
                    .setOffset(0).setLength(100).build();
            assertThatThrownBy(() -> client.call(io.tiffin.core.transport.Opcode.DATA_WRITE, shortWrite,
                    io.netty.buffer.Unpooled.wrappedBuffer(new byte[10])).join())
                    .hasCauseInstanceOf(TiffinException.class).hasMessageContaining("carried 10");
            // The node still serves.
            TiffinClient c = cluster.remoteClient();
            c.put("after-bad-requests", bytes(8, 1000));
            assertThat(c.get("after-bad-requests")).isEqualTo(bytes(8, 1000));
        }
    }

    @Test
    void adminEndpointServesHealthAndMetrics() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 1, 64 * MiB)) {
            TiffinClient c = cluster.remoteClient();
            c.put("m", bytes(1, 1000));
            c.get("m");
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + cluster.master.adminAddress().getPort();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(base + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"ok\"").contains("\"live_nodes\":1")
                    .contains("\"leadership\":\"leader\",\"serving\":true");
            String metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("tiffin_master_requests_total{op=\"put_start\"} 1.0")
                    .contains("tiffin_master_request_duration_seconds_bucket")
                    .contains("tiffin_master_keys 1.0")
                    .contains("tiffin_master_live_nodes 1.0")
                    .contains("tiffin_master_capacity_bytes 6.7108864E7")
                    .contains("tiffin_master_received_bytes_total")
                    .contains("tiffin_master_evicted_keys_total");
        }
    }

    /** The endpoints of Mooncake's master that engines call (SGLang's start-up check polls /get_all_segments). */
    @Test
    void adminEndpointAnswersMooncakesSegmentQueries() throws Exception {
        try (TestCluster cluster = new TestCluster(Map.of(), 2, 64 * MiB)) {
            cluster.remoteClient().put("m", bytes(1, 1000));
            HttpClient http = HttpClient.newHttpClient();
            String base = "http://127.0.0.1:" + cluster.master.adminAddress().getPort();
            HttpResponse<String> all = http.send(HttpRequest.newBuilder(URI.create(base + "/get_all_segments")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(all.statusCode()).isEqualTo(200);
            assertThat(all.body().split("\n")).containsExactlyInAnyOrder(cluster.nodes.get(0).segmentName(),
                    cluster.nodes.get(1).segmentName());
            String name = cluster.nodes.get(0).segmentName();
            HttpResponse<String> one = http.send(HttpRequest.newBuilder(URI.create(base + "/query_segment?segment="
                    + java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(one.statusCode()).isEqualTo(200);
            assertThat(one.body()).startsWith(name + "\nUsed(bytes): ").endsWith("\nCapacity(bytes) : " + 64 * MiB
                    + "\n");
            HttpResponse<String> missing = http.send(HttpRequest.newBuilder(URI.create(base
                    + "/query_segment?segment=nope")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode()).isEqualTo(404);
            assertThat(missing.body()).contains("segment nope is not mounted");
        }
    }
}
