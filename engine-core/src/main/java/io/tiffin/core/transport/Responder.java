package io.tiffin.core.transport;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.tiffin.api.ErrorCode;

/**
 * Sends the one response to one request. Thread-safe: may be called from any thread; exactly one of its
 * methods may be called once, a second answer throws {@link IllegalStateException}. Responses go out
 * in the order they are given, independent of the order requests arrived (the client matches them by
 * request id). If the connection has closed meanwhile the response is dropped silently.
 */
public interface Responder {

    /** Answers OK with {@code control} (null = empty control part) and no bulk bytes. */
    void ok(MessageLite control);

    /**
     * Answers OK with {@code control} and {@code bulk} bytes. Takes ownership of {@code bulk} (null =
     * none) in every case, including when it throws: the buffer is released after it has been written or
     * when the answer cannot be sent.
     */
    void ok(MessageLite control, ByteBuf bulk);

    /** Answers with the failure {@code code} (not OK) and an {@code ErrorReply} carrying {@code message}. */
    void fail(ErrorCode code, String message);

    /** Whether an answer has been given. */
    boolean isAnswered();
}
