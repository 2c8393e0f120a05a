package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.time.Duration;
import java.util.Objects;

/**
 * What a server accepts from its peers: connections, frames before and after the handshake, how long a
 * connection may idle or a frame take to arrive, how many answer bytes may wait for a peer that does not
 * read, and how much one request may ask (keys per batch, bytes of a listing, bytes of SSD reads, bytes
 * hard-pinned). Each is a configuration key, named with its field below; a refusal names the key.
 * {@link TransportServer} enforces the connection and frame limits for every server; the master and
 * nodes enforce the request limits in their handlers; another server (a gateway) can reuse the
 * connection limits with {@link ConnectionGuards}.
 *
 * <p>Thread-safe (immutable); holds no buffers.
 *
 * @param maxHandshakeFrameSize largest frame before the handshake completed
 *     ({@code transport.max-handshake-frame-size})
 * @param idleTimeout a connection that neither sends nor receives a byte for this long is closed; zero =
 *     never ({@code transport.idle-timeout})
 * @param frameTimeout a frame must arrive whole within this time of its first byte; zero = no limit
 *     ({@code transport.frame-timeout})
 * @param maxConnections connections a server holds at once ({@code transport.max-connections})
 * @param maxConnectionsPerAddress connections a server holds at once from one IP address
 *     ({@code transport.max-connections-per-address})
 * @param writeBufferLimit answer bytes waiting to be sent to one peer above which the server stops reading
 *     that peer's requests, until a quarter of it is left ({@code transport.write-buffer-limit})
 * @param maxBatchKeys keys one batch request may name ({@code transport.max-batch-keys})
 * @param maxQueryAnswerSize bytes of one listing or regex lookup answer
 *     ({@code transport.max-query-answer-size})
 * @param ssdReadMemory bytes of SSD reads a node holds in memory at once ({@code node.ssd-read-memory})
 * @param ssdReadQueue SSD read requests a node keeps waiting; more are refused ({@code node.ssd-read-queue})
 * @param maxHardPinnedShare share of the mounted capacity hard-pinned objects may take
 *     ({@code master.max-hard-pinned-share})
 */
