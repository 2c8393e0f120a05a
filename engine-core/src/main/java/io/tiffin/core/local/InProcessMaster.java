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
}
