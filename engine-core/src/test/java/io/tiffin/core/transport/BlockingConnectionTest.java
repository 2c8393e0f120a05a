package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import io.tiffin.core.util.ManualTicker;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The blocking client side of the transport against a real {@link TransportServer}. */
class BlockingConnectionTest {
    private static final int STORE_SIZE = 4 << 20;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private final Arena arena = Arena.ofShared();
    /** What DATA_READ serves and DATA_WRITE fills, like a node's segment. */
    private MemorySegment store;

    @BeforeAll
    static void setUpAll() {
        NettyLeaks.install();
    }

    @AfterAll
    static void tearDownAll() throws InterruptedException {
        NettyLeaks.assertNoLeaks();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        arena.close();
    }

    private static TransportSettings settings() {
        return TransportSettings.defaults().withIoThreads(1).withHandshakeTimeout(Duration.ofSeconds(5));
    }

    private TransportServer server(TransportSettings settings) {
        store = arena.allocate(STORE_SIZE, 64);
        SplittableRandom r = new SplittableRandom(7);
        for (long off = 0; off < STORE_SIZE; off += 8) {
            store.set(ValueLayout.JAVA_LONG_UNALIGNED, off, r.nextLong());
        }
        TransportServer server = new TransportServer("blocking-test", settings);
        resources.add(server);
        server.register(Opcode.DATA_READ, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            if (req.getSegment().equals("missing")) {
                throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "no segment " + req.getSegment());
            }
            MemorySegment src = store.asSlice(req.getOffset(), req.getLength());
            responder.ok(Empty.getDefaultInstance(), Unpooled.wrappedBuffer(src.asByteBuffer()));
        }, null);
        server.register(Opcode.DATA_WRITE, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            request.bulk().getBytes(request.bulk().readerIndex(),
                    store.asSlice(req.getOffset(), req.getLength()).asByteBuffer());
            responder.ok(Empty.getDefaultInstance());
        }, null);
        server.register(Opcode.PING, (request, responder) -> {
            String id = request.parseControl(PingRequest.parser()).getNodeId();
            if (id.equals("silent")) {
                return; // never answers: the client must time out
            }
            responder.ok(PingReply.newBuilder().setViewVersion(id.length()).build());
        }, null);
        return server.start("127.0.0.1", 0);
    }

    private BlockingConnectionPool pool(TransportSettings settings) {
        BlockingConnectionPool pool = new BlockingConnectionPool("test", settings, "test-peer");
        resources.add(pool);
        return pool;
    }

    private static String address(TransportServer server) {
        return "127.0.0.1:" + server.localAddress().getPort();
    }

    private static DataRequest range(String segment, long offset, long length) {
        return DataRequest.newBuilder().setSegment(segment).setOffset(offset).setLength(length).build();
    }

    private static PingRequest ping(String id) {
        return PingRequest.newBuilder().setNodeId(id).build();
    }

    @Test
    void controlCallsReuseOneConnectionPerThread() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        for (int i = 0; i < 5; i++) {
            PingReply reply = pool.call(address(server), Opcode.PING, ping("x".repeat(i)), PingReply.parser());
            assertThat(reply.getViewVersion()).isEqualTo(i);
        }
        assertThat(pool.idleCount(address(server))).isEqualTo(1);
    }

    @Test
    void readsBulkStraightIntoNativeAndHeapDestinations() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        MemorySegment nativeDst = arena.allocate(1 << 20);
        pool.call(address(server), Opcode.DATA_READ, range("s", 4096, 1 << 20), null, Empty.parser(), nativeDst);
        assertThat(nativeDst.mismatch(store.asSlice(4096, 1 << 20))).isEqualTo(-1);
        // heap memory goes through the connection's staging buffer, in several pieces
        MemorySegment heapDst = MemorySegment.ofArray(new byte[700_000]);
        pool.call(address(server), Opcode.DATA_READ, range("s", 3, 700_000), null, Empty.parser(), heapDst);
        assertThat(heapDst.mismatch(store.asSlice(3, 700_000))).isEqualTo(-1);
    }

    @Test
    void writesBulkFromNativeAndHeapSources() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        byte[] heap = new byte[600_000];
        new SplittableRandom(3).nextBytes(heap);
        pool.call(address(server), Opcode.DATA_WRITE, range("s", 100, heap.length), MemorySegment.ofArray(heap),
                Empty.parser(), null);
        assertThat(store.asSlice(100, heap.length).mismatch(MemorySegment.ofArray(heap))).isEqualTo(-1);
        MemorySegment src = arena.allocate(300_000);
        src.fill((byte) 0x5A);
        pool.call(address(server), Opcode.DATA_WRITE, range("s", 1 << 20, 300_000), src, Empty.parser(), null);
        assertThat(store.asSlice(1 << 20, 300_000).mismatch(src)).isEqualTo(-1);
    }

    @Test
    void failureStatusKeepsTheConnectionUsable() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        MemorySegment dst = arena.allocate(1024);
        assertThatThrownBy(() -> pool.call(address(server), Opcode.DATA_READ, range("missing", 0, 1024), null,
                Empty.parser(), dst))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND);
                    assertThat(e.getMessage()).contains("no segment missing");
                });
        assertThat(pool.idleCount(address(server))).isEqualTo(1);
        pool.call(address(server), Opcode.DATA_READ, range("s", 0, 1024), null, Empty.parser(), dst);
        assertThat(dst.mismatch(store.asSlice(0, 1024))).isEqualTo(-1);
    }

    @Test
    void answerLargerThanTheDestinationFailsAndClosesTheConnection() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        MemorySegment small = arena.allocate(100);
        assertThatThrownBy(() -> pool.call(address(server), Opcode.DATA_READ, range("s", 0, 4096), null,
                Empty.parser(), small))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.TRANSFER_FAIL));
        assertThat(pool.idleCount(address(server))).isZero();
        assertThat(pool.call(address(server), Opcode.PING, ping("ab"), PingReply.parser()).getViewVersion()).isEqualTo(2);
    }

    @Test
    void aCallWithoutAnswerTimesOut() {
        TransportSettings fast = settings().withRpcTimeout(Duration.ofMillis(200));
        TransportServer server = server(fast);
        BlockingConnectionPool pool = pool(fast);
        long start = System.nanoTime();
        assertThatThrownBy(() -> pool.call(address(server), Opcode.PING, ping("silent"), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.RPC_TIMEOUT);
                    assertThat(e.getMessage()).contains("PING").contains("within");
                });
        assertThat(System.nanoTime() - start).isBetween(TimeUnit.MILLISECONDS.toNanos(190), TimeUnit.SECONDS.toNanos(5));
        assertThat(pool.idleCount(address(server))).isZero();
        assertThat(pool.call(address(server), Opcode.PING, ping("a"), PingReply.parser()).getViewVersion()).isEqualTo(1);
    }

    /** Deadlines are on the pool's ticker: a call without answer waits until the ticker passes its timeout. */
    @Test
    void aCallTimesOutWhenThePoolsTickerPassesItsDeadline() throws Exception {
        TransportSettings settings = settings().withRpcTimeout(Duration.ofSeconds(1));
        CountDownLatch asked = new CountDownLatch(1);
        TransportServer server = new TransportServer("blocking-ticker", settings);
        resources.add(server);
        server.register(Opcode.PING, (request, responder) -> asked.countDown(), null); // never answers
        server.start("127.0.0.1", 0);
        ManualTicker ticker = new ManualTicker();
        BlockingConnectionPool pool = new BlockingConnectionPool("ticker", settings, "test-peer", ticker);
        resources.add(pool);

        CompletableFuture<PingReply> call = CompletableFuture.supplyAsync(
                () -> pool.call(address(server), Opcode.PING, ping("a"), PingReply.parser()));
        assertThat(asked.await(10, TimeUnit.SECONDS)).as("the request reached the server").isTrue();
        // Awaitility's during(): the call must stay open for this long, dozens of watchdog ticks.
        await("the call waiting while the ticker stands").during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5))
                .until(() -> !call.isDone());

        ticker.advance(Duration.ofSeconds(1).plusMillis(1));
        assertThat(call).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_TIMEOUT));
        assertThat(pool.idleCount(address(server))).isZero();
    }

    @Test
    void theTimeoutOfAPipelinedExchangeBoundsEachAnswerNotTheWholeBatch() {
        TransportSettings fast = settings().withRpcTimeout(Duration.ofMillis(400));
        ExecutorService oneAtATime = Executors.newSingleThreadExecutor();
        resources.add(oneAtATime::shutdownNow);
        TransportServer server = new TransportServer("blocking-slow", fast);
        resources.add(server);
        server.register(Opcode.PING, (request, responder) -> {
            // A slow server, on purpose: answers 150 ms apart (on a worker thread, never on the event loop).
            Thread.sleep(150);
            responder.ok(PingReply.newBuilder().setViewVersion(7).build());
        }, oneAtATime);
        server.start("127.0.0.1", 0);
        BlockingConnectionPool pool = pool(fast);
        long start = System.nanoTime();
        TiffinException[][] out = pool.exchange(Opcode.PING, List.of(new BlockingConnectionPool.Batch(
                address(server), List.of(ping("a"), ping("b"), ping("c"), ping("d")), null, null)));
        assertThat(System.nanoTime() - start).as("four answers 150 ms apart").isGreaterThan(
                TimeUnit.MILLISECONDS.toNanos(550));
        assertThat(out[0]).containsOnlyNulls();
    }

    /** A {@link RawAnswerServer} answering the request after the handshake with {@code reply(requestId)}. */
    private String rawServer(java.util.function.LongFunction<java.nio.ByteBuffer> reply) throws Exception {
        RawAnswerServer server = new RawAnswerServer(reply);
        resources.add(server);
        return server.address();
    }

    /** A 64-byte frame without control or bulk whose header says {@code length} and the other fields. */
    private static java.nio.ByteBuffer frame(int length, int version, int kind, Opcode opcode, long id) {
        return java.nio.ByteBuffer.allocate(64).putInt(length).put((byte) version).put((byte) kind)
                .putShort((short) opcode.code()).putLong(id).putInt(0).putInt(0).putInt(0).position(64).flip();
    }

    @Test
    void bytesAfterTheLastAnswerCloseTheConnectionInsteadOfReachingTheNextCall() throws Exception {
        int v = io.tiffin.core.transport.TiffinVersion.PROTOCOL_VERSION;
        // a proper answer and, in the same write, 64 bytes nobody asked for
        String address = rawServer(id -> java.nio.ByteBuffer.allocate(128).put(frame(60, v, 1, Opcode.PING, id))
                .put(frame(60, v, 1, Opcode.PING, id + 1)).flip());
        BlockingConnectionPool pool = pool(settings());
        assertThat(pool.call(address, Opcode.PING, ping("a"), PingReply.parser())).isNotNull();
        assertThat(pool.idleCount(address)).as("the connection is not lent out again").isZero();
    }

    @Test
    void malformedAnswersFailTheCallAndCloseTheConnection() throws Exception {
        int v = io.tiffin.core.transport.TiffinVersion.PROTOCOL_VERSION;
        Map<String, java.util.function.LongFunction<java.nio.ByteBuffer>> cases = new java.util.LinkedHashMap<>();
        cases.put("opcode", id -> frame(60, v, 1, Opcode.DATA_WRITE, id));
        cases.put("request", id -> frame(60, v, 1, Opcode.PING, id + 5));
        cases.put("version", id -> frame(60, v + 1, 1, Opcode.PING, id));
        cases.put("frame length", id -> frame(3, v, 1, Opcode.PING, id));
        cases.put("64-byte padding", id -> frame(44, v, 1, Opcode.PING, id));
        cases.put("the server sent a request", id -> frame(60, v, 0, Opcode.PING, id));
        for (var c : cases.entrySet()) {
            String address = rawServer(c.getValue());
            BlockingConnectionPool pool = pool(settings().withRpcTimeout(Duration.ofSeconds(5)));
            long start = System.nanoTime();
            assertThatThrownBy(() -> pool.call(address, Opcode.PING, ping("a"), PingReply.parser()))
                    .as(c.getKey())
                    .isInstanceOfSatisfying(TiffinException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL);
                        assertThat(e.getMessage()).contains(c.getKey()).contains("closed the connection");
                    });
            assertThat(System.nanoTime() - start).as(c.getKey() + ": at once, not after a timeout")
                    .isLessThan(TimeUnit.SECONDS.toNanos(2));
            assertThat(pool.idleCount(address)).isZero();
        }
    }

    @Test
    void wrongTokenIsRefused() {
        TransportServer server = server(settings().withAuthToken("secret"));
        BlockingConnectionPool pool = pool(settings().withAuthToken("guess"));
        assertThatThrownBy(() -> pool.call(address(server), Opcode.PING, ping("a"), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT));
        BlockingConnectionPool right = pool(settings().withAuthToken("secret"));
        assertThat(right.call(address(server), Opcode.PING, ping("a"), PingReply.parser()).getViewVersion()).isEqualTo(1);
    }

    @Test
    void unreachableServerIsRpcFail() {
        BlockingConnectionPool pool = pool(settings());
        TransportServer server = server(settings());
        String address = address(server);
        server.close();
        assertThatThrownBy(() -> pool.call(address, Opcode.PING, ping("a"), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL));
        assertThatThrownBy(() -> pool.acquire("no-port"))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
    }

    @Test
    void aServerRestartIsSurvivedByRetryingOnAFreshConnection() {
        TransportServer first = server(settings());
        int port = first.localAddress().getPort();
        BlockingConnectionPool pool = pool(settings());
        String address = address(first);
        assertThat(pool.call(address, Opcode.PING, ping("a"), PingReply.parser()).getViewVersion()).isEqualTo(1);
        first.close(); // the idle pooled connection is now dead
        TransportServer second = new TransportServer("blocking-test-2", settings());
        resources.add(second);
        second.register(Opcode.PING, (request, responder) -> responder.ok(PingReply.newBuilder().setViewVersion(42).build()), null);
        second.start("127.0.0.1", port);
        assertThat(pool.call(address, Opcode.PING, ping("a"), PingReply.parser()).getViewVersion()).isEqualTo(42);
    }

    @Test
    void pipelinedExchangeAcrossServersReportsPerRequestOutcomes() {
        TransportServer a = server(settings());
        MemorySegment storeA = store;
        TransportServer b = server(settings());
        MemorySegment storeB = store;
        BlockingConnectionPool pool = pool(settings());
        List<MemorySegment> dstA = new ArrayList<>();
        List<DataRequest> reqA = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            reqA.add(range(i == 5 ? "missing" : "s", i * 65536L, 65536));
            dstA.add(arena.allocate(65536));
        }
        List<MemorySegment> dstB = List.of(arena.allocate(1 << 20), arena.allocate(1 << 20));
        List<DataRequest> reqB = List.of(range("s", 0, 1 << 20), range("s", 1 << 20, 1 << 20));
        TiffinException[][] out = pool.exchange(Opcode.DATA_READ, List.of(
                new BlockingConnectionPool.Batch(address(a), reqA, null, dstA),
                new BlockingConnectionPool.Batch(address(b), reqB, null, dstB)));
        for (int i = 0; i < 8; i++) {
            if (i == 5) {
                assertThat(out[0][i].code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND);
            } else {
                assertThat(out[0][i]).isNull();
                assertThat(dstA.get(i).mismatch(storeA.asSlice(i * 65536L, 65536))).isEqualTo(-1);
            }
        }
        assertThat(out[1]).containsOnlyNulls();
        assertThat(dstB.get(1).mismatch(storeB.asSlice(1 << 20, 1 << 20))).isEqualTo(-1);
    }

    /**
     * Answers of mixed sizes in one exchange: tiny and small ones arrive several per read through the
     * connection's receive buffer, an answer's bulk may start inside the buffer and end in a direct read,
     * and failure statuses sit between them.
     */
    @Test
    void pipelinedAnswersOfMixedSizesArriveIntactThroughTheReceiveBuffer() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        SplittableRandom r = new SplittableRandom(11);
        for (int round = 0; round < 6; round++) {
            List<DataRequest> requests = new ArrayList<>();
            List<MemorySegment> dsts = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                int len = switch (r.nextInt(4)) {
                    case 0 -> r.nextInt(1, 64);
                    case 1 -> r.nextInt(64, 20_000);
                    case 2 -> r.nextInt(16_000, 70_000);
                    default -> r.nextInt(100_000, 1 << 20);
                };
                long offset = r.nextLong(STORE_SIZE - len);
                requests.add(range(r.nextInt(10) == 0 ? "missing" : "s", offset, len));
                dsts.add(r.nextBoolean() ? arena.allocate(len) : MemorySegment.ofArray(new byte[len]));
            }
            TiffinException[][] out = pool.exchange(Opcode.DATA_READ,
                    List.of(new BlockingConnectionPool.Batch(address(server), requests, null, dsts)));
            for (int i = 0; i < requests.size(); i++) {
                DataRequest q = requests.get(i);
                if (q.getSegment().equals("missing")) {
                    assertThat(out[0][i].code()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND);
                } else {
                    assertThat(out[0][i]).as("request %d", i).isNull();
                    assertThat(dsts.get(i).mismatch(store.asSlice(q.getOffset(), q.getLength())))
                            .as("bytes of request %d (%d bytes)", i, q.getLength()).isEqualTo(-1);
                }
            }
            // nothing of the exchange is left over for the next call on the same connection
            assertThat(pool.call(address(server), Opcode.PING, ping("abc"), PingReply.parser()).getViewVersion())
                    .isEqualTo(3);
        }
        assertThat(pool.idleCount(address(server))).isEqualTo(1);
    }

    @Test
    void pipelinedWritesOfMixedSizesLandWhereTheyWereSent() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        SplittableRandom r = new SplittableRandom(12);
        List<DataRequest> requests = new ArrayList<>();
        List<MemorySegment> srcs = new ArrayList<>();
        long offset = 0;
        for (int i = 0; i < 30; i++) {
            int len = r.nextBoolean() ? r.nextInt(1, 5000) : r.nextInt(5000, 200_000);
            byte[] bytes = new byte[len];
            r.nextBytes(bytes);
            MemorySegment src = r.nextBoolean() ? arena.allocate(len).copyFrom(MemorySegment.ofArray(bytes))
                    : MemorySegment.ofArray(bytes);
            requests.add(range("s", offset, len));
            srcs.add(src);
            offset += len;
        }
        TiffinException[][] out = pool.exchange(Opcode.DATA_WRITE,
                List.of(new BlockingConnectionPool.Batch(address(server), requests, srcs, null)));
        assertThat(out[0]).containsOnlyNulls();
        for (int i = 0; i < requests.size(); i++) {
            DataRequest q = requests.get(i);
            assertThat(store.asSlice(q.getOffset(), q.getLength()).mismatch(srcs.get(i))).as("write %d", i)
                    .isEqualTo(-1);
        }
    }

    @Test
    void aBatchWithARequestOverTheFrameLimitSendsNothingAndSaysWhy() {
        TransportSettings settings = settings().withMaxFrameSize(1 << 20);
        TransportServer server = server(settings);
        BlockingConnectionPool pool = pool(settings);
        MemorySegment before = arena.allocate(STORE_SIZE).copyFrom(store);
        List<DataRequest> requests = List.of(range("s", 0, 4096), range("s", 8192, 4096), range("s", 1 << 21, 2 << 20));
        List<MemorySegment> srcs = List.of(arena.allocate(4096).fill((byte) 1), arena.allocate(4096).fill((byte) 2),
                arena.allocate(2 << 20).fill((byte) 3));
        TiffinException[][] out = pool.exchange(Opcode.DATA_WRITE,
                List.of(new BlockingConnectionPool.Batch(address(server), requests, srcs, null)));
        assertThat(out[0]).allSatisfy(e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
            assertThat(e.getMessage()).contains("exceeds the transport frame limit");
        });
        // the two small writes gathered before it were dropped with it, not sent
        assertThat(store.mismatch(before)).isEqualTo(-1);
        assertThat(pool.call(address(server), Opcode.PING, ping("ab"), PingReply.parser()).getViewVersion()).isEqualTo(2);
    }

    /** A request whose control part is over the servers' limit (though the frame fits) is refused here, not by a reset. */
    @Test
    void aRequestWithTooMuchMetadataIsRefusedBeforeItIsSent() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        String huge = "k".repeat(17 << 20);
        assertThatThrownBy(() -> pool.call(address(server), Opcode.PING, ping(huge), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
                    assertThat(e.getMessage()).contains("over the limit of").contains("split the batch");
                });
        assertThat(pool.call(address(server), Opcode.PING, ping("ab"), PingReply.parser()).getViewVersion()).isEqualTo(2);
    }

    @Test
    void exchangeWithADeadServerFailsOnlyItsRequests() {
        TransportServer live = server(settings());
        TransportServer dead = server(settings());
        String deadAddress = address(dead);
        dead.close();
        BlockingConnectionPool pool = pool(settings());
        MemorySegment d1 = arena.allocate(4096);
        MemorySegment d2 = arena.allocate(4096);
        TiffinException[][] out = pool.exchange(Opcode.DATA_READ, List.of(
                new BlockingConnectionPool.Batch(deadAddress, List.of(range("s", 0, 4096)), null, List.of(d1)),
                new BlockingConnectionPool.Batch(address(live), List.of(range("s", 0, 4096)), null, List.of(d2))));
        assertThat(out[0][0].code()).isEqualTo(ErrorCode.RPC_FAIL);
        assertThat(out[1][0]).isNull();
    }

    @Test
    void manyThreadsReadConcurrentlyAndGetTheirOwnBytes() throws Exception {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                done.add(threads.submit(() -> {
                    SplittableRandom r = new SplittableRandom(seed);
                    MemorySegment dst = arena.allocate(256 * 1024);
                    for (int i = 0; i < 200; i++) {
                        long len = 1 + r.nextInt(256 * 1024);
                        long off = r.nextLong(STORE_SIZE - len);
                        pool.call(address(server), Opcode.DATA_READ, range("s", off, len), null, Empty.parser(), dst);
                        assertThat(dst.asSlice(0, len).mismatch(store.asSlice(off, len))).isEqualTo(-1);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }
        assertThat(pool.idleCount(address(server))).isBetween(1, 8);
    }

    @Test
    void closingThePoolFailsCallsAndRefusesNewOnes() {
        TransportServer server = server(settings());
        BlockingConnectionPool pool = pool(settings());
        BlockingConnection lent = pool.acquire(address(server));
        pool.close();
        assertThat(lent.isOpen()).isFalse();
        assertThatThrownBy(() -> lent.call(Opcode.PING, ping("a"), null, PingReply.parser(), null))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL));
        assertThatThrownBy(() -> pool.acquire(address(server)))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL));
    }
}
