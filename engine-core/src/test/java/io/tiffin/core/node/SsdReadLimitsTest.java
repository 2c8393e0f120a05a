package io.tiffin.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.api.spi.storage.StorageListener;
import io.tiffin.api.spi.storage.StorageStats;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.ServerLimits;
import io.tiffin.core.transport.proto.SsdReadRequest;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bounds of a node's SSD reads ({@code DATA_READ_SSD}): bytes per request (a frame's worth), requests
 * waiting ({@code node.ssd-read-queue}) and bytes in memory at once ({@code node.ssd-read-memory}).
 */
class SsdReadLimitsTest {
    private static final long OBJECT = 1 << 20;
    private final ExecutorService io = Executors.newFixedThreadPool(2);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger reading = new AtomicInteger();

    @AfterEach
    void tearDown() {
        release.countDown();
        io.shutdownNow();
    }

    /** Every key holds a 1 MiB object; reads wait until the test releases them. */
    private final StorageBackend backend = new StorageBackend() {
        @Override
        public void writeBatch(Map<String, MemorySegment> objects) {
        }

        @Override
        public OptionalLong size(String key) {
            return OptionalLong.of(OBJECT);
        }

        @Override
        public long read(String key, MemorySegment destination) {
            if (key.equals("broken")) {
                throw new NoClassDefFoundError("p/MissingDependency"); // a backend plugin missing a jar of its own
            }
            reading.incrementAndGet();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
            destination.fill((byte) 1);
            return OBJECT;
        }

        @Override
        public boolean remove(String key) {
            return false;
        }

        @Override
        public void scan(BiConsumer<String, Long> visitor) {
        }

        @Override
        public long usedBytes() {
            return 0;
        }

        @Override
        public long capacityBytes() {
            return 1L << 40;
        }

        @Override
        public void listener(StorageListener listener) {
        }

        @Override
        public StorageStats stats() {
            return new StorageStats(0, 0, 0, 0, 0, 0, 0);
        }

        @Override
        public void close() {
        }
    };

    /** Records the one answer of a request, releasing its bulk buffer. */
    private static final class Answer implements Responder {
        final AtomicReference<Object> outcome = new AtomicReference<>();

        @Override
        public void ok(MessageLite control) {
            outcome.set("ok");
        }

        @Override
        public void ok(MessageLite control, ByteBuf bulk) {
            outcome.set("ok " + bulk.readableBytes());
            bulk.release();
        }

        @Override
        public void fail(ErrorCode code, String message) {
            outcome.set(code + ": " + message);
        }

        @Override
        public boolean isAnswered() {
            return outcome.get() != null;
        }
    }

    private static Frame request(String... keys) {
        return Frame.request(Opcode.DATA_READ_SSD, 1, SsdReadRequest.newBuilder().addAllKeys(List.of(keys)).build(),
                null);
    }

    private void serve(SsdReadService reads, Answer answer, String... keys) {
        Frame f = request(keys);
        try {
            reads.serve(f, answer);
        } finally {
            f.release();
        }
    }

    @Test
    void aRequestForMoreThanAFrameIsRefused() {
        release.countDown();
        SsdReadService reads = new SsdReadService(backend, null, io, ServerLimits.defaults(), 3 << 20);
        Answer answer = new Answer();
        serve(reads, answer, "a", "b", "c"); // 3 MiB, over a 3 MiB frame less its headroom
        await().atMost(Duration.ofSeconds(5)).until(answer::isAnswered);
        assertThat((String) answer.outcome.get()).startsWith("INVALID_PARAMS").contains("transport.max-frame-size");
        Answer fits = new Answer();
        serve(reads, fits, "a", "b");
        await().atMost(Duration.ofSeconds(5)).until(fits::isAnswered);
        assertThat(fits.outcome.get()).isEqualTo("ok " + 2 * OBJECT);
    }

    @Test
    void requestsBeyondTheQueueAreRefusedAndMemoryStaysWithinItsBudget() throws Exception {
        // a budget of 1 MiB: the second request waits for the first one's bytes, whatever the I/O threads
        SsdReadService reads = new SsdReadService(backend, null, io,
                ServerLimits.defaults().withSsdReads(OBJECT, 3), 64 << 20);
        Answer first = new Answer();
        Answer second = new Answer();
        Answer third = new Answer();
        serve(reads, first, "a");
        serve(reads, second, "b");
        serve(reads, third, "c");
        await().atMost(Duration.ofSeconds(5)).until(() -> reading.get() == 1);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> reading.get() == 1
                && reads.inMemory() == OBJECT);
        assertThatThrownBy(() -> serve(reads, new Answer(), "d"))
                .isInstanceOfSatisfying(TiffinException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS))
                .hasMessageContaining("node.ssd-read-queue");
        release.countDown();
        for (Answer a : List.of(first, second, third)) {
            await().atMost(Duration.ofSeconds(5)).until(a::isAnswered);
            assertThat(a.outcome.get()).isEqualTo("ok " + OBJECT);
        }
        assertThat(reads.inMemory()).isZero();
        io.shutdown();
        assertThat(io.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
    }

    /**
     * A backend read that throws an Error (a plugin whose dependency jar is missing) is answered FILE_READ_FAIL and
     * its memory given back; the request went unanswered until the client's RPC timeout, and its I/O thread died.
     */
    @Test
    void aBackendReadThatThrowsAnErrorIsAnsweredAndItsMemoryFreed() {
        release.countDown();
        SsdReadService reads = new SsdReadService(backend, null, io, ServerLimits.defaults(), 64 << 20);
        Answer answer = new Answer();
        serve(reads, answer, "broken");
        await().atMost(Duration.ofSeconds(5)).until(answer::isAnswered);
        assertThat((String) answer.outcome.get()).startsWith("FILE_READ_FAIL").contains("p/MissingDependency");
        assertThat(reads.inMemory()).isZero();
        Answer next = new Answer();
        serve(reads, next, "a");
        await().atMost(Duration.ofSeconds(5)).until(next::isAnswered);
        assertThat(next.outcome.get()).isEqualTo("ok " + OBJECT);
    }
}
