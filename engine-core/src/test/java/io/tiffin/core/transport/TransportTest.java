package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.TiffinVersion;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.Hello;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TransportTest {
    private static final String HOST = "127.0.0.1";
    private static EventLoopGroup clientGroup;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private ExecutorService workers;

    @BeforeAll
    static void setUpAll() {
        NettyLeaks.install();
        clientGroup = EventLoops.newGroup("test-client", 2, true);
    }

    @AfterAll
    static void tearDownAll() throws InterruptedException {
        clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        NettyLeaks.assertNoLeaks();
    }

    @BeforeEach
    void setUp() {
        workers = Executors.newFixedThreadPool(4);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        workers.shutdownNow();
    }

    private static TransportSettings settings() {
        return TransportSettings.defaults().withIoThreads(2).withHandshakeTimeout(Duration.ofSeconds(5));
    }

    /** Echoes the DataRequest control and the bulk bytes back. */
    private static final RequestHandler ECHO = (request, responder) ->
            responder.ok(request.parseControl(DataRequest.parser()), request.bulk().retain());

    private TransportServer server(TransportSettings settings) {
        TransportServer server = new TransportServer("test", settings);
        resources.add(server);
        server.register(Opcode.DATA_WRITE, ECHO, workers);
        server.register(Opcode.DATA_READ, ECHO, null);
        server.register(Opcode.PING, (request, responder) -> responder.ok(PingReply.newBuilder()
                .setNeedRemount(true)
                .setViewVersion(request.parseControl(PingRequest.parser()).getNodeId().length())
                .build()), null);
        return server;
    }

    private TransportClient client(TransportServer server, TransportSettings settings) {
        InetSocketAddress address = server.localAddress();
        TransportClient client = TransportClient.connect(HOST, address.getPort(), settings, "test-peer", clientGroup);
        resources.add(client);
        return client;
    }

    private static ErrorCode failureCode(CompletableFuture<?> future) {
        try {
            Object result = future.get(30, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure, got " + result);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(TiffinException.class);
            return ((TiffinException) e.getCause()).code();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static ErrorCode connectFailure(Runnable connect) {
        try {
            connect.run();
            throw new AssertionError("expected the connection to fail");
        } catch (TiffinException e) {
            return e.code();
        }
    }

    private static void assertEchoWorks(TransportClient client) throws Exception {
        byte[] bytes = {1, 2, 3, 4, 5};
        DataRequest request = DataRequest.newBuilder().setSegment("s").setLength(bytes.length).build();
        Frame reply = client.call(Opcode.DATA_WRITE, request,
                PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes)).get(10, TimeUnit.SECONDS);
        try {
            assertThat(reply.parseControl(DataRequest.parser())).isEqualTo(request);
            assertThat(ByteBufUtil.getBytes(reply.bulk())).isEqualTo(bytes);
        } finally {
            reply.release();
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1024, 16 * 1024 * 1024})
    void echoRoundTripsBulkOfEverySize(int size) throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        TransportClient client = client(server, settings());
        assertThat(client.isActive()).isTrue();
        assertThat(client.serverVersion()).isEqualTo(TiffinVersion.VERSION);
        byte[] bytes = new byte[size];
        new SplittableRandom(size).nextBytes(bytes);
        for (Opcode op : new Opcode[] {Opcode.DATA_WRITE, Opcode.DATA_READ}) {
            DataRequest request = DataRequest.newBuilder().setSegment("seg").setOffset(7).setLength(size).build();
            ByteBuf bulk = size == 0 ? null : PooledByteBufAllocator.DEFAULT.directBuffer(size).writeBytes(bytes);
            Frame reply = client.call(op, request, bulk).get(30, TimeUnit.SECONDS);
            try {
                assertThat(reply.kind()).isEqualTo(Frame.Kind.RESPONSE);
                assertThat(reply.opcode()).isEqualTo(op);
                assertThat(reply.status()).isEqualTo(ErrorCode.OK);
                assertThat(reply.parseControl(DataRequest.parser())).isEqualTo(request);
                assertThat(reply.bulk().readableBytes()).isEqualTo(size);
                assertThat(ByteBufUtil.getBytes(reply.bulk())).isEqualTo(bytes);
            } finally {
                reply.release();
            }
        }
        assertThat(client.pendingCalls()).isZero();
    }

    @Test
    void nioTransportWorksLikeEpoll() throws Exception {
        TransportSettings nio = settings().withUseNative(false);
        TransportServer server = server(nio).start(HOST, 0);
        EventLoopGroup nioGroup = EventLoops.newGroup("test-nio-client", 1, false);
        resources.add(() -> nioGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly());
        assertThat(EventLoops.isEpoll(nioGroup)).isFalse();
        TransportClient client = TransportClient.connect(HOST, server.localAddress().getPort(), nio, "nio", nioGroup);
        resources.add(client);
        assertEchoWorks(client);
    }

    @Test
    void callSyncParsesControlOnlyReplies() {
        TransportServer server = server(settings()).start(HOST, 0);
        TransportClient client = client(server, settings());
        PingReply reply = client.callSync(Opcode.PING, PingRequest.newBuilder().setNodeId("node-7").build(),
                PingReply.parser());
        assertThat(reply.getNeedRemount()).isTrue();
        assertThat(reply.getViewVersion()).isEqualTo(6);
    }

    @Test
    void manyConcurrentCallsFromSeveralThreadsAreAnsweredOutOfOrder() throws Exception {
        ScheduledExecutorService delayer = Executors.newScheduledThreadPool(4);
        resources.add(delayer::shutdownNow);
        TransportServer server = new TransportServer("reorder", settings());
        resources.add(server);
        SplittableRandom delays = new SplittableRandom(7);
        // Answers later, from another thread, after a random delay: exercises retain() and reordering.
        server.register(Opcode.DATA_WRITE, (request, responder) -> {
            request.retain();
            long delayMicros;
            synchronized (delays) {
                delayMicros = delays.nextLong(5000);
            }
            delayer.schedule(() -> {
                try {
                    responder.ok(request.parseControl(DataRequest.parser()), request.bulk().retain());
                } finally {
                    request.release();
                }
            }, delayMicros, TimeUnit.MICROSECONDS);
        }, workers).start(HOST, 0);
        TransportClient client = client(server, settings());

        int threads = 8;
        int callsPerThread = 250;
        ConcurrentLinkedQueue<Long> completionOrder = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> senders = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread sender = Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    List<CompletableFuture<Void>> futures = new ArrayList<>();
                    for (int i = 0; i < callsPerThread; i++) {
                        long id = (long) thread * callsPerThread + i;
                        DataRequest request = DataRequest.newBuilder().setOffset(id).setLength(8).build();
                        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(id * 31);
                        futures.add(client.call(Opcode.DATA_WRITE, request, bulk).thenAccept(reply -> {
                            try {
                                long echoed = reply.parseControl(DataRequest.parser()).getOffset();
                                if (echoed != id || reply.bulk().getLong(reply.bulk().readerIndex()) != id * 31) {
                                    errors.add(new AssertionError("call " + id + " got the answer of " + echoed));
                                }
                                completionOrder.add(id);
                            } finally {
                                reply.release();
                            }
                        }));
                    }
                    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            senders.add(sender);
        }
        start.countDown();
        for (Thread sender : senders) {
            sender.join();
        }
        assertThat(errors).isEmpty();
        assertThat(completionOrder).hasSize(threads * callsPerThread);
        List<Long> order = new ArrayList<>(completionOrder);
        List<Long> perThreadOrder = order.stream().filter(id -> id < callsPerThread).toList();
        assertThat(perThreadOrder).as("responses of one thread arrive out of order")
                .isNotEqualTo(perThreadOrder.stream().sorted().toList());
        assertThat(client.pendingCalls()).isZero();
    }

    @Test
    void wrongTokenIsRejectedWithIllegalClient() {
        TransportServer server = server(settings().withAuthToken("s3cret")).start(HOST, 0);
        int port = server.localAddress().getPort();
        assertThat(connectFailure(() -> TransportClient.connect(HOST, port, settings().withAuthToken("wrong"),
                "p", clientGroup))).isEqualTo(ErrorCode.ILLEGAL_CLIENT);
        assertThat(connectFailure(() -> TransportClient.connect(HOST, port, settings(), "p", clientGroup)))
                .isEqualTo(ErrorCode.ILLEGAL_CLIENT);
    }

    @Test
    void rightTokenIsAccepted() throws Exception {
        TransportServer server = server(settings().withAuthToken("s3cret")).start(HOST, 0);
        assertEchoWorks(client(server, settings().withAuthToken("s3cret")));
    }

    @Test
    void serverWithoutTokenAcceptsAnyToken() throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        assertEchoWorks(client(server, settings().withAuthToken("anything")));
        assertEchoWorks(client(server, settings()));
    }

    @Test
    void wrongProtocolVersionIsRejectedWithInvalidVersion() throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        int port = server.localAddress().getPort();
        assertThat(connectFailure(() -> TransportClient.connect(HOST, port, settings(), "old", clientGroup,
                TiffinVersion.PROTOCOL_VERSION + 1))).isEqualTo(ErrorCode.INVALID_VERSION);
        assertEchoWorks(client(server, settings()));
    }

    @Test
    void connectingToAClosedPortFailsWithRpcFail() {
        TransportServer server = server(settings()).start(HOST, 0);
        int port = server.localAddress().getPort();
        server.close();
        assertThatThrownBy(() -> TransportClient.connect(HOST, port, settings(), "p", clientGroup))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL);
                    assertThat(e.getMessage()).contains(HOST + ":" + port);
                });
    }

    @Test
    void oversizedFrameClosesOnlyThatConnection() throws Exception {
        TransportServer server = server(settings().withMaxFrameSize(64 * 1024)).start(HOST, 0);
        TransportClient bystander = client(server, settings());
        TransportClient offender = client(server, settings());
        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.directBuffer(128 * 1024).writeZero(128 * 1024);
        assertThat(failureCode(offender.call(Opcode.DATA_WRITE, DataRequest.getDefaultInstance(), bulk)))
                .isEqualTo(ErrorCode.RPC_FAIL);
        assertThat(offender.isActive()).isFalse();
        assertThat(failureCode(offender.call(Opcode.DATA_WRITE, DataRequest.getDefaultInstance(), null)))
                .isEqualTo(ErrorCode.RPC_FAIL);
        assertEchoWorks(bystander);
        assertEchoWorks(client(server, settings()));
    }

    /** Reads until the server closes the socket; fails if it stays open for 15 s. */
    private static void assertClosedByServer(Socket socket) throws IOException {
        socket.setSoTimeout(15_000);
        InputStream in = socket.getInputStream();
        byte[] sink = new byte[4096];
        try {
            while (in.read(sink) >= 0) {
                // Drain whatever the server answered before closing (e.g. a failed HELLO).
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server did not close the connection", e);
        } catch (SocketException e) {
            // Connection reset: the server closed with unread garbage in its buffer.
        }
    }

    private static void writeIgnoringReset(Socket socket, byte[] bytes) throws IOException {
        OutputStream out = socket.getOutputStream();
        try {
            out.write(bytes);
            out.flush();
        } catch (SocketException e) {
            // The server may already have closed after the first bad bytes.
        }
    }

    @Test
    void randomGarbageClosesTheSocketAndServerKeepsServing() throws Exception {
        TransportServer server = server(settings().withHandshakeTimeout(Duration.ofSeconds(2))).start(HOST, 0);
        TransportClient bystander = client(server, settings());
        long seed = System.nanoTime();
        System.out.println("randomGarbageClosesTheSocketAndServerKeepsServing seed=" + seed);
        SplittableRandom random = new SplittableRandom(seed);
        for (int round = 0; round < 8; round++) {
            byte[] garbage = new byte[1 + random.nextInt(8192)];
            random.nextBytes(garbage);
            try (Socket socket = new Socket(HOST, server.localAddress().getPort())) {
                writeIgnoringReset(socket, garbage);
                assertClosedByServer(socket);
            }
            assertEchoWorks(bystander);
        }
        assertEchoWorks(client(server, settings()));
    }

    @Test
    void truncatedFrameThenCloseLeavesServerServing() throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        byte[] hello = helloBytes(Hello.newBuilder().setProtocolVersion(TiffinVersion.PROTOCOL_VERSION).build());
        try (Socket socket = new Socket(HOST, server.localAddress().getPort())) {
            socket.getOutputStream().write(hello, 0, hello.length - 3);
            socket.getOutputStream().flush();
        }
        try (Socket socket = new Socket(HOST, server.localAddress().getPort())) {
            socket.getOutputStream().write(hello, 0, 10);
            socket.getOutputStream().flush();
        }
        assertEchoWorks(client(server, settings()));
    }

    @Test
    void requestBeforeHandshakeClosesTheConnection() throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        byte[] ping = bytesOf(Frame.request(Opcode.PING, 1, PingRequest.getDefaultInstance(), null));
        try (Socket socket = new Socket(HOST, server.localAddress().getPort())) {
            writeIgnoringReset(socket, ping);
            assertClosedByServer(socket);
        }
        assertEchoWorks(client(server, settings()));
    }

    @Test
    void silentConnectionIsClosedAfterHandshakeTimeout() throws Exception {
        TransportServer server = server(settings().withHandshakeTimeout(Duration.ofMillis(300))).start(HOST, 0);
        long start = System.nanoTime();
        try (Socket socket = new Socket(HOST, server.localAddress().getPort())) {
            assertClosedByServer(socket);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(250), Duration.ofSeconds(10));
    }

    private static byte[] helloBytes(Hello hello) {
        return bytesOf(Frame.request(Opcode.HELLO, 1, hello, null));
    }

    private static byte[] bytesOf(Frame frame) {
        ByteBuf wire = FrameCodecTest.encode(frame);
        try {
            return ByteBufUtil.getBytes(wire);
        } finally {
            wire.release();
        }
    }

    @Test
    void unregisteredOpcodeIsAnsweredNotSupported() {
        TransportServer server = server(settings()).start(HOST, 0);
        TransportClient client = client(server, settings());
        assertThat(failureCode(client.call(Opcode.STATS, Empty.getDefaultInstance(), null)))
                .isEqualTo(ErrorCode.NOT_SUPPORTED);
        assertThatThrownBy(() -> client.callSync(Opcode.STATS, Empty.getDefaultInstance(), Empty.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NOT_SUPPORTED);
                    assertThat(e.getMessage()).contains("STATS");
                });
        assertThat(client.isActive()).isTrue();
    }

    @Test
    void handlerExceptionsBecomeFailureAnswers() throws Exception {
        TransportServer server = server(settings());
        server.register(Opcode.REMOVE, (request, responder) -> {
            throw new TiffinException(ErrorCode.OBJECT_NOT_FOUND, "no object 'k'");
        }, workers);
        server.register(Opcode.EXIST_KEY, (request, responder) -> {
            throw new IllegalStateException("boom");
        }, null);
        server.start(HOST, 0);
        TransportClient client = client(server, settings());
        CompletableFuture<Frame> removed = client.call(Opcode.REMOVE, Empty.getDefaultInstance(), null);
        assertThat(failureCode(removed)).isEqualTo(ErrorCode.OBJECT_NOT_FOUND);
        assertThatThrownBy(removed::join).hasRootCauseMessage("no object 'k'");
        assertThat(failureCode(client.call(Opcode.EXIST_KEY, Empty.getDefaultInstance(), null)))
                .isEqualTo(ErrorCode.INTERNAL_ERROR);
        assertEchoWorks(client);
    }

    @Test
    void secondAnswerIsAnIllegalStateException() throws Exception {
        TransportServer server = server(settings());
        AtomicReference<Throwable> second = new AtomicReference<>();
        AtomicReference<Integer> extraRefCnt = new AtomicReference<>();
        CountDownLatch handled = new CountDownLatch(1);
        server.register(Opcode.REMOVE, (request, responder) -> {
            responder.ok(Empty.getDefaultInstance());
            ByteBuf extra = PooledByteBufAllocator.DEFAULT.buffer(4).writeInt(1);
            try {
                responder.ok(Empty.getDefaultInstance(), extra);
            } catch (IllegalStateException e) {
                second.set(e);
            }
            extraRefCnt.set(extra.refCnt());
            handled.countDown();
        }, null).start(HOST, 0);
        TransportClient client = client(server, settings());
        client.call(Opcode.REMOVE, Empty.getDefaultInstance(), null).get(10, TimeUnit.SECONDS).release();
        assertThat(handled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(second.get()).isInstanceOf(IllegalStateException.class);
        assertThat(extraRefCnt.get()).as("the rejected bulk was released").isZero();
    }

    @Test
    void unansweredCallTimesOutWithRpcTimeout() throws Exception {
        TransportServer server = server(settings());
        server.register(Opcode.REMOVE, (request, responder) -> { }, null).start(HOST, 0);
        TransportClient client = client(server, settings().withRpcTimeout(Duration.ofMillis(300)));
        long start = System.nanoTime();
        assertThat(failureCode(client.call(Opcode.REMOVE, Empty.getDefaultInstance(), null)))
                .isEqualTo(ErrorCode.RPC_TIMEOUT);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
        assertThat(client.pendingCalls()).isZero();
        assertThat(client.isActive()).isTrue();
        assertEchoWorks(client);
    }

    @Test
    void serverClosedMidCallFailsPendingWithRpcFail() throws Exception {
        TransportServer server = server(settings());
        CountDownLatch received = new CountDownLatch(1);
        server.register(Opcode.REMOVE, (request, responder) -> received.countDown(), null).start(HOST, 0);
        TransportClient client = client(server, settings());
        CompletableFuture<Frame> call = client.call(Opcode.REMOVE, Empty.getDefaultInstance(), null);
        assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();
        server.close();
        assertThat(failureCode(call)).isEqualTo(ErrorCode.RPC_FAIL);
        assertThat(client.isActive()).isFalse();
        ByteBuf bulk = PooledByteBufAllocator.DEFAULT.buffer(4).writeInt(1);
        assertThat(failureCode(client.call(Opcode.DATA_WRITE, DataRequest.getDefaultInstance(), bulk)))
                .isEqualTo(ErrorCode.RPC_FAIL);
        assertThat(bulk.refCnt()).isZero();
    }

    @Test
    void closedClientFailsCallsWithRpcFail() {
        TransportServer server = server(settings()).start(HOST, 0);
        TransportClient client = client(server, settings());
        client.close();
        assertThat(client.isActive()).isFalse();
        assertThatThrownBy(() -> client.callSync(Opcode.PING, PingRequest.getDefaultInstance(), PingReply.parser()))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL));
    }

    @Test
    void poolCachesPerEndpointAndReconnects() throws Exception {
        TransportServer server = server(settings()).start(HOST, 0);
        TransportClientPool pool = new TransportClientPool("pool", settings(), "pool-peer");
        resources.add(pool);
        String endpoint = HOST + ":" + server.localAddress().getPort();
        TransportClient first = pool.get(endpoint);
        assertThat(pool.get(endpoint)).isSameAs(first);
        assertEchoWorks(first);
        first.close();
        TransportClient second = pool.get(endpoint);
        assertThat(second).isNotSameAs(first);
        assertThat(second.isActive()).isTrue();
        assertEchoWorks(second);
        assertThatThrownBy(() -> pool.get("no-port"))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_PARAMS));
        pool.close();
        assertThat(second.isActive()).isFalse();
        assertThatThrownBy(() -> pool.get(endpoint))
                .isInstanceOfSatisfying(TiffinException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RPC_FAIL));
    }

    @Test
    void registeringTwiceOrHelloIsRejected() {
        TransportServer server = server(settings());
        assertThatThrownBy(() -> server.register(Opcode.PING, ECHO, null)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> server.register(Opcode.HELLO, ECHO, null)).isInstanceOf(IllegalArgumentException.class);
    }
}
