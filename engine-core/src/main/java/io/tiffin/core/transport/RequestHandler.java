package io.tiffin.core.transport;

/**
 * Serves one opcode on a {@link TransportServer}.
 *
 * <p><b>Ownership of the request.</b> The server owns the request frame and releases it once {@link
 * #handle} returns or throws. A handler that needs the frame (or its {@link Frame#bulk() bulk} bytes)
 * after returning, for example because it answers asynchronously, must call {@link Frame#retain()}
 * before returning and {@link Frame#release()} exactly once when done. A handler that forwards the
 * request's bulk bytes into the response passes {@code request.bulk().retain()} (or a {@code
 * retainedSlice()}) to {@link Responder#ok(com.google.protobuf.MessageLite, io.netty.buffer.ByteBuf)}.
 *
 * <p><b>Answering.</b> The handler must answer through the {@link Responder} exactly once, from any
 * thread, now or later. If it throws, the server answers for it (a {@link io.tiffin.api.TiffinException}
 * becomes its code, anything else {@code INTERNAL_ERROR}) unless it had already answered.
 *
 * <p><b>Threading.</b> The handler runs on the executor given at registration; with a null executor it
 * runs on the connection's Netty event loop and must then never block. Implementations must be
 * thread-safe: calls for different requests run concurrently.
 */
@FunctionalInterface
public interface RequestHandler {
    void handle(Frame request, Responder responder) throws Exception;
}
