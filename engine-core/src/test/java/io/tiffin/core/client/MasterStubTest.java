package io.tiffin.core.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.KeyResult;
import io.tiffin.api.PutOptions;
import io.tiffin.api.TiffinException;
import io.tiffin.core.Tiffin;
import io.tiffin.core.config.TiffinConfig;
import io.tiffin.core.local.InProcessMaster;
import io.tiffin.core.local.InProcessMasters;
import io.tiffin.core.transport.BlockingConnectionPool;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.OffloadTask;
import io.tiffin.core.transport.proto.TaskPollReply;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link MasterStub} against a real master (over loopback TCP, and as the in-process master of this JVM):
 * the master's answers arrive as plain records and engine-api types, its refusals as {@link
 * TiffinException}s carrying its codes (per key in batches); and the failures the stub itself names.
 */
class MasterStubTest {
    private static Tiffin tiffin;
    private static String address;
    private final BlockingConnectionPool connections = new BlockingConnectionPool("stub-test",
            TransportSettings.defaults().withHandshakeTimeout(Duration.ofSeconds(2)), "stub-test");
    private final ClientLifecycle lifecycle = new ClientLifecycle();

    @BeforeAll
    static void startCluster() {
        tiffin = Tiffin.embedded(TiffinConfig.builder().set("master.port", "0").set("master.admin-port", "0")
                .set("node.segment-size", "16MiB").build());
        address = "127.0.0.1:" + tiffin.master().address().getPort();
    }

    @AfterAll
    static void stopCluster() {
        tiffin.close();
    }

    @AfterEach
    void closePool() {
        connections.close();
    }

    private static TiffinException refusal(Runnable call) {
        try {
            call.run();
        } catch (TiffinException e) {
            return e;
        }
        throw new AssertionError("expected a TiffinException");
    }

