package io.tiffin.core.transport;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * CPU time of a server's event loop per MiB of DATA_WRITE bulk, copied by the handler (no placer: the path
 * without placement) against placed by the socket: ThreadMXBean time of the one I/O thread, which does not
 * depend on how loaded the machine is. Alternates the two, several rounds. Run with {@code -Dtiffin.bench=true}.
 */
@EnabledIfSystemProperty(named = "tiffin.bench", matches = "true")
class BulkPlacementCpuBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Test
    void cpuPerMiB() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment region = arena.allocate(64 << 20, 64);
            for (int round = 0; round < 3; round++) {
                for (boolean placed : new boolean[] {false, true}) {
                    for (int size : new int[] {1 << 20, 32 << 20}) {
                        int count = size == 1 << 20 ? 400 : 16;
                        double usPerMiB = run(region, placed, size, count);
                        System.out.printf("BENCH round=%d %s size=%dMiB count=%d eventLoopCpu=%.1f us/MiB%n", round,
                                placed ? "placed" : "copied", size >> 20, count, usPerMiB);
                    }
                }
            }
        }
    }

    private static double run(MemorySegment region, boolean placed, int size, int count) throws Exception {
        String name = "bench-" + (placed ? "placed" : "copied") + "-" + size;
        try (TransportServer server = new TransportServer(name, TransportSettings.defaults().withIoThreads(1)
                .withHandshakeTimeout(Duration.ofSeconds(5)))) {
            server.register(Opcode.DATA_WRITE, (request, responder) -> {
                DataRequest req = request.parseControl(DataRequest.parser());
                if (!request.bulkPlaced()) {
                    request.bulk().getBytes(request.bulk().readerIndex(),
                            region.asSlice(req.getOffset(), req.getLength()).asByteBuffer());
                }
                responder.ok(Empty.getDefaultInstance());
            }, null, placed ? (control, bulkLength) -> region.asSlice(parse(control).getOffset(), bulkLength) : null);
            server.start("127.0.0.1", 0);
            try (RawPeer peer = new RawPeer(server.localAddress())) {
                assertThat(peer.hello("")).isEqualTo(ErrorCode.OK);
                byte[] bulk = new byte[size];
                new SplittableRandom(size).nextBytes(bulk);
                byte[] frame = peer.request(Opcode.DATA_WRITE, DataRequest.newBuilder().setSegment("s").setOffset(0)
                        .setLength(size).build(), Unpooled.wrappedBuffer(bulk));
                for (int i = 0; i < 3; i++) { // warm-up
                    peer.send(frame);
                    assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
                }
                long thread = ioThread(name);
                long before = THREADS.getThreadCpuTime(thread);
                for (int i = 0; i < count; i++) {
                    peer.send(frame);
                    assertThat(peer.readAnswer().status()).isEqualTo(ErrorCode.OK);
                }
                long cpu = THREADS.getThreadCpuTime(thread) - before;
                return cpu / 1000.0 / ((double) count * size / (1 << 20));
            }
        }
    }

    private static DataRequest parse(io.netty.buffer.ByteBuf control) {
        try {
            return DataRequest.parseFrom(control.nioBuffer());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static long ioThread(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("tiffin-" + name + "-io")).mapToLong(Thread::threadId)
                .findFirst().orElseThrow();
    }
}
