package io.tiffin.core.transport;

import io.netty.buffer.ByteBuf;
import java.lang.foreign.MemorySegment;

/**
 * Names the memory a request's bulk belongs in, so that a plaintext connection reads the socket straight into
 * it: the kernel copies the bytes there, instead of into Netty's buffers first and then, by the handler, into
 * their destination. Registered per opcode with {@link TransportServer#register(Opcode, RequestHandler,
 * java.util.concurrent.Executor, BulkPlacer)}; asked once per frame, when the header and control part of a
 * request of at least {@value FrameCodec#PRESIZE_THRESHOLD} bytes of bulk have arrived and its bulk has not,
 * on the connection's event loop (it must not block).
 *
 * <p>A placer checks what the handler would check before writing (addressing, permissions, length) and
 * returns null when anything is wrong, or throws: the frame is then received the usual way and the handler
 * answers the refusal as it always did, the destination untouched. It is asked again, with the same arguments,
 * before further reads into the destination (at most once a millisecond, {@link BulkPlacement#RECHECK_NANOS}); when it then refuses (or names other memory), the rest of
 * the bulk is discarded and the request answered with its {@link io.tiffin.api.TiffinException}'s code and
 * message, the handler never running. The handler runs for a placed frame (it sees {@link
 * Frame#bulkPlaced()}) after the last bulk byte arrived; it repeats its checks. A connection closed before
 * the bulk is complete delivers no frame, so the handler never runs for it, though part of the destination
 * may hold part of the bulk.
 *
 * <p>Implementations must be thread-safe: every connection's event loop may call one.
 */
@FunctionalInterface
public interface BulkPlacer {
    /**
     * The native memory of exactly {@code bulkLength} bytes that the bulk of the request whose control part is
     * {@code control} goes to, or null to receive it into Netty buffers (the handler then decides).
     *
     * @param control the control part (do not release; its indexes may be moved)
     * @param bulkLength the frame's bulk length, at least {@value FrameCodec#PRESIZE_THRESHOLD}
     */
    MemorySegment destination(ByteBuf control, int bulkLength);
}
