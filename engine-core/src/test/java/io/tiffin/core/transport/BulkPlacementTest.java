package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.testing.NettyLeaks;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A request bulk received straight into the memory its opcode's {@link BulkPlacer} names, over real sockets:
 * a server whose DATA_WRITE handler copies into {@link #region} unless the frame's bulk is already placed
 * there, and refuses (the placer too) any segment other than {@code "seg"}.
 */
class BulkPlacementTest {
    private static final String HOST = "127.0.0.1";
    private static final int REGION = 40 << 20;
    private static final byte FILL = (byte) 0xA5;
    @TempDir
    static Path dir;
    private static EventLoopGroup clientGroup;

    private final List<AutoCloseable> resources = new ArrayList<>();
    private Arena arena;
    private MemorySegment region;
    /** What the handler saw, per DATA_WRITE, in order. */
    private final ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();
    /** Set: the placer refuses every write from now on (a permission that lapsed). */
    private final java.util.concurrent.atomic.AtomicBoolean revoked = new java.util.concurrent.atomic.AtomicBoolean();

    @BeforeAll
    static void setUpAll() {
        NettyLeaks.install();
        clientGroup = EventLoops.newGroup("placement-test-client", 1, true);
    }

    @AfterAll
    static void tearDownAll() {
        clientGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        NettyLeaks.assertNoLeaks();
    }

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        region = arena.allocate(REGION, 64);
        region.fill(FILL);
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

    private static DataRequest check(DataRequest req) {
        if (!req.getSegment().equals("seg")) {
            throw new TiffinException(ErrorCode.SEGMENT_NOT_FOUND, "no segment " + req.getSegment());
        }
        return req;
    }

    /** A server whose frame timeout is {@code timeout}. */
    private TransportServer serverWithFrameTimeout(Duration timeout) {
        return server(settings().withLimits(settings().limits().withFrameTimeout(timeout)));
    }

    private TransportServer server(TransportSettings settings) {
        TransportServer server = new TransportServer("placement-test", settings);
        resources.add(server);
        server.register(Opcode.DATA_WRITE, (request, responder) -> {
            DataRequest req = check(request.parseControl(DataRequest.parser()));
            ByteBuf bulk = request.bulk();
            if (bulk.readableBytes() != req.getLength()) {
                throw new TiffinException(ErrorCode.INVALID_PARAMS, "write of " + req.getLength() + " bytes carried "
                        + bulk.readableBytes());
            }
            seen.add((request.bulkPlaced() ? "placed " : "copied ") + req.getLength());
            if (!request.bulkPlaced() && req.getLength() > 0) {
                bulk.getBytes(bulk.readerIndex(), region.asSlice(req.getOffset(), req.getLength()).asByteBuffer());
            }
            responder.ok(Empty.getDefaultInstance());
        }, null, (control, bulkLength) -> {
            if (revoked.get()) {
                throw new TiffinException(ErrorCode.REPLICA_IS_GONE, "revoked");
            }
            DataRequest req = check(parse(control));
            return req.getLength() == bulkLength ? region.asSlice(req.getOffset(), req.getLength()) : null;
        });
        server.register(Opcode.SEGMENT_INFO, (request, responder) -> responder.ok(Empty.getDefaultInstance()), null);
        return server.start(HOST, 0);
    }

    private static DataRequest parse(ByteBuf control) {
        try {
            return DataRequest.parseFrom(control.nioBuffer());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private RawPeer peer(TransportServer server) throws Exception {
        RawPeer peer = new RawPeer(server.localAddress());
        resources.add(peer);
        assertThat(peer.hello("")).isEqualTo(ErrorCode.OK);
        return peer;
    }

    private static byte[] random(int length, long seed) {
        byte[] bytes = new byte[length];
        new SplittableRandom(seed).nextBytes(bytes);
        return bytes;
    }

    private static byte[] write(RawPeer peer, String segment, long offset, int length, byte[] bulk) {
        return peer.request(Opcode.DATA_WRITE, DataRequest.newBuilder().setSegment(segment).setOffset(offset)
                .setLength(length).build(), bulk == null ? null : Unpooled.wrappedBuffer(bulk));
    }

    /** The region's bytes at [from, to), all {@link #FILL}. */
    private void assertUntouched(long from, long to) {
        for (long i = from; i < to; i++) {
            if (region.get(ValueLayout.JAVA_BYTE, i) != FILL) {
                throw new AssertionError("region byte " + i + " was written");
            }
        }
    }

    private void assertHolds(long offset, byte[] bytes) {
        byte[] actual = region.asSlice(offset, bytes.length).toArray(ValueLayout.JAVA_BYTE);
        assertThat(Arrays.equals(actual, bytes)).as("region bytes at " + offset).isTrue();
    }

    @ParameterizedTest(name = "{0} bytes, epoll {1}")
    @CsvSource({"1048576, true", "33554432, true", "1048576, false"})
    void largeWriteArrivingInSmallPiecesLandsInPlaceByteExact(int size, boolean epoll) throws Exception {
        TransportServer server = server(settings().withUseNative(epoll));
        RawPeer peer = peer(server);
        byte[] bulk = random(size, size);
        long offset = 4096 + 64;
        byte[] frame = write(peer, "seg", offset, size, bulk);
        SplittableRandom pieces = new SplittableRandom(7);
        int at = 0;
        while (at < frame.length) {
            // pieces from a byte to 96 KiB: the header and control part arrive split too
            int n = Math.min(frame.length - at, at < 200 ? 1 + pieces.nextInt(16) : 1 + pieces.nextInt(96 << 10));
            peer.send(Arrays.copyOfRange(frame, at, at + n));
            at += n;
        }
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertThat(seen).containsExactly("placed " + size);
        assertHolds(offset, bulk);
        assertUntouched(0, offset);
        assertUntouched(offset + size, offset + size + 256 * 1024);
    }

    @Test
    void refusedWriteLeavesItsBytesUnwrittenAndTheConnectionServesTheNext() throws Exception {
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        int size = 1 << 20;
        byte[] frame = write(peer, "other", 0, size, random(size, 1));
        peer.send(Arrays.copyOfRange(frame, 0, 4096));
        Thread.sleep(50); // the header and control part alone first: the placer is asked, and refuses
        peer.send(Arrays.copyOfRange(frame, 4096, frame.length));
        RawPeer.Answer refused = peer.readAnswer();
        assertThat(refused.status()).isEqualTo(ErrorCode.SEGMENT_NOT_FOUND);
        assertThat(refused.message()).contains("no segment other");
        // a length that does not match the bulk: the placer declines, the handler answers
        peer.send(write(peer, "seg", 0, size - 64, random(size, 2)));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertUntouched(0, REGION);
        assertThat(seen).isEmpty();

        byte[] bulk = random(size, 3);
        peer.send(write(peer, "seg", 1 << 20, size, bulk));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertHolds(1 << 20, bulk);
        assertUntouched(0, 1 << 20);
    }

    @Test
    void writeRefusedWhileItsBulkArrivesIsAnsweredAndItsRestDiscarded() throws Exception {
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        int size = 4 << 20;
        long offset = 1 << 20;
        byte[] frame = write(peer, "seg", offset, size, random(size, 11));
        int first = 100 << 10;
        peer.send(Arrays.copyOfRange(frame, 0, first));
        Thread.sleep(100); // placed so far: the bulk bytes of the first piece
        revoked.set(true);
        for (int at = first; at < frame.length; at += 64 << 10) {
            peer.send(Arrays.copyOfRange(frame, at, Math.min(frame.length, at + (64 << 10))));
        }
        RawPeer.Answer answer = peer.readAnswer();
        assertThat(answer.status()).isEqualTo(ErrorCode.REPLICA_IS_GONE);
        assertThat(answer.message()).isEqualTo("revoked");
        assertThat(seen).as("the handler never sees a partly placed bulk").isEmpty();
        assertUntouched(offset + first, REGION);

        revoked.set(false);
        byte[] bulk = random(size, 12);
        peer.send(write(peer, "seg", offset, size, bulk));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertHolds(offset, bulk);
    }

    @Test
    void requestRightAfterAPlacedBulkInTheSameWriteIsDecoded() throws Exception {
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        int size = (1 << 20) + 8; // padding after the bulk
        byte[] bulk = random(size, 4);
        byte[] first = write(peer, "seg", 0, size, bulk);
        byte[] small = random(1000, 5);
        byte[] second = write(peer, "seg", 2 << 20, small.length, small);
        byte[] third = peer.request(Opcode.SEGMENT_INFO, Empty.getDefaultInstance(), null);
        peer.send(Arrays.copyOfRange(first, 0, 3000));
        Thread.sleep(50); // the placement starts with what came
        ByteArrayOutputStream rest = new ByteArrayOutputStream();
        rest.write(first, 3000, first.length - 3000);
        rest.write(second);
        rest.write(third);
        peer.send(rest.toByteArray());
        for (int i = 0; i < 3; i++) {
            assertThat(peer.readAnswer().status()).as("answer " + i).isEqualTo(ErrorCode.OK);
        }
        assertThat(seen).containsExactly("placed " + size, "copied 1000");
        assertHolds(0, bulk);
        assertUntouched(size, 2 << 20);
        assertHolds(2 << 20, small);

        // the same, whole in one write
        peer.send(concat(write(peer, "seg", 4 << 20, size, bulk), write(peer, "seg", 3 << 20, small.length, small)));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertHolds(4 << 20, bulk);
        assertHolds(3 << 20, small);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    @Test
    void connectionClosedMidBulkDeliversNoRequestAndOthersGoOn() throws Exception {
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        int size = 8 << 20;
        byte[] frame = write(peer, "seg", 0, size, random(size, 6));
        peer.send(Arrays.copyOfRange(frame, 0, 3 << 20));
        peer.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> server.connections() == 0);
        assertThat(seen).isEmpty();

        RawPeer next = peer(server);
        byte[] bulk = random(size, 7);
        next.send(write(next, "seg", 16 << 20, size, bulk));
        assertThat(next.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertThat(seen).containsExactly("placed " + size);
        assertHolds(16 << 20, bulk);
    }

    @Test
    void smallAndEmptyBulksAreCopiedAsBefore() throws Exception {
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        byte[] small = random(FrameCodec.PRESIZE_THRESHOLD - 64, 8);
        peer.send(write(peer, "seg", 0, small.length, small));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        peer.send(write(peer, "seg", 0, 0, null));
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertThat(seen).containsExactly("copied " + small.length, "copied 0");
        assertHolds(0, small);
    }

    @Test
    void stalledPlacedBulkIsClosedAtTheFrameTimeout() throws Exception {
        RawPeer peer = peer(serverWithFrameTimeout(Duration.ofMillis(300)));
        int size = 1 << 20;
        byte[] frame = write(peer, "seg", 0, size, random(size, 9));
        peer.send(Arrays.copyOfRange(frame, 0, 8192));
        Thread.sleep(400);
        peer.send(Arrays.copyOfRange(frame, 8192, 16384)); // late: the decoder looks at the clock as bytes come
        assertThat(peer.closedWithin(5000)).isTrue();
        assertThat(seen).isEmpty();
    }

    @Test
    void placedBulkWhoseSenderGoesSilentIsClosedAtTheFrameTimeout() throws Exception {
        // no later byte arrives to wake a read (and the socket's low-water mark holds back the ones that do): the
        // frame timeout is kept by a timer
        RawPeer peer = peer(serverWithFrameTimeout(Duration.ofMillis(300)));
        int size = 4 << 20;
        byte[] frame = write(peer, "seg", 0, size, random(size, 13));
        peer.send(Arrays.copyOfRange(frame, 0, 200 << 10));
        long start = System.nanoTime();
        assertThat(peer.closedWithin(5000)).isTrue();
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(250));
        assertThat(seen).isEmpty();
    }

    @Test
    void placedBulkWhoseLastBytesTrickleInCompletes() throws Exception {
        // the socket's low-water mark never stays above the bytes still to come: each last byte is read
        TransportServer server = server(settings());
        RawPeer peer = peer(server);
        int size = 3 << 20;
        byte[] bulk = random(size, 14);
        byte[] frame = write(peer, "seg", 64, size, bulk);
        int tail = 40;
        int end = frame.length - FrameCodec.padding(size) - tail;
        peer.send(Arrays.copyOfRange(frame, 0, 64 << 10));
        Thread.sleep(50);
        peer.send(Arrays.copyOfRange(frame, 64 << 10, 2 << 20));
        Thread.sleep(50);
        peer.send(Arrays.copyOfRange(frame, 2 << 20, end));
        for (int at = end; at < frame.length; at++) {
            Thread.sleep(2);
            peer.send(Arrays.copyOfRange(frame, at, at + 1));
        }
        assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
        assertThat(seen).containsExactly("placed " + size);
        assertHolds(64, bulk);
        peer.send(write(peer, "seg", 8 << 20, 100, Arrays.copyOf(bulk, 100)));
        assertThat(peer.readAnswer().status()).as("a small request right after").isEqualTo(ErrorCode.OK);
    }

    @Test
    void tlsConnectionsReceiveBulksTheUsualWay() throws Exception {
        TestCertificates certs = TestCertificates.create(dir);
        TransportServer server = server(settings().withTls(certs.server.settings()));
        TransportClient client = TransportClient.connect(HOST, server.localAddress().getPort(),
                settings().withTls(certs.client.trustOnly()), "tls-peer", clientGroup);
        resources.add(client);
        byte[] bulk = random(2 << 20, 10);
        Frame reply = client.call(Opcode.DATA_WRITE, DataRequest.newBuilder().setSegment("seg").setOffset(64)
                .setLength(bulk.length).build(), Unpooled.wrappedBuffer(bulk)).get(30, TimeUnit.SECONDS);
        try {
            assertThat(reply.status()).isEqualTo(ErrorCode.OK);
        } finally {
            reply.release();
        }
        assertThat(seen).containsExactly("copied " + bulk.length);
        assertHolds(64, bulk);
        assertUntouched(0, 64);
    }
}
