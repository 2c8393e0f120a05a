package io.tiffin.core.client;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;

/**
 * Whether the client is closed, and what a failed transfer means given that: a call after
 * {@link TiffinClient#close()} fails with {@code UNAVAILABLE_IN_CURRENT_STATUS}, and so does one whose bytes
 * were cut off by the close; an interrupted calling thread is told apart from a network failure.
 *
 * <p>Thread-safe (one volatile flag). Holds no resources.
 */
final class ClientLifecycle {
    private volatile boolean closed;

    boolean isClosed() {
        return closed;
    }

    void markClosed() {
        closed = true;
    }

    /**
     * Refuses a call once the client is closed.
     *
     * @throws TiffinException {@code UNAVAILABLE_IN_CURRENT_STATUS} once the client is closed
     */
    void checkOpen() {
        if (closed) {
            throw new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, "the client is closed");
        }
    }

    /**
     * The exception a caller sees when moving bytes for {@code what} failed with {@code cause}: the closed
     * client, the interrupted thread, the node's own answer (any code but RPC_FAIL and INTERNAL_ERROR), or
     * else {@code TRANSFER_FAIL}.
     */
    TiffinException transferFailure(String what, Throwable cause) {
        if (closed) {
            return new TiffinException(ErrorCode.UNAVAILABLE_IN_CURRENT_STATUS, what + ": the client was closed during"
                    + " the call", cause);
        }
        if (Thread.currentThread().isInterrupted() || causedBy(cause, java.nio.channels.ClosedByInterruptException.class)
                || causedBy(cause, InterruptedException.class)) {
            return new TiffinException(ErrorCode.TRANSFER_FAIL, what + ": the calling thread was interrupted and the"
                    + " transfer abandoned (not a network failure; the thread's interrupt flag is kept)", cause);
        }
        if (cause instanceof TiffinException t && t.code() != ErrorCode.RPC_FAIL && t.code() != ErrorCode.INTERNAL_ERROR) {
            return t;
        }
        return new TiffinException(ErrorCode.TRANSFER_FAIL, what + ": moving bytes to or from a node failed ("
                + (cause == null ? "unknown" : cause.getMessage()) + "); check that the nodes are reachable and retry", cause);
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
