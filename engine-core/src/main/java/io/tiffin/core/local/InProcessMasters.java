package io.tiffin.core.local;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The masters running in this JVM, by the {@code host:port} addresses clients use for them. A client
 * with same-JVM shortcuts enabled ({@code client.local-memcpy}) that finds its master here calls it
 * directly ({@link InProcessMaster#call}) instead of over loopback TCP: the same handlers, validation,
 * leases and metrics, without the socket round trip and the two thread wake-ups. An embedded Tiffin
 * (master, node and client in one process) is the case this serves.
 *
 * <p>Thread-safe.
 */
public final class InProcessMasters {
    private static final ConcurrentHashMap<String, InProcessMaster> MASTERS = new ConcurrentHashMap<>();

    private InProcessMasters() {
    }

    /** Called by a master that starts serving on {@code addresses}. */
    public static void register(List<String> addresses, InProcessMaster rpc) {
        for (String a : addresses) {
            MASTERS.put(a, rpc);
        }
    }

    /** Called by a master that stops; removes only its own entries. */
    public static void unregister(List<String> addresses, InProcessMaster rpc) {
        for (String a : addresses) {
            MASTERS.remove(a, rpc);
        }
    }

    /** The master of this JVM listening on {@code hostPort}, or null. */
    public static InProcessMaster find(String hostPort) {
        return MASTERS.get(hostPort);
    }
}