    @ParameterizedTest(name = "in process: {0}")
    @ValueSource(booleans = {false, true})
    void answersArePlainRecordsAndRefusalsCarryTheMastersCodes(boolean inProcess) {
        MasterStub stub = new MasterStub(address, inProcess, connections, lifecycle);
        String p = "stub-" + inProcess + "/";
        tiffin.client().put(p + "a", new byte[5]);
        tiffin.client().put(p + "b", new byte[10]);

        assertThat(stub.version()).isEqualTo(TiffinVersion.VERSION);
        assertThat(stub.lookUp(p + "a", 0, 0).size()).isEqualTo(5);
        assertThat(refusal(() -> stub.lookUp(p + "missing", 0, 0)).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        List<KeyResult<io.tiffin.api.ObjectLocation>> located = stub.batchLookUp(List.of(p + "b", p + "missing"), 0, 0);
        assertThat(located.get(0).value().size()).isEqualTo(10);
        assertThat(located.get(1).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(located).extracting(KeyResult::key).containsExactly(p + "b", p + "missing");
        assertThat(stub.locateByRegex("^" + p)).containsOnlyKeys(p + "a", p + "b");

        assertThat(stub.exists(p + "a")).isTrue();
        assertThat(stub.batchExists(List.of(p + "a", p + "missing"))).extracting(KeyResult::value)
                .containsExactly(true, false);

        assertThat(refusal(() -> stub.putStart("stub-client", p + "a", 5, PutOptions.DEFAULT)).code())
                .isEqualTo(ErrorCode.OBJECT_ALREADY_EXISTS);
        assertThat(stub.batchPutStart("stub-client", List.of(p + "a", ""), new long[] {5, 5}, PutOptions.DEFAULT,
                new long[] {1, 2}))
                .extracting(KeyResult::code).containsExactly(ErrorCode.OBJECT_ALREADY_EXISTS, ErrorCode.INVALID_KEY);
        assertThat(refusal(() -> stub.putEnd("stub-client", p + "never-started", 0, 0)).code())
                .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(stub.batchPutEnd("stub-client", List.of(p + "never-started"), List.of(), 0))
                .containsExactly(ErrorCode.OBJECT_NOT_FOUND);

        KeyListing first = stub.listKeys(p, 1);
        assertThat(first.keys()).containsExactly(new KeyListing.KeySize(p + "a", 5));
        assertThat(first.truncated()).isTrue();
        KeyListing all = stub.listKeys(p, 10);
        assertThat(all.keys()).extracting(KeyListing.KeySize::key).containsExactly(p + "a", p + "b");
        assertThat(all.truncated()).isFalse();

        ClusterStats stats = stub.stats();
        assertThat(stats.version()).isEqualTo(TiffinVersion.VERSION);
        assertThat(stats.liveNodes()).isEqualTo(1);
        assertThat(stats.keys()).isGreaterThanOrEqualTo(2);
        assertThat(stats.segments()).singleElement().satisfies(s -> {
            assertThat(s.name()).isEqualTo(tiffin.node().segmentName());
            assertThat(s.capacity()).isEqualTo(16L << 20);
            assertThat(s.used()).isPositive();
        });

        assertThat(refusal(() -> stub.remove(p + "a", false, 0)).code())
                .as("leased by the lookups above").isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
        assertThat(stub.batchRemove(List.of(p + "missing"), false, 0)).containsExactly(ErrorCode.OBJECT_NOT_FOUND);
        assertThat(stub.removeByRegex("^" + p, true, 0)).isEqualTo(2);
        assertThat(stub.listKeys(p, 10).keys()).isEmpty();
    }

    @Test
    void aClosedClientCallsNothing() {
        MasterStub stub = new MasterStub(address, false, connections, lifecycle);
        lifecycle.markClosed();
        assertThat(refusal(stub::version).code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS);
        assertThat(connections.connectionsOpened()).isZero();
    }

    @Test
    void anUnreachableMasterIsAnRpcFailure() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        MasterStub stub = new MasterStub("127.0.0.1:" + port, true, connections, lifecycle);
        assertThat(refusal(stub::version).code()).isEqualTo(ErrorCode.RPC_FAIL);
    }

    @Test
    void anInProcessMastersRefusalPassesThroughAndAnUndecodableReplyIsADeserializeFailure() {
        String fake = "stub-test.invalid:1";
        // Field 1 holds a nested message whose bytes are not UTF-8: not a ServiceReadyReply's version string.
        InProcessMaster garbled = (op, request) -> TaskPollReply.newBuilder()
                .addOffloads(OffloadTask.newBuilder().setSize(200)).build();
        InProcessMaster refusing = (op, request) -> {
            throw new TiffinException(ErrorCode.OBJECT_NOT_FOUND, "no such key");
        };
        InProcessMaster silent = (op, request) -> null;
        MasterStub stub = new MasterStub(fake, true, connections, lifecycle);
        try {
            InProcessMasters.register(List.of(fake), garbled);
            assertThat(refusal(stub::version)).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.DESERIALIZE_FAIL);
                assertThat(e.getMessage()).contains("SERVICE_READY");
            });
            InProcessMasters.register(List.of(fake), refusing);
            assertThat(refusal(() -> stub.lookUp("k", 0, 0))).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
                assertThat(e.getMessage()).isEqualTo("no such key");
            });
            InProcessMasters.register(List.of(fake), silent);
            assertThat(stub.version()).as("no reply: an empty control part, as over the wire").isEmpty();
            assertThat(connections.connectionsOpened()).as("all in process").isZero();
        } finally {
            InProcessMasters.unregister(List.of(fake), garbled);
            InProcessMasters.unregister(List.of(fake), refusing);
            InProcessMasters.unregister(List.of(fake), silent);
        }
    }

    /**
     * A remove whose answer was lost may have begun the removal at the dead leader (its successor can get the
     * object back, with fewer replicas, from a node that had not dropped it yet): a retry refused for a lease is
     * repeated until it goes through, and a retry that finds the key gone counts as done. A first refusal, or one
     * after a recovering master's refusal (the remove did not run), is the caller's answer.
     */
    @ParameterizedTest(name = "answers: {0}")
    @ValueSource(strings = {"RPC_FAIL OBJECT_HAS_LEASE OBJECT_HAS_LEASE OK", "RPC_FAIL OBJECT_NOT_FOUND",
            "OBJECT_HAS_LEASE", "UNAVAILABLE_IN_CURRENT_STATUS OBJECT_HAS_LEASE",
            "UNAVAILABLE_IN_CURRENT_STATUS OBJECT_NOT_FOUND"})
    void aRemoveWhoseAnswerWasLostIsCarriedThroughALeaseAndCountsAGoneKeyAsDone(String script) {
        List<String> answers = List.of(script.split(" "));
        List<String> fakes = List.of("stub-test-remove-a.invalid:1", "stub-test-remove-b.invalid:1");
        java.util.concurrent.atomic.AtomicInteger removes = new java.util.concurrent.atomic.AtomicInteger();
        InProcessMaster scripted = (op, request) -> {
            if (op == io.tiffin.core.transport.Opcode.SERVICE_READY) {
                return io.tiffin.core.transport.proto.ServiceReadyReply.newBuilder().setLeader(true).setTerm(1).build();
            }
            String answer = answers.get(Math.min(removes.getAndIncrement(), answers.size() - 1));
            if (!answer.equals("OK")) {
                throw new TiffinException(ErrorCode.valueOf(answer), "scripted " + answer);
            }
            return null;
        };
        MasterStub stub = new MasterStub(String.join(",", fakes), true, connections, lifecycle, Duration.ofSeconds(5));
        InProcessMasters.register(fakes, scripted);
        try {
            String last = answers.getLast();
            boolean lost = answers.getFirst().equals("RPC_FAIL");
            if (last.equals("OK") || (lost && last.equals("OBJECT_NOT_FOUND"))) {
                stub.remove("k", false, 0);
            } else {
                assertThat(refusal(() -> stub.remove("k", false, 0)).code()).isEqualTo(ErrorCode.valueOf(last));
            }
            assertThat(removes.get()).as("attempts").isEqualTo(answers.size());
        } finally {
            InProcessMasters.unregister(fakes, scripted);
        }
    }

    /** A lease held past the failover time ends such a remove refused, saying that replicas may be gone. */
    @Test
    void aRemoveWhoseAnswerWasLostAndWhoseObjectStaysLeasedEndsRefusedSayingSo() {
        List<String> fakes = List.of("stub-test-leased-a.invalid:1", "stub-test-leased-b.invalid:1");
        java.util.concurrent.atomic.AtomicInteger removes = new java.util.concurrent.atomic.AtomicInteger();
        InProcessMaster leased = (op, request) -> {
            if (op == io.tiffin.core.transport.Opcode.SERVICE_READY) {
                return io.tiffin.core.transport.proto.ServiceReadyReply.newBuilder().setLeader(true).setTerm(1).build();
            }
            throw removes.getAndIncrement() == 0 ? new TiffinException(ErrorCode.RPC_FAIL, "answer lost")
                    : new TiffinException(ErrorCode.OBJECT_HAS_LEASE, "leased");
        };
        MasterStub stub = new MasterStub(String.join(",", fakes), true, connections, lifecycle,
                Duration.ofMillis(600));
        InProcessMasters.register(fakes, leased);
        try {
            TiffinException e = refusal(() -> stub.remove("k", false, 0));
            assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_HAS_LEASE);
            assertThat(e.getMessage()).contains("an earlier attempt of this remove, whose answer was lost, may have"
                    + " removed some of its replicas");
            assertThat(removes.get()).as("repeated while the lease held").isGreaterThan(2);
        } finally {
            InProcessMasters.unregister(fakes, leased);
        }
    }

    @Test
    void aBatchReplyThatDoesNotAnswerEveryKeyOrNamesNoSuchSegmentIsADeserializeFailure() {
        String fake = "stub-test-batch.invalid:1";
        InProcessMaster shortOrDangling = (op, request) -> switch (op) {
            case BATCH_PUT_START -> io.tiffin.core.transport.proto.BatchPutStartReply.newBuilder()
                    .addResults(io.tiffin.core.transport.proto.PutStartResult.getDefaultInstance()).build();
            default -> io.tiffin.core.transport.proto.BatchLocationsReply.newBuilder()
                    .addResults(io.tiffin.core.transport.proto.LocationResult.newBuilder().setLocation(
                            io.tiffin.core.transport.proto.ObjectLocationMsg.newBuilder().addReplicas(
                                    io.tiffin.core.transport.proto.Replica.newBuilder().setSegmentRef(1)))).build();
        };
        MasterStub stub = new MasterStub(fake, true, connections, lifecycle);
        try {
            InProcessMasters.register(List.of(fake), shortOrDangling);
            assertThat(refusal(() -> stub.batchPutStart("c", List.of("a", "b"), new long[] {1, 1}, PutOptions.DEFAULT,
                    new long[] {1, 2}))).satisfies(e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.DESERIALIZE_FAIL);
                        assertThat(e.getMessage()).contains("1 grants for a batch put of 2 keys");
                    });
            assertThat(refusal(() -> stub.batchLookUp(List.of("a"), 0, 0))).satisfies(e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.DESERIALIZE_FAIL);
                assertThat(e.getMessage()).contains("refers to segment 1 of the 0");
            });
        } finally {
            InProcessMasters.unregister(List.of(fake), shortOrDangling);
        }
    }

    @Test
    void cacheCountersTravelToTheMastersTotals() {
        MasterStub stub = new MasterStub(address, false, connections, lifecycle);
        CacheCounters mine = new CacheCounters(4, 1, 2, 0, 0, 0, 0, 0, 1024, 4096, true, 7, 3, 1);
        stub.reportCaches("stub-reporter", mine);
        ClusterStats.CacheTotals totals = stub.stats().caches();
        assertThat(totals.hotCacheClients()).isGreaterThanOrEqualTo(1);
        assertThat(totals.locationCacheClients()).isGreaterThanOrEqualTo(1);
        assertThat(totals.totals().hits()).isGreaterThanOrEqualTo(4);
        assertThat(totals.totals().locationHits()).isGreaterThanOrEqualTo(7);
        assertThat(totals.totals().capacityBytes()).isGreaterThanOrEqualTo(4096);
    }

    /**
     * A remove that the master ran before the reused connection it came on closed unanswered is sent again by the pool
     * on a fresh connection; finding the key gone, it counts as done (that first attempt removed it), as after a lost
     * leader. Before, the caller got OBJECT_NOT_FOUND for a removal that had happened. A real master behind a proxy
     * that drops the remove's answer and closes the connection.
     */
    @Test
    void aRemoveRunBeforeItsConnectionClosedCountsAsDoneWhenItsRepeatFindsTheKeyGone() throws Exception {
        try (AnswerDroppingProxy proxy = new AnswerDroppingProxy(tiffin.master().address().getPort())) {
            MasterStub stub = new MasterStub(proxy.address(), false, connections, lifecycle);
            tiffin.client().put("stub-lost/a", new byte[5]);
            assertThat(stub.lookUp("stub-lost/a", 0, 0).size()).isEqualTo(5); // the connection is reused from now on
            proxy.dropNextAnswer();

            stub.remove("stub-lost/a", true, 0);

            assertThat(proxy.dropped()).as("the first attempt's answer").isEqualTo(1);
            assertThat(refusal(() -> stub.lookUp("stub-lost/a", 0, 0)).code()).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
            assertThat(refusal(() -> stub.remove("stub-lost/a", true, 0)).code()).as("a remove of a missing key")
                    .isEqualTo(ErrorCode.OBJECT_NOT_FOUND);

            tiffin.client().put("stub-lost/b", new byte[5]);
            proxy.dropNextAnswer();
            assertThat(stub.batchRemove(List.of("stub-lost/b", "stub-lost/never"), true, 0))
                    .as("a batch sent again: the key it found gone was removed by the first attempt")
                    .containsExactly(ErrorCode.OK, ErrorCode.OK);
            assertThat(proxy.dropped()).isEqualTo(2);
            assertThat(stub.batchRemove(List.of("stub-lost/never"), true, 0))
                    .containsExactly(ErrorCode.OBJECT_NOT_FOUND);
        }
    }

    /**
     * A TCP proxy to a local port that, once asked, drops the next bytes the server sends and closes that connection
     * on both sides (a server that ran a request and went away before answering). Thread-safe.
     */
    private static final class AnswerDroppingProxy implements AutoCloseable {
        private final ServerSocket listener = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        private final int target;
        private final java.util.concurrent.atomic.AtomicBoolean drop = new java.util.concurrent.atomic.AtomicBoolean();
        private final java.util.concurrent.atomic.AtomicInteger dropped =
                new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.concurrent.ExecutorService pumps = java.util.concurrent.Executors.newCachedThreadPool();

        AnswerDroppingProxy(int targetPort) throws IOException {
            this.target = targetPort;
            pumps.execute(this::accept);
        }

        String address() {
            return "127.0.0.1:" + listener.getLocalPort();
        }

        void dropNextAnswer() {
            drop.set(true);
        }

        int dropped() {
            return dropped.get();
        }

        private void accept() {
            while (!listener.isClosed()) {
                try {
                    java.net.Socket client = listener.accept();
                    java.net.Socket server = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), target);
                    pumps.execute(() -> pump(client, server, false));
                    pumps.execute(() -> pump(server, client, true));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void pump(java.net.Socket from, java.net.Socket to, boolean answers) {
            byte[] buf = new byte[64 * 1024];
            try (from; to) {
                int n;
                while ((n = from.getInputStream().read(buf)) > 0) {
                    if (answers && drop.compareAndSet(true, false)) {
                        dropped.incrementAndGet();
                        return; // closes both sockets unanswered
                    }
                    to.getOutputStream().write(buf, 0, n);
                }
            } catch (IOException e) {
                // the other side closed
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            pumps.shutdownNow();
        }
    }
}
