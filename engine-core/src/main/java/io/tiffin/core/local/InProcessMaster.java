package io.tiffin.core.local;

import com.google.protobuf.MessageLite;
import io.tiffin.core.transport.Opcode;

/**
 * A master running in this JVM, as a client in the same JVM calls it: one request, one reply, on the
 * caller's thread, without the network (see {@link InProcessMasters}). The master implements it with the
 * same handlers, validation, leases and metrics as over a connection.
 *
 * <p>Implementations are thread-safe.
 */
public interface InProcessMaster {
    /**
     * Runs master operation {@code op}; returns its reply (null = an empty control part, as over the wire).
     *
     * @throws io.tiffin.api.TiffinException the failure the connection would have carried
     */
    MessageLite call(Opcode op, MessageLite request);

    /**
     * {@link #call}, except that a reply the master holds back (a PutEnd replacing a value other clients hold
     * cached, until their caches let go) completes the returned future when it is released, instead of the
     * calling thread waiting for it. The operation itself runs on the calling thread as with {@link #call}.
     *
     * @throws io.tiffin.api.TiffinException the operation's failure; a failure of the wait completes the
     *     future exceptionally
     */
    default java.util.concurrent.CompletableFuture<MessageLite> callWithoutWaiting(Opcode op, MessageLite request) {
        return java.util.concurrent.CompletableFuture.completedFuture(call(op, request));
    }
}
