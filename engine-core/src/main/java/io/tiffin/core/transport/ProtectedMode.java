package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Protected mode (after Redis's): a server that would listen on an address reachable from other hosts
 * with no credentials at all (no {@code transport.auth-token}, no mutual TLS) refuses to start, since
 * anyone who can reach it could read, overwrite or remove every object. {@code --insecure}
 * ({@code transport.insecure = true}) accepts that risk explicitly. Loopback addresses are always allowed.
 *
 * <p>Thread-safe (stateless).
 */
public final class ProtectedMode {
    private ProtectedMode() {
    }

    /**
     * Checks that server {@code serverName} may listen on {@code host:port} with {@code settings}.
     *
     * @throws TiffinException {@code INVALID_PARAMS} saying which setting to add when it may not
     */
    public static void check(String serverName, String host, int port, TransportSettings settings) {
        if (settings.insecure() || hasCredentials(settings) || isLoopback(host)) {
            return;
        }
        throw new TiffinException(ErrorCode.INVALID_PARAMS, "server " + serverName + " refuses to listen on " + host
                + ":" + port + ": that address is reachable from other hosts and no credentials are configured, so"
                + " anyone who can reach it could read, overwrite or remove every object. Set transport.auth-token"
                + " (the same secret on every master, node and client), or transport.tls.enabled = true with"
                + " transport.tls.client-auth = require (mutual TLS); or bind to 127.0.0.1; or accept the risk with"
                + " --insecure (transport.insecure = true)");
    }

    /** Whether peers must prove who they are: a shared token, or a client certificate (mutual TLS). */
    public static boolean hasCredentials(TransportSettings settings) {
        return settings.hasAuthToken() || settings.tls().requiresClientCertificates();
    }

    /**
     * Whether {@code host} names only this machine: a loopback address or a name resolving to one. A
     * wildcard ({@code 0.0.0.0}, {@code ::}) and a name that does not resolve are not.
     */
    public static boolean isLoopback(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        try {
            InetAddress[] all = InetAddress.getAllByName(h);
            for (InetAddress a : all) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return all.length > 0;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