public record ServerLimits(int maxHandshakeFrameSize, Duration idleTimeout, Duration frameTimeout, int maxConnections,
                           int maxConnectionsPerAddress, int writeBufferLimit, int maxBatchKeys, int maxQueryAnswerSize,
                           long ssdReadMemory, int ssdReadQueue, double maxHardPinnedShare) {

    /** Largest listing answer: below the 16 MiB control-part limit every peer enforces, with room to spare. */
    public static final int MAX_QUERY_ANSWER_SIZE = FrameCodec.MAX_CONTROL_SIZE - 64 * 1024;

    public ServerLimits {
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(frameTimeout, "frameTimeout");
        check(maxHandshakeFrameSize >= 1024, "transport.max-handshake-frame-size", maxHandshakeFrameSize, ">= 1KiB");
        check(!idleTimeout.isNegative(), "transport.idle-timeout", idleTimeout, ">= 0 (0 = never)");
        check(!frameTimeout.isNegative(), "transport.frame-timeout", frameTimeout, ">= 0 (0 = no limit)");
        check(maxConnections >= 1, "transport.max-connections", maxConnections, ">= 1");
        check(maxConnectionsPerAddress >= 1, "transport.max-connections-per-address", maxConnectionsPerAddress, ">= 1");
        check(writeBufferLimit >= 4096, "transport.write-buffer-limit", writeBufferLimit, ">= 4KiB");
        check(maxBatchKeys >= 1, "transport.max-batch-keys", maxBatchKeys, ">= 1");
        check(maxQueryAnswerSize >= 1024 && maxQueryAnswerSize <= MAX_QUERY_ANSWER_SIZE,
                "transport.max-query-answer-size", maxQueryAnswerSize, "1KiB to " + MAX_QUERY_ANSWER_SIZE + " bytes");
        check(ssdReadMemory >= 1, "node.ssd-read-memory", ssdReadMemory, ">= 1");
        check(ssdReadQueue >= 1, "node.ssd-read-queue", ssdReadQueue, ">= 1");
        check(maxHardPinnedShare >= 0 && maxHardPinnedShare <= 1, "master.max-hard-pinned-share", maxHardPinnedShare,
                "0 to 1");
    }

    private static void check(boolean ok, String key, Object value, String expected) {
        if (!ok) {
            throw new IllegalArgumentException(key + " = " + value + " (expected: " + expected + ")");
        }
    }

    /**
     * 64 KiB before the handshake, 10 min idle, 60 s per frame, 10,000 connections and 1,000 per address,
     * 4 MiB of waiting answers per peer, 100,000 keys per batch, 15 MiB listings, 256 MiB and 256 requests
     * of SSD reads, half the capacity hard-pinned.
     */
    public static ServerLimits defaults() {
        return new ServerLimits(64 * 1024, Duration.ofMinutes(10), Duration.ofSeconds(60), 10_000, 1_000, 4 << 20,
                100_000, 15 << 20, 256L << 20, 256, 0.5);
    }

    public ServerLimits withMaxHandshakeFrameSize(int v) {
        return new ServerLimits(v, idleTimeout, frameTimeout, maxConnections, maxConnectionsPerAddress,
                writeBufferLimit, maxBatchKeys, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue, maxHardPinnedShare);
    }

    public ServerLimits withIdleTimeout(Duration v) {
        return new ServerLimits(maxHandshakeFrameSize, v, frameTimeout, maxConnections, maxConnectionsPerAddress,
                writeBufferLimit, maxBatchKeys, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue, maxHardPinnedShare);
    }

    public ServerLimits withFrameTimeout(Duration v) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, v, maxConnections, maxConnectionsPerAddress,
                writeBufferLimit, maxBatchKeys, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue, maxHardPinnedShare);
    }

    public ServerLimits withConnections(int total, int perAddress) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, total, perAddress, writeBufferLimit,
                maxBatchKeys, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue, maxHardPinnedShare);
    }

    public ServerLimits withWriteBufferLimit(int v) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, maxConnections,
                maxConnectionsPerAddress, v, maxBatchKeys, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue,
                maxHardPinnedShare);
    }

    public ServerLimits withMaxBatchKeys(int v) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, maxConnections,
                maxConnectionsPerAddress, writeBufferLimit, v, maxQueryAnswerSize, ssdReadMemory, ssdReadQueue,
                maxHardPinnedShare);
    }

    public ServerLimits withMaxQueryAnswerSize(int v) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, maxConnections,
                maxConnectionsPerAddress, writeBufferLimit, maxBatchKeys, v, ssdReadMemory, ssdReadQueue,
                maxHardPinnedShare);
    }

    public ServerLimits withSsdReads(long memory, int queue) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, maxConnections,
                maxConnectionsPerAddress, writeBufferLimit, maxBatchKeys, maxQueryAnswerSize, memory, queue,
                maxHardPinnedShare);
    }

    public ServerLimits withMaxHardPinnedShare(double v) {
        return new ServerLimits(maxHandshakeFrameSize, idleTimeout, frameTimeout, maxConnections,
                maxConnectionsPerAddress, writeBufferLimit, maxBatchKeys, maxQueryAnswerSize, ssdReadMemory,
                ssdReadQueue, v);
    }

    /**
     * Checks the key count of a batch request.
     *
     * @throws TiffinException {@code INVALID_PARAMS} naming the limit when {@code keys} exceeds it
     */
    public void checkBatch(Opcode opcode, int keys) {
        if (keys > maxBatchKeys) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a " + opcode + " request of " + keys + " keys exceeds"
                    + " transport.max-batch-keys = " + maxBatchKeys + " on this server; split the batch");
        }
    }

    /**
     * Checks a put asking for a hard pin of {@code bytes} while hard-pinned objects take {@code pinnedBytes} of a
     * mounted capacity of {@code capacityBytes} (checked at put start: puts racing each other may overshoot by their
     * own sizes).
     *
     * @throws TiffinException {@code INVALID_PARAMS} when they would take more than {@link #maxHardPinnedShare}
     */
    public void checkHardPin(long bytes, long capacityBytes, long pinnedBytes) {
        long cap = (long) (maxHardPinnedShare * capacityBytes);
        if (bytes > cap - pinnedBytes) {
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "a hard pin of " + bytes + " more bytes would take"
                    + " hard-pinned objects past master.max-hard-pinned-share = " + maxHardPinnedShare
                    + " of the capacity (" + pinnedBytes + " of " + cap + " bytes pinned); put without hard pin, remove"
                    + " pinned objects, or raise the share");
        }
    }
}
