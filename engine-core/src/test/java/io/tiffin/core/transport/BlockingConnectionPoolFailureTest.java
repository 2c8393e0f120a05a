package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The blocking pool when a handshake, a slow server or the caller's destination goes wrong. */
class BlockingConnectionPoolFailureTest {
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private static TransportSettings settings() {
        return TransportSettings.defaults().withIoThreads(1).withHandshakeTimeout(Duration.ofSeconds(5));
    }

    private TransportServer server(String name, TransportSettings settings) {
        TransportServer s = new TransportServer(name, settings);
        open.add(s);
        return s;
    }

    private static String endpoint(TransportServer s) {
        return "127.0.0.1:" + s.localAddress().getPort();
    }

    @Test
    void aRefusedHandshakeLeavesNothingForTheWatchdog() {
        TransportServer server = server("auth", settings().withAuthToken("right"));
        server.register(Opcode.PING, (r, resp) -> resp.ok(PingReply.getDefaultInstance()), null);
        server.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("t", settings().withAuthToken("wrong"), "p");
        open.add(pool);

        for (int i = 0; i < 20; i++) {
            assertThatThrownBy(() -> pool.call(endpoint(server), Opcode.PING, PingRequest.getDefaultInstance(),
                    PingReply.parser())).isInstanceOfSatisfying(TiffinException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_CLIENT));
        }

        assertThat(pool.watchedCount()).as("closed connections (64 KiB receive buffer each) kept").isZero();
    }

    /**
     * Answers read late are not late answers: a batch to a prompt server is received after a slow
     * server's batch, which takes longer than the RPC timeout in all though each of its answers comes
     * within it.
     */
    @Test
    void aPromptServerIsNotTimedOutWhileAnotherServersBatchIsReceived() throws Exception {
        ScheduledExecutorService delay = Executors.newSingleThreadScheduledExecutor();
        open.add(delay::shutdownNow);
        TransportServer slow = server("slow", settings());
        TransportServer fast = server("fast", settings());
        long[] next = {0};
        slow.register(Opcode.DATA_READ, (r, resp) -> {
            long at;
            synchronized (next) {
                next[0] = Math.max(next[0], System.nanoTime()) + TimeUnit.MILLISECONDS.toNanos(150);
                at = next[0];
            }
            delay.schedule(() -> resp.ok(Empty.getDefaultInstance(), Unpooled.wrappedBuffer(new byte[8])),
                    at - System.nanoTime(), TimeUnit.NANOSECONDS);
        }, null);
        fast.register(Opcode.DATA_READ, (r, resp) -> resp.ok(Empty.getDefaultInstance(),
                Unpooled.wrappedBuffer(new byte[8])), null);
        slow.start("127.0.0.1", 0);
        fast.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("t", settings().withRpcTimeout(Duration.ofMillis(400)), "p");
        open.add(pool);
        Arena arena = Arena.ofShared();
        open.add(arena);
        List<DataRequest> six = Collections.nCopies(6, DataRequest.newBuilder().setLength(8).build());
        List<MemorySegment> into = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            into.add(arena.allocate(8));
        }

        TiffinException[][] out = pool.exchange(Opcode.DATA_READ, List.of(
                new BlockingConnectionPool.Batch(endpoint(slow), six, null, into),
                new BlockingConnectionPool.Batch(endpoint(fast), List.of(six.getFirst()), null, List.of(arena.allocate(8)))));

        assertThat(out[0]).as("the slow server answered each request 150 ms after the last").containsOnlyNulls();
        assertThat(out[1]).as("the fast server answered at once").containsOnlyNulls();
    }

    /**
     * Reads wait no longer than their leases: a stalled server's answers are given up at the lease's end
     * ({@code LEASE_EXPIRED}), not after the much longer RPC timeout, and the pool goes on working.
     */
    @Test
    void answersAreAwaitedUntilTheLeaseEndsNotTheWholeRpcTimeout() throws Exception {
        ScheduledExecutorService delay = Executors.newSingleThreadScheduledExecutor();
        open.add(delay::shutdownNow);
        TransportServer stalled = server("stalled", settings());
        stalled.register(Opcode.DATA_READ, (r, resp) -> delay.schedule(() -> resp.ok(Empty.getDefaultInstance(),
                Unpooled.wrappedBuffer(new byte[8])), 3, TimeUnit.SECONDS), null);
        stalled.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("t", settings().withRpcTimeout(Duration.ofSeconds(20)), "p");
        open.add(pool);
        Arena arena = Arena.ofShared();
        open.add(arena);

        long start = System.nanoTime();
        TiffinException[][] out = pool.exchange(Opcode.DATA_READ, List.of(new BlockingConnectionPool.Batch(
                endpoint(stalled), List.of(DataRequest.newBuilder().setLength(8).build()), null,
                List.of(arena.allocate(8)))), start + TimeUnit.MILLISECONDS.toNanos(300));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(out[0][0]).isNotNull();
        assertThat(out[0][0].code()).isEqualTo(ErrorCode.LEASE_EXPIRED);
        assertThat(out[0][0].getMessage()).contains("before the read lease ended");
        assertThat(tookMs).as("given up at the lease's end, not after the server's 3 s").isLessThan(2500);
    }

    @Test
    void aDestinationThatCannotTakeTheBytesFailsTheBatchAndClosesItsConnection() {
        TransportServer server = server("srv", settings());
        server.register(Opcode.DATA_READ, (r, resp) -> resp.ok(Empty.getDefaultInstance(),
                Unpooled.wrappedBuffer(new byte[32 * 1024])), null);
        server.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("t", settings(), "p");
        open.add(pool);
        Arena arena = Arena.ofShared();
        open.add(arena);
        MemorySegment readOnly = arena.allocate(32 * 1024).asReadOnly();

        TiffinException[][] out = pool.exchange(Opcode.DATA_READ, List.of(new BlockingConnectionPool.Batch(
                endpoint(server), List.of(DataRequest.newBuilder().setLength(32 * 1024).build()), null, List.of(readOnly))));

        assertThat(out[0][0]).isNotNull();
        assertThat(out[0][0].code()).isEqualTo(ErrorCode.TRANSFER_FAIL);
        assertThat(out[0][0].getMessage()).contains("check the destination buffers");
        assertThat(pool.idleCount(endpoint(server))).as("the half-read connection is not lent again").isZero();
        // the pool still works
        MemorySegment dst = arena.allocate(32 * 1024);
        TiffinException[][] again = pool.exchange(Opcode.DATA_READ, List.of(new BlockingConnectionPool.Batch(
                endpoint(server), List.of(DataRequest.newBuilder().setLength(32 * 1024).build()), null, List.of(dst))));
        assertThat(again[0]).containsOnlyNulls();
    }
}
