package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tiffin.api.TiffinException;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import io.tiffin.core.transport.proto.PingReply;
import io.tiffin.core.transport.proto.PingRequest;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Large writes to several servers in one {@link BlockingConnectionPool#exchange} go out in parallel: a
 * server that reads nothing for a while (its only event loop held) does not hold back the write to another
 * server listed after it, which a write sent in turn would (32 MiB do not fit the loopback socket buffers):
 * the stalled server reads again only once the other has the whole value.
 */
class BlockingConnectionPoolParallelSendTest {
    private static final int VALUE = 32 << 20;
    /** Longest stall: the prompt server's write ends it earlier when it arrives during the stall. */
    private static final long STALL_SECONDS = 30;

    private final List<AutoCloseable> open = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        arena.close();
    }

    private static TransportSettings settings() {
        return TransportSettings.defaults().withIoThreads(1).withRpcTimeout(Duration.ofSeconds(STALL_SECONDS * 2));
    }

    /**
     * A server whose DATA_WRITE copies the bytes into {@code store}, notes when (nanoTime) in {@code at} and counts
     * {@code wrote} down.
     */
    private TransportServer writable(String name, MemorySegment store, AtomicLong at, CountDownLatch wrote) {
        TransportServer s = new TransportServer(name, settings());
        open.add(s);
        s.register(Opcode.DATA_WRITE, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            request.bulk().getBytes(request.bulk().readerIndex(),
                    store.asSlice(req.getOffset(), req.getLength()).asByteBuffer());
            at.set(System.nanoTime());
            wrote.countDown();
            responder.ok(Empty.getDefaultInstance());
        }, null);
        return s;
    }

    private static String endpoint(TransportServer s) {
        return "127.0.0.1:" + s.localAddress().getPort();
    }

    @Test
    void aStalledServerDoesNotHoldBackTheWriteToTheNext() throws Exception {
        MemorySegment value = arena.allocate(VALUE, 64);
        for (long off = 0; off < VALUE; off += 8) {
            value.set(ValueLayout.JAVA_LONG_UNALIGNED, off, off * 31 + 7);
        }
        MemorySegment stalledStore = arena.allocate(VALUE, 64);
        MemorySegment promptStore = arena.allocate(VALUE, 64);
        AtomicLong stalledWrote = new AtomicLong();
        AtomicLong promptWrote = new AtomicLong();
        AtomicLong stallEnded = new AtomicLong();
        CountDownLatch stalling = new CountDownLatch(1);
        CountDownLatch promptHasIt = new CountDownLatch(1);
        TransportServer stalled = writable("stalled", stalledStore, stalledWrote, new CountDownLatch(1));
        stalled.register(Opcode.PING, (request, responder) -> {
            stalling.countDown();
            try {
                // the injected fault: the server's only event loop reads nothing until the other server has the
                // whole value (never, if it is sent only after this server took its own), or for 30 s at most
                promptHasIt.await(STALL_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stallEnded.set(System.nanoTime());
            responder.ok(PingReply.getDefaultInstance());
        }, null);
        stalled.start("127.0.0.1", 0);
        TransportServer prompt = writable("prompt", promptStore, promptWrote, promptHasIt);
        prompt.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("parallel", settings(), "test-peer");
        open.add(pool);
        Thread pinger = Thread.ofVirtual().start(() -> pool.call(endpoint(stalled), Opcode.PING,
                PingRequest.getDefaultInstance(), PingReply.parser()));
        assertThat(stalling.await(10, TimeUnit.SECONDS)).isTrue();

        DataRequest write = DataRequest.newBuilder().setOffset(0).setLength(VALUE).build();
        TiffinException[][] outcome = pool.exchange(Opcode.DATA_WRITE, List.of(
                new BlockingConnectionPool.Batch(endpoint(stalled), List.of(write), List.of(value), null),
                new BlockingConnectionPool.Batch(endpoint(prompt), List.of(write), List.of(value), null)));
        pinger.join();

        assertThat(outcome[0]).containsOnlyNulls();
        assertThat(outcome[1]).containsOnlyNulls();
        assertThat(stalledStore.mismatch(value)).isEqualTo(-1);
        assertThat(promptStore.mismatch(value)).isEqualTo(-1);
        assertThat(promptWrote.get() - stallEnded.get())
                .as("the prompt server had the whole value before the stalled one read again").isNegative();
        assertThat(stalledWrote.get() - stallEnded.get()).isPositive();
    }

    /** Small writes stay on the caller's thread, in turn; the outcome is the same. */
    @Test
    void smallWritesToSeveralServersAllArrive() {
        MemorySegment value = arena.allocate(4096, 64).fill((byte) 5);
        MemorySegment a = arena.allocate(4096, 64);
        MemorySegment b = arena.allocate(4096, 64);
        TransportServer first = writable("first", a, new AtomicLong(), new CountDownLatch(1));
        first.start("127.0.0.1", 0);
        TransportServer second = writable("second", b, new AtomicLong(), new CountDownLatch(1));
        second.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("small", settings(), "test-peer");
        open.add(pool);
        DataRequest write = DataRequest.newBuilder().setOffset(0).setLength(4096).build();
        TiffinException[][] outcome = pool.exchange(Opcode.DATA_WRITE, List.of(
                new BlockingConnectionPool.Batch(endpoint(first), List.of(write), List.of(value), null),
                new BlockingConnectionPool.Batch(endpoint(second), List.of(write), List.of(value), null)));
        assertThat(outcome[0]).containsOnlyNulls();
        assertThat(outcome[1]).containsOnlyNulls();
        assertThat(a.mismatch(value)).isEqualTo(-1);
        assertThat(b.mismatch(value)).isEqualTo(-1);
    }

    /**
     * A send that fails with something other than a transport error (here a value whose memory was freed, sent
     * from its own thread) is thrown to the caller, and the connections of that call are not reused half-written:
     * the next exchange on the same pool succeeds.
     */
    @Test
    void aLargeValueFreedBeforeItsParallelSendIsThrownAndThePoolStaysUsable() {
        MemorySegment a = arena.allocate(1 << 20, 64);
        MemorySegment b = arena.allocate(1 << 20, 64);
        TransportServer first = writable("first", a, new AtomicLong(), new CountDownLatch(1));
        first.start("127.0.0.1", 0);
        TransportServer second = writable("second", b, new AtomicLong(), new CountDownLatch(1));
        second.start("127.0.0.1", 0);
        BlockingConnectionPool pool = new BlockingConnectionPool("freed", settings(), "test-peer");
        open.add(pool);
        Arena freedArena = Arena.ofShared();
        MemorySegment freed = freedArena.allocate(1 << 20, 64);
        freedArena.close();
        MemorySegment live = arena.allocate(1 << 20, 64).fill((byte) 9);
        DataRequest write = DataRequest.newBuilder().setOffset(0).setLength(1 << 20).build();
        assertThatThrownBy(() -> pool.exchange(Opcode.DATA_WRITE, List.of(
                new BlockingConnectionPool.Batch(endpoint(first), List.of(write), List.of(freed), null),
                new BlockingConnectionPool.Batch(endpoint(second), List.of(write), List.of(live), null))))
                .isInstanceOf(IllegalStateException.class);
        TiffinException[][] outcome = pool.exchange(Opcode.DATA_WRITE, List.of(
                new BlockingConnectionPool.Batch(endpoint(first), List.of(write), List.of(live), null),
                new BlockingConnectionPool.Batch(endpoint(second), List.of(write), List.of(live), null)));
        assertThat(outcome[0]).containsOnlyNulls();
        assertThat(outcome[1]).containsOnlyNulls();
        assertThat(a.mismatch(live)).isEqualTo(-1);
        assertThat(b.mismatch(live)).isEqualTo(-1);
    }
}
