package io.tiffin.core.node;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import io.tiffin.api.spi.storage.StorageBackend;
import io.tiffin.core.transport.Frame;
import io.tiffin.core.transport.Responder;
import io.tiffin.core.transport.ServerLimits;
import io.tiffin.core.transport.proto.SsdReadReply;
import io.tiffin.core.transport.proto.SsdReadRequest;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Serves clients' reads of SSD-only objects ({@code DATA_READ_SSD}): reads the asked keys from the
 * backend on the tier's I/O pool, never on a Netty event loop, and answers their bytes back to back, a
 * size per key (-1 for a key not held or not readable).
 *
 * <p><b>Bounds.</b> One request may ask for at most a frame's worth of bytes (its answer must fit one);
 * at most {@code node.ssd-read-queue} requests wait or run at once (more are refused, {@code
 * UNAVAILABLE_IN_CURRENT_STATUS}); and the answers being filled hold at most {@code node.ssd-read-memory}
 * bytes: an I/O thread waits for room before it allocates (one request alone may always proceed, so a
 * budget smaller than a request cannot stall it).
 *
 * <p>A key the node does not hold though the master sent a client for it (a notice the master never got,
 * or one still on its way) is queued as a lost copy's notice ({@link EvictionNotices}), so the listing
 * does not stay wrong until the node expires.
 *
 * <p>Thread-safe. Owns nothing: the I/O pool and the backend belong to its {@link NodeStorageTier}; each
 * answer's buffer goes to the responder.
 */
final class SsdReadService {
    private static final Logger LOG = LogManager.getLogger(SsdReadService.class);

    private final StorageBackend backend;
    private final EvictionNotices notices;
    private final Executor io;
    private final ServerLimits limits;
    /** Most bytes one request may ask for: its answer must fit one frame. */
    private final long maxRequestBytes;
    /** Requests waiting or running. */
    private final AtomicInteger queued = new AtomicInteger();
    /** Bytes of the answers being filled; guarded by this. */
    private long inMemory;

    final LongAdder reads = new LongAdder();

    SsdReadService(StorageBackend backend, EvictionNotices notices, Executor io, ServerLimits limits, int maxFrameSize) {
        this.backend = backend;
        this.notices = notices;
        this.io = io;
        this.limits = limits;
        this.maxRequestBytes = Math.max(0, maxFrameSize - 64 * 1024L);
    }

    /** {@code DATA_READ_SSD}: parses the request here, reads and answers on the I/O pool. */
    void serve(Frame request, Responder responder) {
        SsdReadRequest req = request.parseControl(SsdReadRequest.parser());
        if (queued.incrementAndGet() > limits.ssdReadQueue()) {
            queued.decrementAndGet();
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "this node has "
                    + limits.ssdReadQueue() + " SSD reads waiting (node.ssd-read-queue); retry later");
        }
        try {
            io.execute(() -> {
                try {
                    read(req.getKeysList(), responder);
                } catch (TiffinException e) {
                    responder.fail(e.code(), e.getMessage());
                } catch (RuntimeException | LinkageError | StackOverflowError e) {
                    // the backend is plugin code: an Error of a missing or corrupt jar of its is a failed read too,
                    // answered (else the client waited out its RPC timeout and the I/O thread died)
                    LOG.warn("SSD read failed", e);
                    responder.fail(ErrorCode.FILE_READ_FAIL, "SSD read failed: " + e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    responder.fail(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the node is stopping; retry elsewhere");
                } finally {
                    queued.decrementAndGet();
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            queued.decrementAndGet();
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the node's SSD tier is stopping", e);
        }
    }

    /** Waits until {@code bytes} more fit {@code node.ssd-read-memory} (or nothing else is in memory). */
    private synchronized void reserve(long bytes) throws InterruptedException {
        while (inMemory > 0 && inMemory + bytes > limits.ssdReadMemory()) {
            wait();
        }
        inMemory += bytes;
    }

    private synchronized void free(long bytes) {
        inMemory -= bytes;
        notifyAll();
    }

    /** Bytes of SSD answers being filled now; for tests. */
    synchronized long inMemory() {
        return inMemory;
    }

    private void read(List<String> keys, Responder responder) throws InterruptedException {
        long[] sizes = new long[keys.size()];
        long total = 0;
        List<String> missing = null;
        for (int i = 0; i < keys.size(); i++) {
            OptionalLong s = backend.size(keys.get(i));
            sizes[i] = s.isPresent() ? s.getAsLong() : -1;
            total += Math.max(0, sizes[i]);
            if (s.isEmpty()) {
                if (missing == null) {
                    missing = new ArrayList<>();
                }
                missing.add(keys.get(i));
            }
        }
        if (missing != null) {
            // The master sent a client here for copies this node does not hold: a notice it never
            // got (a crash before it went out) or one still on its way. Tell it (again), as a loss:
            // skipped if the key is written again before it goes.
            notices.queue(missing, true);
        }
        if (total > maxRequestBytes) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "SSD read of " + total + " bytes in one request, more"
                    + " than one answer frame holds (" + maxRequestBytes + " bytes, transport.max-frame-size less 64"
                    + " KiB); ask for fewer keys per request");
        }
        reserve(total);
        try {
            readReserved(keys, sizes, (int) total, responder);
        } finally {
            free(total);
        }
    }

    /** Reads the keys of sizes {@code sizes} ({@code total} bytes, reserved) and answers. */
    private void readReserved(List<String> keys, long[] sizes, int total, Responder responder) {
        ByteBuf out = Unpooled.directBuffer(total);
        SsdReadReply.Builder reply = SsdReadReply.newBuilder();
        try {
            List<String> present = new ArrayList<>();
            List<MemorySegment> dsts = new ArrayList<>();
            MemorySegment whole = MemorySegment.ofBuffer(out.nioBuffer(0, total));
            int off = 0;
            for (int i = 0; i < keys.size(); i++) {
                if (sizes[i] > 0) {
                    present.add(keys.get(i));
                    dsts.add(whole.asSlice(off, sizes[i]));
                    off += (int) sizes[i];
                }
            }
            long[] read = backend.readBatch(present, dsts);
            // Only what was read goes out, back to back. A key whose read failed (a bad checksum, a
            // file cut short, removed or replaced since its size was taken) answers -1 and takes no
            // room: the keys after it stay where the client looks for them, and no byte of `out`
            // that nothing wrote (native memory, not zeroed) is sent.
            int end = 0;
            int p = 0;
            for (int i = 0; i < keys.size(); i++) {
                if (sizes[i] <= 0) {
                    reply.addSizes(sizes[i]);
                    continue;
                }
                MemorySegment slot = dsts.get(p);
                long r = read[p++];
                if (r != sizes[i]) {
                    reply.addSizes(-1);
                    continue;
                }
                long at = slot.address() - whole.address();
                if (at != end) {
                    MemorySegment.copy(whole, at, whole, end, r); // overlap-safe
                }
                end += (int) r;
                reply.addSizes(r);
            }
            out.writerIndex(end);
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
        reads.add(keys.size());
        responder.ok(reply.build(), out);
    }
}
