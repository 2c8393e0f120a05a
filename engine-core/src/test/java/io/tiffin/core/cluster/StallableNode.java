package io.tiffin.core.cluster;

import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.core.transport.Opcode;
import io.tiffin.core.transport.TransportServer;
import io.tiffin.core.transport.TransportSettings;
import io.tiffin.core.transport.proto.DataRequest;
import io.tiffin.core.transport.proto.Empty;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in node serving DATA_WRITE / DATA_READ from a heap array, with one I/O thread; the next read can block that
 * thread ({@link #stallNextReadMillis}), as a long GC pause or a stopped process would. Tests mount it at the master
 * directly.
 *
 * <p>Thread-safe (atomics; the memory under its own lock).
 */
final class StallableNode implements AutoCloseable {
    final TransportServer server = new TransportServer("stallable-node", TransportSettings.defaults().withIoThreads(1));
    final byte[] memory = new byte[1 << 20];
    final AtomicLong stallNextReadMillis = new AtomicLong();
    final AtomicBoolean stalling = new AtomicBoolean();

    StallableNode() {
        server.register(Opcode.DATA_WRITE, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            ByteBuf bulk = request.bulk();
            synchronized (memory) {
                bulk.getBytes(bulk.readerIndex(), memory, (int) req.getOffset(), (int) req.getLength());
            }
            responder.ok(Empty.getDefaultInstance());
        }, null);
        server.register(Opcode.DATA_READ, (request, responder) -> {
            DataRequest req = request.parseControl(DataRequest.parser());
            // set before the stall request is taken: awaitNotStalling, which reads the request first,
            // cannot see "no request" and "not stalling" while a stall is starting
            stalling.set(true);
            try {
                long stall = stallNextReadMillis.getAndSet(0);
                if (stall > 0) {
                    // The fault itself, not a wait for a condition: blocks the node's only event loop,
                    // so HELLOs of new connections wait too.
                    Thread.sleep(stall);
                }
            } finally {
                stalling.set(false);
            }
            byte[] out;
            synchronized (memory) {
                out = Arrays.copyOfRange(memory, (int) req.getOffset(), (int) (req.getOffset() + req.getLength()));
            }
            responder.ok(Empty.getDefaultInstance(), Unpooled.wrappedBuffer(out));
        }, null);
        server.start("127.0.0.1", 0);
    }

    String endpoint() {
        return "127.0.0.1:" + server.localAddress().getPort();
    }

    /** Waits until the stall asked for has been served and is over. */
    void awaitNotStalling() {
        await("the node's stall to end").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> stallNextReadMillis.get() == 0 && !stalling.get()); // this order: see DATA_READ
    }

    @Override
    public void close() {
        server.close();
    }
}
