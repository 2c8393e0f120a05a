package io.tiffin.core.transport;

import io.tiffin.api.ErrorCode;
import io.tiffin.api.TiffinException;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Protected mode (after Redis's): a server that would listen on an address reachable from other hosts
 * while a role is open to anyone (no token proves it: neither its own {@code transport.<role>-token} nor the
 * shared {@code transport.auth-token}), and without mutual TLS, refuses to start, since anyone who can
 * reach it could then read, overwrite or remove objects, mount nodes or remove everything. {@code --insecure}
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
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        try {
            InetAddress.getAllByName(h);
        } catch (UnknownHostException e) {
            // not a matter of credentials: say what is wrong with the address
            throw new TiffinException(ErrorCode.INVALID_PARAMS, "server " + serverName + " cannot listen on " + host
                    + ":" + port + ": the host does not resolve to an address (" + e.getMessage() + "); give an"
                    + " address or name of this machine, e.g. 127.0.0.1 or 0.0.0.0");
        }
        Credentials c = settings.credentials().current();
        String problem = c.any()
                ? "the " + c.openRoles().stream().map(Role::label).collect(java.util.stream.Collectors.joining(" and "))
                        + " role" + (c.openRoles().size() > 1 ? "s are" : " is") + " open to anyone (no token: "
                        + c.openRoles().stream().map(Role::tokenKey).collect(java.util.stream.Collectors.joining(", "))
                        + " and transport.auth-token are empty), so anyone who can reach it could act in "
                        + (c.openRoles().size() > 1 ? "those roles" : "that role") + ". Set "
                        + (c.openRoles().size() > 1 ? "those tokens" : "that token")
                : "no credentials are configured, so anyone who can reach it could read, overwrite or remove every"
                        + " object. Set transport.auth-token (the same secret on every master, node and client) or"
                        + " one token per role (transport.client-token, transport.node-token,"
                        + " transport.admin-token)";
        throw new TiffinException(ErrorCode.INVALID_PARAMS, "server " + serverName + " refuses to listen on " + host
                + ":" + port + ": that address is reachable from other hosts and " + problem + ", or"
                + " transport.tls.enabled = true with transport.tls.client-auth = require (mutual TLS); or bind to"
                + " 127.0.0.1; or accept the risk with --insecure (transport.insecure = true)");
    }

    /**
     * Whether every peer must prove who it is: every role has a token (its own or the shared one), or
     * servers demand a client certificate (mutual TLS).
     */
    public static boolean hasCredentials(TransportSettings settings) {
        return settings.credentials().current().openRoles().isEmpty() || settings.tls().requiresClientCertificates();
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
